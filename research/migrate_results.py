"""One-off migration of the result files in docs/results/ to per-row provenance (run once; kept as the record of
how their provenance was filled in).

Before this migration a sweep file had one ``versions`` and one ``command`` for all its rows, overwritten by every
resumed invocation, and rows had no key. The migration keeps every number as it was and gives each row:

* ``code = "legacy"`` (never equal to a current code version, so a new sweep reuses these rows only with
  ``--allow-mixed-versions``) and ``config_key`` of the file-level settings (protocol options: the defaults of the
  time, 100-step windows, at most 6, 100 burn-in steps);
* ``provenance``: the file-level versions (which belong to the file's last invocation), the commit and command where
  docs/results.md states them (``STATED`` below, marked with their source), else the file's own, and the row's
  wall time (``seconds``); start and end times were never recorded (None).

The file-level ``versions`` and ``command`` move into ``invocations[0]`` (marked legacy). Usage:
``python research/migrate_results.py`` (files already migrated are left as they are).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from gpssm_np.experiments import car_tracking, runs, table1  # noqa: E402

SOURCE = "docs/results.md (the commits and commands it names for these results)"
_GP_COMMAND = ("GPSSM_NP_DATA=../shared/data gpssm-np -v reproduce table1 --models odgpssm prssm arx lgssm --seeds 5 "
               "--jobs 2 --out docs/results")
_DSSM_COMMAND = ("GPSSM_NP_DATA=../shared/data gpssm-np -v reproduce table1 --models dssm --seeds 5 --jobs 2 "
                 "--out docs/results")
_PRSSM_STYLE_COMMAND = ("GPSSM_NP_DATA=../shared/data gpssm-np -v reproduce table1 --settings prssm_style --name "
                        "table1_prssm_style --models odgpssm prssm --seeds 5 --jobs 2 --out docs/results")
_Q_COMMAND = "GPSSM_NP_DATA=../shared/data gpssm-np -v reproduce qstudy --seeds 2 --jobs 2 --out docs/results"
STATED = {
    "table1": {**{m: {"commit": "f4c51d2", "command": _GP_COMMAND, "source": SOURCE}
                  for m in ("odgpssm", "prssm", "arx", "lgssm")},
               "dssm": {"commit": "028f932", "command": _DSSM_COMMAND, "source": SOURCE}},
    "table1_prssm_style": {m: {"commit": "6eab4f5", "command": _PRSSM_STYLE_COMMAND, "source": SOURCE}
                           for m in ("odgpssm", "prssm")},
    "qstudy": {f"odgpssm_q{q}": {"commit": "f13fad8", "command": _Q_COMMAND, "source": SOURCE} for q in range(1, 9)},
    "car_tracking": {m: {"commit": None, "command": "gpssm-np reproduce car --seeds 5 --out docs/results",
                         "source": SOURCE + "; the run's commit was not recorded (the file was committed in 6d2ce3f)"}
                     for m in ("odgpssm", "prssm")},
}


def migrate(name):
    path = os.path.join(HERE, "results", f"{name}.json")
    with open(path) as fh:
        original = json.load(fh)
    if all("provenance" in row for row in original["runs"]):
        return False
    if name == "car_tracking":
        config = {"settings": dict(car_tracking.CAR_TRACKING_SETTINGS, epochs=original["epochs"], T=original["T"])}
        head = {"config": config, "config_key": runs.config_key(config), "epochs": original["epochs"],
                "T": original["T"]}
    else:
        config = table1.legacy_config(original)
        head = {"config": config, "config_key": runs.config_key(config), "settings": original["settings"]}
    rows = runs.legacy_rows(original, config, STATED[name])
    document = dict(head, runs=rows, superseded_runs=[],
                    invocations=[{"legacy": True, "command": original.get("command"),
                                  "versions": original.get("versions"), "wall_seconds": original.get("wall_seconds"),
                                  "note": "file-level fields before the migration (the last invocation's)"}],
                    wall_seconds=original.get("wall_seconds"))
    with open(path, "w") as fh:
        fh.write(runs.dumps(document))
    return True


if __name__ == "__main__":
    for name in STATED:
        print(f"{name}: {'migrated' if migrate(name) else 'already migrated'}")
