"""Put the rows of some models from a fresh sweep file in place of theirs in a committed one (a one-off of the research
record; nothing in the package imports it).

``python research/replace_sweep_rows.py FRESH.json COMMITTED.json --models arx lgssm`` moves the committed rows of
those models to ``superseded_runs`` (kept, never in a table), adds the fresh file's rows of those models and its
invocations, checks that both files hold the same configuration (``config_key``), and writes the committed file and
its Markdown summary (``experiments.table1.markdown``) again. Used where a sweep's cheap rows (the linear models,
which draw no training noise) are rerun with newer code while its GP rows stay those of their commits; each row
keeps its own provenance. ``--protocols envi simulate`` limits both sides to those protocols' rows: a rerun that
repeats the committed rows of the other protocols adds the protocols they predate, the rest of the file untouched.
"""
import argparse
import json
import os

from gpssm_np.experiments.runs import dumps
from gpssm_np.experiments.table1 import markdown


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fresh")
    parser.add_argument("committed")
    parser.add_argument("--models", nargs="+", required=True)
    parser.add_argument("--protocols", nargs="+", help="only these protocols' rows (default: every protocol)")
    args = parser.parse_args()
    with open(args.fresh) as f:
        fresh = json.load(f)
    with open(args.committed) as f:
        committed = json.load(f)
    if fresh["config_key"] != committed["config_key"]:
        raise SystemExit(f"the files hold other configurations: {fresh['config_key']} != {committed['config_key']}")
    models = set(args.models)

    def chosen(row):
        return row["model"] in models and (args.protocols is None or row["protocol"] in args.protocols)

    new_rows = [r for r in fresh["runs"] if chosen(r)]
    if {r["model"] for r in new_rows} != models:
        raise SystemExit(f"{args.fresh} lacks rows of {sorted(models - {r['model'] for r in new_rows})}")
    replaced = [r for r in committed["runs"] if chosen(r)]
    committed["runs"] = [r for r in committed["runs"] if not chosen(r)] + new_rows
    committed["superseded_runs"] = committed.get("superseded_runs", []) + replaced
    committed["invocations"] = committed.get("invocations", []) + fresh["invocations"]
    committed["wall_seconds"] = committed.get("wall_seconds", 0.0) + fresh.get("wall_seconds", 0.0)
    with open(args.committed, "w") as f:
        f.write(dumps(committed))
    with open(os.path.splitext(args.committed)[0] + ".md", "w") as f:
        f.write(markdown(committed))
    print(f"{len(new_rows)} rows of {sorted(models)} ({', '.join(args.protocols or ['every protocol'])}) in place of "
          f"{len(replaced)}, which are now superseded")


if __name__ == "__main__":
    main()
