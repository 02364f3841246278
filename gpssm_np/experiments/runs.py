r"""What the sweeps share: the key of a run, its provenance, and which rows of an earlier result file a resumed
sweep may reuse.

A *run* is one unit of work of a sweep (Table 1: one model trained on one data set with one seed, then evaluated
under every protocol; car tracking: both models on one seed), stored as one or more rows of the sweep's JSON file
(one per protocol, or per model). Its **key** is everything that determines its numbers:

* its identity (e.g. dataset, model, seed);
* the configuration (``config``): the settings' name and every one of their values, and the protocol options;
* the code version (:func:`code_version`): the git commit of the package, with a hash of any uncommitted change to
  its sources.

Every row records the key's parts (``config_key``, ``code``) and its own **provenance** (:func:`provenance`): code
version and commit, versions of the libraries, machine, command, start and end time (UTC) and wall time of its run. A
resumed sweep (:func:`reconcile`) reuses a finished run of an earlier file only if its configuration and code version
are those asked for; rows of another configuration move to ``superseded_runs`` (kept, never in a table, and reused where
a later sweep asks for that configuration again with the same code: :func:`revive`); finished runs of another code
version stop the sweep with an error unless ``allow_mixed_versions`` (then they are reused, each keeping its own
commit). Files written before rows had keys are read as *legacy* (:func:`legacy_rows`): their rows get the file-level
versions and command as provenance and the code version ``"legacy"``, which never equals a current one.

The smaller experiments (simulated systems, filter comparison) stream one JSON line per run instead
(:func:`jsonl_sweep`), keyed on their cell and the git commit.
"""
import datetime
import hashlib
import json
import os
import platform
import subprocess

from .._versions import versions
from ..archive import atomic_write

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY = "legacy"


def _git(*args):
    try:
        out = subprocess.run(["git", "-C", PACKAGE_DIR, *args], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def code_version():
    """The version of the code that runs: ``<commit>`` of the git checkout the package is imported from,
    ``<commit>+dirty.<hash>`` when the package's sources differ from that commit (the hash covers the diff and the
    untracked files, so two different uncommitted states never share a version), or ``gpssm_np <version>`` outside
    a git checkout."""
    commit = _git("rev-parse", "HEAD")
    if not commit:
        from .. import __version__

        return f"gpssm_np {__version__}"
    commit = commit.decode().strip()
    diff = _git("diff", "HEAD", "--no-ext-diff", "--binary", "--", ".") or b""
    untracked = [name for name in (_git("ls-files", "--others", "--exclude-standard", "--", ".") or b"").split()
                 if not name.endswith(b".pyc") and b"__pycache__" not in name]
    if not diff and not untracked:
        return commit
    digest = hashlib.sha256(diff)
    for name in sorted(untracked):
        digest.update(name + b"\0")
        try:
            with open(os.path.join(PACKAGE_DIR, name.decode()), "rb") as fh:
                digest.update(fh.read())
        except OSError:
            pass
    return f"{commit}+dirty.{digest.hexdigest()[:12]}"


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine():
    """The machine a run ran on: host name, CPU model, core count, platform."""
    return {"node": platform.node(), "cpu": _cpu_model(), "cpu_count": os.cpu_count(), "platform": platform.platform()}


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def provenance(started, wall_seconds, command):
    """The provenance of a run that started at ``started`` (UTC ISO string) and took ``wall_seconds``; measured in
    the process that ran it (a Dask worker may be another machine)."""
    info = versions()
    return {"code": code_version(), "commit": info.get("git_commit"), "versions": info, "machine": machine(),
            "command": command, "started": started, "finished": utc_now(), "wall_seconds": wall_seconds}


def config_key(config):
    """A short hash of a configuration dict (canonical JSON)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def legacy_rows(document, config, stated=None):
    """The rows of a sweep file written before rows had keys, each with ``config_key`` from ``config`` (the
    configuration the file says it ran), the code version ``"legacy"`` and the file-level versions and command as
    its provenance. ``stated``: optional {model: {"commit": ..., "command": ..., "source": ...}} known from
    elsewhere (e.g. docs/results.md), recorded with its source; otherwise the file's last command is recorded,
    marked as such."""
    rows = []
    file_versions = document.get("versions") or {}
    for row in document.get("runs", []):
        if "provenance" in row:
            rows.append(row)
            continue
        known = (stated or {}).get(row.get("model"), {})
        prov = {"code": LEGACY, "commit": known.get("commit") or file_versions.get("git_commit"),
                "versions": file_versions, "machine": {"platform": file_versions.get("platform"),
                                                       "cpu_count": file_versions.get("cpu_count")},
                "command": known.get("command", document.get("command")), "started": None, "finished": None,
                "wall_seconds": row.get("seconds"),
                "note": "legacy row, written before rows had their own provenance: versions are the file's; "
                        + (f"commit and command from {known['source']}" if known.get("source") else
                           "the command is the file's last invocation")}
        rows.append(dict(row, config_key=config_key(config), code=LEGACY, provenance=prov))
    return rows


def read_sweep_file(path, row_keys=()):
    """The JSON document of an earlier sweep at ``path``, or None where there is none; a ValueError naming the file
    where it is not a sweep's (a sweep never overwrites it): not JSON, not an object with a list of ``runs``, or a
    row (of ``runs`` or ``superseded_runs``) that is not an object with the keys ``row_keys``."""
    if not os.path.exists(path):
        return None
    try:
        with open(path) as fh:
            document = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"out: {path} is not a sweep's JSON file ({err}); move it away, or write to another --out "
                         "(or --name)") from None
    rows = document.get("runs") if isinstance(document, dict) else None
    superseded = document.get("superseded_runs", []) if isinstance(document, dict) else None
    if not (isinstance(rows, list) and isinstance(superseded, list)
            and all(isinstance(r, dict) and set(row_keys) <= set(r) for r in rows + superseded)):
        raise ValueError(f"out: {path} is not a sweep's JSON file (an object whose 'runs' are rows with the keys "
                         f"{list(row_keys)}); move it away, or write to another --out (or --name)")
    return document


def revive(document, config, code):
    """(rows, superseded): the ``runs`` of an earlier sweep ``document`` with those of its ``superseded_runs`` that
    have ``config`` and ``code`` (a sweep switched back to settings it ran before reuses them), and the rest of its
    superseded rows. :func:`reconcile` then sorts the rows."""
    want = config_key(config)
    superseded = document.get("superseded_runs", [])
    same = [r.get("config_key") == want and r.get("code") == code for r in superseded]
    again = [r for r, s in zip(superseded, same) if s]
    return document.get("runs", []) + again, [r for r, s in zip(superseded, same) if not s]


def reconcile(rows, identity, part, parts, config, code, allow_mixed_versions, path):
    """Sort the rows of an earlier sweep file for a sweep with ``config`` and ``code``.

    ``identity(row)`` gives the run a row belongs to (e.g. (dataset, model, seed)), ``part(row)`` which of the
    run's ``parts`` it is (e.g. its protocol). Returns (kept, superseded, done): the rows of finished runs with this
    configuration (of this code version, or of any with ``allow_mixed_versions``; one run per identity, this
    code's first), the rows of runs with another configuration, and the identities of the kept runs. Rows of
    unfinished runs are dropped (their run is redone). Finished runs with this configuration but another code
    version raise ValueError unless ``allow_mixed_versions``.
    """
    want = config_key(config)
    groups = {}
    for row in rows:
        groups.setdefault((identity(row), row.get("config_key"), row.get("code")), []).append(row)
    kept, superseded, other_code, chosen = [], [], set(), {}
    for (ident, key, row_code), group in groups.items():
        if {part(r) for r in group} < set(parts):
            continue  # unfinished: redone
        if key != want:
            superseded.extend(group)
        elif row_code != code and not allow_mixed_versions:
            other_code.add(row_code)
        elif ident not in chosen or (row_code == code and chosen[ident][0] != code):
            if ident in chosen:
                superseded.extend(chosen[ident][1])
            chosen[ident] = (row_code, group)
        else:
            superseded.extend(group)
    if other_code:
        raise ValueError(f"out: {path} holds finished runs with these settings from other code versions "
                         f"{sorted(other_code)}; this code is {code}. Write to another --out (or --name), or pass "
                         "--allow-mixed-versions (allow_mixed_versions=True) to reuse them, each row keeping its "
                         "own commit")
    for _, group in chosen.values():
        kept.extend(group)
    return kept, superseded, set(chosen)


def write_text(path, text):
    """Write ``text`` to ``path`` atomically (``archive.atomic_write``: a temporary file beside it, flushed to disk,
    then renamed onto it): a sweep stopped while it writes leaves its earlier file whole."""
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def dumps(document):
    """JSON text of a sweep document with one line per row (short diffs, readable), other fields indented."""
    lines = ["{"]
    items = list(document.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            body = ",\n".join("  " + json.dumps(v, sort_keys=False, allow_nan=True) for v in value)
            lines.append(f" {json.dumps(key)}: [\n{body}\n ]{comma}")
        else:
            text = json.dumps(value, indent=1, allow_nan=True).replace("\n", "\n ")
            lines.append(f" {json.dumps(key)}: {text}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def read_jsonl(path):
    """The rows of the JSON-lines file ``path`` (blank lines skipped); [] when it does not exist."""
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def jsonl_sweep(path, cells, key, compute):
    """Run ``compute(*cell)`` for every cell of ``cells`` whose row is not yet in the JSON-lines file ``path`` for
    this git commit, appending each row as soon as it is computed (so an interrupted sweep resumes); ``key(row)`` is
    the cell a row belongs to, and each row records ``"commit"``. Returns all rows of the file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    commit = versions().get("git_commit")
    rows = read_jsonl(path)
    done = {(key(r), r.get("commit")) for r in rows}
    with open(path, "a") as fh:
        for cell in cells:
            if (tuple(cell), commit) in done:
                continue
            row = dict(compute(*cell), commit=commit)
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows
