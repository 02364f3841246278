"""Which model class forecasts a plant beyond the linear models, on training data only: on the 70/30 cut of a set's
training half (``defaults_check.held_out_cut``), ARX() and LGSSM(dim_x="auto"), the default ODGPSSM and PRSSM (seed
0), and PRSSM and ODGPSSM under the PR-SSM-style configuration fixed in advance (``PRSSM_STYLE_SETTINGS``: identity
mean, small process noise, the authors' 70 epochs), each scored on the last 30 % under causal and simulate. One JSON
line per set and model. "prssm_style_plain" is PRSSM in that configuration without the authors' per-data-set kernel
initialisation (``registry.ARD_INIT_DATASETS``: lengthscale 2 and outputscale 0.5 on ballbeam and drive), which a
default fit cannot use; give model names after ``--models`` to run only those.

Run: python research/probe_model_class.py OUT.jsonl drive [ballbeam ...] [--models prssm_style_plain ...]
This script is the research record's; nothing in the package imports it.
"""
import dataclasses
import json
import sys
import time

import gpssm_np as gp
from gpssm_np.models.registry import PRSSM_STYLE_SETTINGS, make_model

from defaults_check import held_out_cut

MODELS = ("arx", "lgssm", "odgpssm_default", "prssm_default", "prssm_style", "odgpssm_style", "prssm_style_plain")
LOOP = ("seq_len", "stride", "batch_size", "lr", "num_samples")


def fitted(who, ds):
    dy, du = ds.y_train.shape[1], ds.u_train.shape[1]
    if who == "arx":
        return gp.ARX(dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train)
    if who == "lgssm":
        return gp.LGSSM(dim_x="auto", dim_y=dy, dim_u=du).fit(ds.y_train, ds.u_train)
    if who.endswith("_default"):
        cls = gp.ODGPSSM if who.startswith("odgpssm") else gp.PRSSM
        return cls(dim_y=dy, dim_u=du, seed=0).fit(ds.y_train, ds.u_train, progress=False)
    s = PRSSM_STYLE_SETTINGS
    if who.endswith("_plain"):  # a name outside ARD_INIT_DATASETS: the model's own kernel initialisation
        ds = dataclasses.replace(ds, name=ds.name + "_cut")
    model = make_model(who.split("_")[0], ds, 0, s)
    return model.fit(ds.y_train, ds.u_train, plan={k: s[k] for k in LOOP}, epochs=s["epochs"], progress=False)


if __name__ == "__main__":
    out, args = sys.argv[1], sys.argv[2:]
    names, models = (args[:args.index("--models")], args[args.index("--models") + 1:]) if "--models" in args \
        else (args, MODELS[:-1])
    for name in names:
        ds = held_out_cut(name)
        for who in models:
            start = time.perf_counter()
            model = fitted(who, ds)
            row = {"data": name, "model": who, "fit_seconds": time.perf_counter() - start}
            sel = getattr(model, "selection_", None)
            if sel:
                row.update(gp_part=sel["gp_part"], floor=sel["floor"]["kind"], t=sel["t"])
            for protocol in ("causal", "simulate"):
                row[protocol] = gp.evaluate(model, ds, protocol, seed=0)["rmse"]
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
