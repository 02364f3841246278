"""Row files of the research scripts: JSON lines, one per fitted cell, appended as cells finish so that a run
resumes where it stopped. Nothing in the package imports this module."""
import json
import os
import subprocess


def done_keys(out, *fields, missing=None):
    """The keys of the rows already in the row file ``out`` (an empty set when it does not exist): tuples of the
    rows' values of ``fields``, or the values themselves for one field; a field a row lacks reads as ``missing``. A
    resumable run skips these cells."""
    if not os.path.exists(out):
        return set()
    with open(out) as f:
        rows = [json.loads(line) for line in f]
    if len(fields) == 1:
        return {r.get(fields[0], missing) for r in rows}
    return {tuple(r.get(k, missing) for k in fields) for r in rows}


def head_commit():
    """The short hash of the checkout's HEAD, which each row names as the code that wrote it."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
