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
SWEEP_FILES = {"table1": "table1", "table1_prssm_style": "table1", "qstudy": "table1", "car_tracking": "car_tracking"}
BLOCK = re.compile(r"(<!-- include (?P<path>\S+) -->\n).*?(<!-- end include -->)", re.S)


def demote(text):
    """Headings one level deeper (the summaries start at ###, results.md sections at ##)."""
    return re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)


def rebuild_summaries(folder=os.path.join(HERE, "results"), sweep_files=SWEEP_FILES):
    """Rewrite ``<stem>.md`` from ``<stem>.json`` in ``folder`` for every file of ``sweep_files`` (stem -> module)
    present; returns the count."""
    from gpssm_np.experiments import car_tracking, table1

    modules = {"table1": table1, "car_tracking": car_tracking}
    count = 0
    for stem, module_name in sweep_files.items():
        module = modules[module_name]
        document = module.read_document(os.path.join(folder, f"{stem}.json"))
        if document is None:
            continue
        with open(os.path.join(folder, f"{stem}.md"), "w") as fh:
            fh.write(module.markdown(document))
        count += 1
    return count


def build(path=os.path.join(HERE, "results.md")):
    """Fill every include block of the page ``path`` with its file (a path relative to the page's folder); returns
    the number of blocks."""
    with open(path) as fh:
        page = fh.read()

    def fill(match):
        with open(os.path.join(os.path.dirname(path), match.group("path"))) as fh:
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
