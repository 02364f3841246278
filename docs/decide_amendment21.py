"""Amendment 21's decision (docs/ablation_plan.md) from docs/results/ablation21.jsonl and the `ema` / `ema_slowlin`
rows of docs/results/ablation.jsonl (which part (a) must reproduce): ``python docs/decide_amendment21.py``."""
import json

import numpy as np
rows = [json.loads(l) for l in open('docs/results/ablation21.jsonl')]
R = {(r['dataset'], r['config'], r['seed']): r for r in rows}
base = {(r['dataset'], r['config'], r['seed']): r for r in map(json.loads, open('docs/results/ablation.jsonl'))
        if r['config'] in ('ema', 'ema_slowlin') and r['seed'] in (0, 1)}
# reproduction check of part (a)
for k, r in R.items():
    if r['part'] == 'a' and k in base:
        same = abs(r['held_out'] - base[k]['held_out']) < 1e-9
        print('reproduce', k, round(r['held_out'], 6), round(base[k]['held_out'], 6), same)


def keep_slow(a, b):
    d = np.array(a['windows']) - np.array(b['windows'])
    W = len(d)
    if W < 2:
        return False, W, "one window"
    se = d.std(ddof=1) / np.sqrt(W // 2)
    return bool(d.mean() > 2 * se), W, f"t={d.mean() / se:.2f}" if se > 0 else "the same run"



ONE_WINDOW = ['actuator', 'ballbeam', 'drive', 'dryer', 'gas_furnace', 'sim_linear', 'sim_tanks', 'dryer2']
logs = [0.0] * len(ONE_WINDOW)
names = list(dict.fromkeys(r['dataset'] for r in rows))
for n in names:
    kept, base_ho, info = [], [], []
    for s in (0, 1):
        a, b = R.get((n, 'ema', s)), R.get((n, 'ema_slowlin', s))
        if a is None or b is None: break
        ks, W, t = keep_slow(a, b)
        kept.append(b if ks else a)
        base_ho.append(a['held_out'])
        info.append(f"{'slow' if ks else 'ema'} (W={W}, {t})")
    if len(kept) < 2: print('incomplete', n); continue
    mb, mk = np.mean(base_ho), np.mean([k['held_out'] for k in kept])
    ms = np.mean([R[(n, 'ema_slowlin', s)]['held_out'] for s in (0, 1)])
    logs.append(np.log(mk / mb))
    print(f"| {n} | {mb:.4f} | {ms:.4f} | {mk:.4f} | {mk/mb:.3f} | {'; '.join(info)} |")
print(len(logs), 'cells; geo mean %.3f' % np.exp(np.mean(logs)), 'max %.3f' % np.exp(max(logs)))
