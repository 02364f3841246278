"""Row files of the research scripts: JSON lines, one per fitted cell, appended as cells finish so that a run
resumes where it stopped. Nothing in the package imports this module."""
import argparse
import json
import os
import subprocess
import sys


def done_keys(out, *fields, missing=None, final=lambda row: True):
    """The keys of the rows already in the row file ``out`` (an empty set when it does not exist): tuples of the
    rows' values of ``fields``, or the values themselves for one field; a field a row lacks reads as ``missing``; a
    row that ``final`` rejects is left out. A resumable run skips these cells."""
    if not os.path.exists(out):
        return set()
    with open(out) as f:
        rows = [r for r in map(json.loads, f) if final(r)]
    if len(fields) == 1:
        return {r.get(fields[0], missing) for r in rows}
    return {tuple(r.get(k, missing) for k in fields) for r in rows}


def head_commit():
    """The short hash of the checkout's HEAD, which each row names as the code that wrote it."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()


def pending(out, mine, key=lambda cell: cell, reverse=False, final=lambda row: True):
    """The cells of ``mine`` whose row the row file ``out`` lacks (``key``: a cell's (data, variant, seed)), in
    order, or last first with ``reverse``; the file is read again before each cell, because a second worker taking
    the same cells from the other end adds rows to it. A row that ``final`` rejects counts as lacking (the cell is
    fitted again) unless a later row of the cell is final."""
    for cell in reversed(mine) if reverse else mine:
        if key(cell) not in done_keys(out, "data", "variant", "seed", final=final):
            yield cell


def worker_main(description, run, decide, add_arguments=None):
    """The entry point of a decision script whose cells workers share. Its command line: the row file, ``--worker``
    k of ``--workers`` (every workers-th cell from the k-th), ``--reverse`` (the worker's cells last first, so that a
    second process can share them) and ``--decide``, and what ``add_arguments(parser)`` adds; then ``decide(out)``
    with ``--decide``, else ``run(out, worker, workers, reverse)``, each also given the added arguments by name."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("out")
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--reverse", action="store_true", help="this worker's cells last first")
    parser.add_argument("--decide", action="store_true")
    if add_arguments is not None:
        add_arguments(parser)
    args = vars(parser.parse_args())
    out, worker, workers, reverse, by_decide = (args.pop(k) for k in ("out", "worker", "workers", "reverse", "decide"))
    if by_decide:
        decide(out, **args)
    else:
        run(out, worker, workers, reverse, **args)


def run_or_summarise(run, summary, workers=1):
    """The command line of a script whose ``run(out)`` appends its rows to the file ``out`` (with ``workers`` > 1,
    ``run(out, worker)``, ``--worker K`` taking every other cell); with ``--summary``, ``summary(out)`` reads them
    instead."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    if workers > 1:
        parser.add_argument("--worker", type=int, choices=range(workers), default=0,
                            help="every other cell, from this one")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
    else:
        run(args.out, args.worker) if workers > 1 else run(args.out)


def readings_main(description, names, reading, summary, note, argv=None):
    """The command line of a reading per data set: ``OUT [--data NAME ...] [--summary]``; ``reading(name)`` returns a
    set's row, appended to OUT as it finishes (resumable: the sets whose row is in are skipped; ``names``: the
    default sets) and printed with ``note(row)``; ``--summary`` calls ``summary(OUT)`` instead."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("out")
    p.add_argument("--data", nargs="+", default=names)
    p.add_argument("--summary", action="store_true")
    args = p.parse_args(argv)
    if args.summary:
        summary(args.out)
        return
    done = done_keys(args.out, "data")
    for name in args.data:
        if name not in done:
            row = reading(name)
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(name, note(row), file=sys.stderr, flush=True)
