"""Find the commit that moved Table 1's rows under the authors' settings (a one-off of the research record).

`python research/bisect_table1.py GOOD BAD [--workdir DIR]` bisects the first-parent history GOOD..BAD of this checkout:
each probed commit is exported (`git archive`) and runs ODGPSSM's ballbeam seed 0 for 2 epochs of the authors'
settings (`python -m gpssm_np.cli reproduce table1 --models odgpssm --datasets ballbeam --seeds 1 --epochs 2`) with the
export first on the path; a commit whose final loss and scores equal GOOD's to every digit is good. Prints each probe
and the first bad commit. research/ablation_plan.md, "Table 1's GP models rerun with the authors' settings".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SCORES = ("final_loss", "rmse", "nlpd", "coverage95")


def probe(commit, workdir):
    """The scores of the probe run at ``commit``, as {(protocol, score): value}."""
    src = os.path.join(workdir, commit)
    if not os.path.isdir(src):
        os.makedirs(src)
        archive = subprocess.run(["git", "archive", commit], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    out = os.path.join(src, "probe_out")
    result = os.path.join(out, "table1.json")
    if not os.path.exists(result):
        env = dict(os.environ, PYTHONPATH=src)
        subprocess.run([sys.executable, "-m", "gpssm_np.cli", "reproduce", "table1", "--models", "odgpssm",
                        "--datasets", "ballbeam", "--seeds", "1", "--epochs", "2", "--out", out],
                       cwd=src, env=env, check=True, capture_output=True)
    with open(result) as f:
        rows = json.load(f)["runs"]
    return {(r["protocol"], s): r[s] for r in rows for s in SCORES if s in r}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("good")
    ap.add_argument("bad")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "bisect_table1"))
    args = ap.parse_args()
    commits = subprocess.run(["git", "rev-list", "--first-parent", "--reverse", f"{args.good}..{args.bad}"],
                             check=True, capture_output=True, text=True).stdout.split()
    reference = probe(args.good, args.workdir)
    lo, hi = -1, len(commits) - 1  # commits[lo] good (-1: GOOD itself), commits[hi] bad
    print(f"{len(commits)} commits; GOOD {args.good}: {reference}", flush=True)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        scores = probe(commits[mid], args.workdir)
        same = all(scores.get(k) == v for k, v in reference.items())
        print(f"{commits[mid][:9]} ({mid + 1} of {len(commits)}): {'good' if same else 'bad'}", flush=True)
        if same:
            lo = mid
        else:
            hi = mid
    print(f"first bad commit: {commits[hi]}")
    subprocess.run(["git", "log", "-1", "--format=%h %ad %s", commits[hi]])


if __name__ == "__main__":
    main()
