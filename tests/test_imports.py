"""Imports go one way (docs/design.md, "Layers"): the package's import graph has no cycle and no edge pointing to a
higher layer, no module outside a sub-package imports that sub-package's private modules, and no module imports a
private name (one with a leading underscore, ``from .x import _y``) from another module of the package.

Private modules and private names are two rules. A module whose own name starts with an underscore (``_validation``,
``_config``, ``ops/_compile``, ...) is package-private by design: its sub-package's modules may import it, as a module
(``from . import _validation as check``) or names from it (``from ._progress import Progress``); the name imported in
``from . import _validation`` is that of a module, not a private name of ``gpssm_np/__init__.py``, so it is allowed.
A name with a leading underscore defined inside a module (a function, class, constant or Numba kernel) is private
to that module: importing it from any other module of the package is a failure, whatever the layers; a thing two
modules share gets a public name in the module that defines it. Dunder names (``__version__``) are not private.

The graph is read from the source with ``ast`` (top-level and function-level imports alike), not by importing it.
An edge A -> B means that A imports B; importing ``p.q.m`` from outside the sub-package ``p.q`` also runs
``p.q/__init__.py``, so it adds the edge A -> p.q as well. Every module must appear in :data:`LAYERS`: a new module
has to be placed.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = "gpssm_np"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

#: Layer of every module, lowest first; a module may import modules of its own layer or of lower ones.
LAYERS = {
    0: ("_config", "_validation", "_version", "_progress", "_init", "_names", "_warn"),
    1: ("ops", "ops._compile", "ops._primitive", "ops._tape", "ops._fastmath", "ops._blas", "ops.threads",
        "ops.linalg", "ops.triangular", "ops.kernels", "ops.conditional", "ops.lmc", "ops.likelihood", "ops.lstm",
        "ops.rollout", "ops.enkf", "ops.dmm", "ops.gaussian_condition", "ops.gaussian_sample",
        "ops.kalman", "ops.adapted_step", "ops.compile_ahead"),
    2: ("arguments", "units", "transforms", "params", "gp", "kalman", "optim", "datasets", "datasets.files",
        "datasets.arrays", "datasets.simulators", "datasets.windowing", "datasets.folds"),
    3: ("transition",),
    4: ("inference", "filtering", "forecast", "recognition", "metrics", "protocols", "archive", "online",
        "training_loop", "estimator"),
    5: ("models", "models.gpssm", "models.odgpssm", "models.prssm", "models.dssm", "models.training",
        "models.warm_start", "baselines",
        "baselines._base", "baselines.arx", "baselines.arx_state_space", "baselines.lgssm",
        "baselines.lgssm_order", "models.floor", "models.guards", "models.checkpoint", "models.default_fit",
        "models.registry"),
    6: ("", "__main__", "io", "cli", "plotting", "_versions", "_warmup", "experiments", "experiments.table1",
        "experiments.q_study", "experiments.car_tracking", "experiments.systems",
        "experiments.filters",
        "experiments.runs", "experiments.stats"),
}

LAYER_OF = {f"{PACKAGE}.{name}" if name else PACKAGE: layer for layer, names in LAYERS.items() for name in names}


def package_modules(root=ROOT, package=PACKAGE):
    """Dotted name -> (path, is_package) of every module of the package."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join((package,) + (parts[:-1] if is_package else parts))
        modules[name] = (path, is_package)
    return modules


def imported_names(tree, name, is_package):
    """The absolute dotted names each import statement of ``tree`` (module ``name``) refers to, with the names
    imported from it: a list of (module, [names] or None)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(parts[:len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module
            out.append((target, [alias.name for alias in node.names]))
    return out


def import_graph(modules):
    """Module -> set of package modules it imports (see the module docstring)."""
    graph = {}
    for name, (path, is_package) in modules.items():
        edges = set()
        for target, names in imported_names(ast.parse(path.read_text(), str(path)), name, is_package):
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            found = [f"{target}.{n}" for n in names or () if f"{target}.{n}" in modules]
            if len(found) < len(names or ()) or not found:
                found.append(target)  # names that are not modules come from the module ``target`` itself
            for module in found:
                edges.add(module)
                parent = module.rpartition(".")[0]
                if parent not in ("", PACKAGE) and not name.startswith(parent + ".") and name != parent:
                    edges.add(parent)  # importing p.q.m runs p/q/__init__.py
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycle(graph):
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, stack)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def upward_edges(graph, layer_of):
    """Edges A -> B with B in a higher layer than A."""
    return sorted((a, b, layer_of[a], layer_of[b]) for a, targets in graph.items() for b in targets
                  if a in layer_of and b in layer_of and layer_of[b] > layer_of[a])


def private_imports(graph):
    """Edges into a private module (``_name``) of a sub-package from outside that sub-package."""
    bad = []
    for a, targets in graph.items():
        for b in targets:
            parent, _, last = b.rpartition(".")
            if last.startswith("_") and not last.startswith("__") and parent != PACKAGE \
                    and not a.startswith(parent + ".") and a != parent:
                bad.append((a, b))
    return sorted(bad)


def is_private(name):
    """A name with one leading underscore (``_y``, not ``__version__``)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_names(modules):
    """(importing module, module imported from, name) for every private name (:func:`is_private`) that a module
    imports from another module of the package; a private *module* imported as a module is not one of them."""
    bad = []
    for name, (path, is_package) in modules.items():
        for target, names in imported_names(ast.parse(path.read_text(), str(path)), name, is_package):
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            bad.extend((name, target, n) for n in names or ()
                       if is_private(n) and f"{target}.{n}" not in modules and target != name)
    return sorted(bad)


#: Where the command line may import ``experiments``: the commands that run the paper's experiments. Everything else
#: (``fit``, ``evaluate``, ``forecast``) builds models through ``models.registry``.
CLI_EXPERIMENT_COMMANDS = ("cmd_demo", "cmd_reproduce")
#: Examples that run one of the paper's experiments and so may import it; the others use the package as a user does.
EXPERIMENT_EXAMPLES = {"car_tracking.py": ("gpssm_np.experiments", "gpssm_np.experiments.car_tracking")}


def experiment_imports(path, name, is_package=False):
    """(enclosing top-level function or None, imported module) for every import of ``experiments`` in the file."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in tree.body:
        owner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        for target, names in imported_names(node, name, is_package):
            modules = [f"{target}.{n}" for n in names or ()] + [target]
            if any(m == f"{PACKAGE}.experiments" or m.startswith(f"{PACKAGE}.experiments.") for m in modules):
                found.append((owner, target))
    return found


@pytest.fixture(scope="module")
def graph():
    return import_graph(package_modules())


def test_every_module_has_a_layer(graph):
    missing = sorted(set(graph) - set(LAYER_OF))
    assert not missing, f"modules without a layer (add them to LAYERS in this test and to docs/design.md): {missing}"


def test_no_import_cycle(graph):
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_upward_import(graph):
    bad = upward_edges(graph, LAYER_OF)
    assert not bad, "imports from a higher layer: " + "; ".join(f"{a} (layer {la}) -> {b} (layer {lb})"
                                                               for a, b, la, lb in bad)


def test_private_modules_stay_inside_their_package(graph):
    bad = private_imports(graph)
    assert not bad, "private modules imported from outside their package: " + "; ".join(f"{a} -> {b}"
                                                                                          for a, b in bad)


def test_no_private_name_imported_across_modules():
    bad = private_names(package_modules())
    assert not bad, ("private names imported from another module (give the shared thing a public name where it is "
                     "defined): " + "; ".join(f"{a} imports {n} from {b}" for a, b, n in bad))


def test_models_are_built_without_experiments():
    """The command line imports ``experiments`` only in the commands that run the paper's experiments, and the
    examples only where they run one; the models come from ``models.registry``."""
    cli = [(owner, target) for owner, target in experiment_imports(ROOT / "cli.py", f"{PACKAGE}.cli")
           if owner not in CLI_EXPERIMENT_COMMANDS]
    assert not cli, f"gpssm_np/cli.py imports experiments outside {CLI_EXPERIMENT_COMMANDS}: {cli}"
    examples = ROOT.parent / "examples"
    bad = [(path.name, target) for path in sorted(examples.glob("*.py"))
           for _, target in experiment_imports(path, "examples." + path.stem)
           if target not in EXPERIMENT_EXAMPLES.get(path.name, ())]
    assert not bad, f"examples import experiments: {bad}"


def test_the_checks_catch_what_they_should(tmp_path):
    """The checks on a small package with a function-level upward import that closes a cycle, a private
    import from outside a sub-package, and private names imported from other modules (at the top level and inside
    a function), beside a private module imported as a module and a dunder name, which are allowed."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    files = {"__init__.py": "", "low.py": "def f():\n    from .high import g\n", "high.py": "from . import low\n",
             "sub/__init__.py": "", "sub/_hidden.py": "", "user.py": "from .sub._hidden import x\n",
             "sub/kernels.py": "from ._hidden import __version__, y\nfrom .. import low as _low\n",
             "sub/caller.py": "from . import _hidden as h\nfrom .kernels import step, _step\n",
             "late.py": "def g():\n    from .low import _f\n"}
    for name, text in files.items():
        (pkg / name).write_text(text)
    small = import_graph(package_modules(pkg))
    assert small[f"{PACKAGE}.low"] == {f"{PACKAGE}.high"}
    assert find_cycle(small) in ([f"{PACKAGE}.high", f"{PACKAGE}.low", f"{PACKAGE}.high"],
                                 [f"{PACKAGE}.low", f"{PACKAGE}.high", f"{PACKAGE}.low"])
    layers = {f"{PACKAGE}.low": 0, f"{PACKAGE}.high": 1}
    assert upward_edges(small, layers) == [(f"{PACKAGE}.low", f"{PACKAGE}.high", 0, 1)]
    assert private_imports(small) == [(f"{PACKAGE}.user", f"{PACKAGE}.sub._hidden")]
    assert f"{PACKAGE}.sub" in small[f"{PACKAGE}.user"]
    assert private_names(package_modules(pkg)) == [(f"{PACKAGE}.late", f"{PACKAGE}.low", "_f"),
                                                   (f"{PACKAGE}.sub.caller", f"{PACKAGE}.sub.kernels", "_step")]
