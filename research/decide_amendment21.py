"""Amendment 21's decision (research/ablation_plan.md) from research/results/history/ablation21.jsonl and the
``ema`` / ``ema_slowlin`` rows of research/results/history/ablation.jsonl, which part (a) must reproduce. Run from the
repository root: ``python research/decide_amendment21.py``.

Rule: per fit, the slow linear part is kept only if its per-window validation RMSEs beat the default's by more
than two standard errors of the mean paired difference, over W // 2 effectively independent windows (W >= 2).
The eight sets whose validation block holds one window keep the default by the rule (ratio 1). Rows of the
package's default fit (config "default", added when the rule was built into ``fit``) are checked against the
rule's pick."""
import json

import numpy as np

from gpssm_np.models.training import paired_t, switches

ONE_WINDOW = ("actuator", "ballbeam", "drive", "dryer", "gas_furnace", "sim_linear", "sim_tanks", "dryer2")


def read(path):
    with open(path) as fh:
        return [json.loads(line) for line in fh]


def keep_slow(default, slow):
    """(keep the slow run?, W, a label with the paired t statistic) of two runs' per-window validation RMSEs: the
    package's rule (``models.training.paired_t``, step 8 there)."""
    W = len(default["windows"])
    if W < 2:
        return False, W, "one window"
    t = paired_t(default["windows"], slow["windows"])
    return switches(default["windows"], slow["windows"]), W, f"t={t:.2f}" if t else "the same run"


def check_package_default(runs):
    """The package's default fit since amendment 21 (config "default", part (b)) keeps the candidate the rule keeps
    (its ``lr_scale``), with that run's held-out RMSE up to the floating-point differences between machines (the
    rows of 076e09e were computed on another machine than the default's)."""
    for (name, config, seed), row in runs.items():
        if config == "default":
            switch = keep_slow(runs[(name, "ema", seed)], runs[(name, "ema_slowlin", seed)])[0]
            pick = runs[(name, "ema_slowlin" if switch else "ema", seed)]
            same = bool(row["lr_scale"]) == switch
            print(f"package default {name} seed {seed}: kept {row['lr_scale'] or 'the plain step'} (the rule's pick: "
                  f"{pick['config']}, {'the same' if same else 'NOT the same'}); held out {row['held_out']:.4f} "
                  f"against {pick['held_out']:.4f}")


def main():
    rows = read("research/results/history/ablation21.jsonl")
    runs = {(r["dataset"], r["config"], r["seed"]): r for r in rows}
    earlier = {(r["dataset"], r["config"], r["seed"]): r for r in read("research/results/history/ablation.jsonl")
               if r["config"] in ("ema", "ema_slowlin") and r["seed"] in (0, 1)}
    for key, r in runs.items():  # part (a) reproduces the ablation's rows
        if r["part"] == "a" and key in earlier:
            same = abs(r["held_out"] - earlier[key]["held_out"]) < 1e-9
            print("reproduce", key, round(r["held_out"], 6), round(earlier[key]["held_out"], 6), same)
    check_package_default(runs)
    logs = [0.0] * len(ONE_WINDOW)
    for name in dict.fromkeys(r["dataset"] for r in rows if r["config"] != "default"):
        pairs = [(runs.get((name, "ema", s)), runs.get((name, "ema_slowlin", s))) for s in (0, 1)]
        if any(a is None or b is None for a, b in pairs):
            print("incomplete", name)
            continue
        kept, info = [], []
        for default, slow in pairs:
            switch, W, label = keep_slow(default, slow)
            kept.append(slow if switch else default)
            info.append(f"{'slow' if switch else 'ema'} (W={W}, {label})")
        base = np.mean([a["held_out"] for a, _ in pairs])
        chosen = np.mean([k["held_out"] for k in kept])
        slow_only = np.mean([b["held_out"] for _, b in pairs])
        logs.append(np.log(chosen / base))
        print(f"| {name} | {base:.4f} | {slow_only:.4f} | {chosen:.4f} | {chosen / base:.3f} | {'; '.join(info)} |")
    print(len(logs), "cells; geo mean %.3f" % np.exp(np.mean(logs)), "max %.3f" % np.exp(max(logs)))


if __name__ == "__main__":
    main()
