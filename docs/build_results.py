"""Rebuild the Markdown summaries docs/results/*.md from the sweeps' JSON files (no sweep is re-run) and copy them
into docs/results.md.

The JSON files hold every run's numbers and provenance (``gpssm_np/experiments/runs.py``: one row per protocol or
model, each with its key and provenance; files written before that were migrated by ``research/migrate_results.py``
and are read as legacy rows). ``table1.markdown`` and ``car_tracking.markdown`` turn a document into its summary.

docs/results.md holds the prose; each summary sits between an include marker and an end marker::

    <!-- include results/table1.md -->
    ...replaced by the file's text, its headings one level deeper...
    <!-- end include -->

Run after a sweep: ``python docs/build_results.py``. Nothing else in docs/results.md changes.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
#: Summaries rebuilt from their JSON: file stem -> which module's ``markdown`` renders it.
SWEEP_FILES = {"table1": "table1", "table1_prssm_style": "table1", "table1_default": "table1", "qstudy": "table1",
               "mimo": "table1", "car_tracking": "car_tracking", "table1_enkf": "table1",
               "table1_prior_objective": "table1", "qstudy_mimo": "table1", "mimo5": "table1",
               "mimo_auto": "table1", "table1_auto": "table1", "mimo_widen": "table1", "table1_widen": "table1",
               "mimo_ws": "table1", "mimo_linear": "table1", "table1_linear": "table1",
               "qstudy_steamgen_linear": "table1", "mimo_ema": "table1", "table1_ema": "table1",
               "mimo_a21": "table1", "qstudy_steamgen_a21": "table1", "qstudy_winding_a21": "table1"}
BLOCK = re.compile(r"(<!-- include (?P<path>\S+) -->\n).*?(<!-- end include -->)", re.S)


def demote(text):
    """Headings one level deeper (the summaries start at ###, results.md sections at ##)."""
    return re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)


def rebuild_summaries(folder=os.path.join(HERE, "results")):
    """Rewrite ``<stem>.md`` from ``<stem>.json`` for every file of :data:`SWEEP_FILES` present; returns the count."""
    from gpssm_np.experiments import car_tracking, table1

    modules = {"table1": table1, "car_tracking": car_tracking}
    count = 0
    for stem, module_name in SWEEP_FILES.items():
        module = modules[module_name]
        document = module.read_document(os.path.join(folder, f"{stem}.json"))
        if document is None:
            continue
        with open(os.path.join(folder, f"{stem}.md"), "w") as fh:
            fh.write(module.markdown(document))
        count += 1
    return count + rebuild_held_out_comparison(folder)


def rebuild_held_out_comparison(folder):
    """``ablation_linear.md``: the GP ablation's held-out scores beside the linear baselines' (``ablation.jsonl``,
    ``ablation_linear.jsonl``); returns 1, or 0 when a file is missing."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "research"))
    import ablation  # research/ablation.py, the research record's
    from gpssm_np.experiments import runs

    rows = {stem: runs.read_jsonl(os.path.join(folder, f"{stem}.jsonl")) for stem in ("ablation", "ablation_linear")}
    if not all(rows.values()):
        return 0
    with open(os.path.join(folder, "ablation_linear.md"), "w") as fh:
        fh.write(ablation.held_out_comparison(rows["ablation"], rows["ablation_linear"]))
    return 1


def build(path=os.path.join(HERE, "results.md")):
    with open(path) as fh:
        page = fh.read()

    def fill(match):
        with open(os.path.join(HERE, match.group("path"))) as fh:
            body = demote(fh.read().strip())
        return f"{match.group(1)}{body}\n{match.group(3)}"

    new, count = BLOCK.subn(fill, page)
    with open(path, "w") as fh:
        fh.write(new)
    return count


if __name__ == "__main__":
    print(f"rebuilt {rebuild_summaries()} summaries from their JSON")
    print(f"filled {build()} include blocks")
    sys.exit(0)
