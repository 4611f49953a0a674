"""The package's import graph: read from the source with ``ast``, it has no cycle, and
no import goes up a layer of the drawing in CONTRIBUTING.md.

A cycle works only while every module involved defines what the others need
before it imports them (imports at the bottom of a file); it breaks as soon
as someone tidies the imports. Every ``import`` statement counts, also those
inside functions: a later import there still ties the two modules together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "atensi"


def module_files(src: Path = SRC, package: str = PACKAGE) -> dict[str, Path]:
    """{dotted module name: file} for every module of ``package`` under ``src``."""
    files = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _resolve(base: str, level: int, module: str | None, is_package: bool) -> str:
    """Absolute name of ``from <level dots><module> import ...`` written in ``base``."""
    if level == 0:
        return module or ""
    parts = base.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    return ".".join(parts[:keep] + ([module] if module else []))


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imports_of(name: str, path: Path, modules: dict[str, Path], tree: ast.Module) -> set[str]:
    """Modules of the package that ``name`` (file ``path``, parsed: ``tree``) imports."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            origin = _resolve(name, node.level, node.module, is_package)
            # "from . import plots" names a module; "from .style import BAR" a name in one.
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # atensi.kernels.launch.x -> the module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(src: Path = SRC, package: str = PACKAGE, trees=None) -> dict[str, set[str]]:
    modules = module_files(src, package)
    trees = trees or {name: parse(path) for name, path in modules.items()}
    return {name: imports_of(name, path, modules, trees[name]) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or in a ring (the
    strongly connected components with more than one module, Tarjan's method)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return sorted(found)


def drawing_modules() -> set[str]:
    """Modules that draw with matplotlib (``atensi.style`` included)."""
    return {name for name, path in module_files().items()
            if "matplotlib" in path.read_text(encoding="utf-8")}


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = tmp_path / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_cycle_finder_sees_a_cycle_through_relative_and_late_imports(tmp_path):
    src = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from .b import f\n",
        "b.py": "def f():\n    from . import c\n",
        "c.py": "import pkg.a\n",
        "sub/__init__.py": "from .leaf import g\n",
        "sub/leaf.py": "from .. import a\ndef g():\n    pass\n",
    })
    graph = import_graph(src, "pkg")
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.c"}
    assert graph["pkg.c"] == {"pkg.a"}
    assert graph["pkg.sub"] == {"pkg.sub.leaf"} and graph["pkg.sub.leaf"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    (src / "pkg" / "c.py").write_text("import math\n", encoding="utf-8")
    assert cycles(import_graph(src, "pkg")) == []


@pytest.fixture(scope="module")
def trees():
    return {name: parse(path) for name, path in module_files().items()}


@pytest.fixture(scope="module")
def graph(trees):
    return import_graph(trees=trees)


def test_no_figure_module_is_part_of_an_import_cycle(graph):
    assert "atensi.style" in graph["atensi.plots"]
    assert "atensi.style" in graph["atensi.example_plots"]
    drawing = drawing_modules()
    tangled = [group for group in cycles(graph) if drawing & set(group)]
    assert tangled == [], f"siklus impor: {tangled}"


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_emulator_does_not_import_the_kernel_package(graph):
    # The emulator is the lower layer: the kernels use it, never the other way round.
    upward = sorted(f"{name} -> {target}" for name in graph if _in(name, "atensi.cudacpu")
                    for target in graph[name] if _in(target, "atensi.kernels"))
    assert upward == []


def test_the_shared_checks_sit_below_the_code_they_guard(graph):
    # Every module imports atensi.validation; one import back from it to a module
    # it serves would be an upward arrow (and, sooner or later, a cycle).
    assert graph["atensi.validation"] <= {"atensi.formatting"}
    for name in ("atensi.position_checks", "atensi.reference_checks", "atensi.model_checks",
                 "atensi.figure_checks"):
        assert graph[name] <= {"atensi.validation", "atensi.formatting", "atensi.memory"}, name


def test_atensi_has_no_import_cycle(graph):
    assert cycles(graph) == []


def test_training_tasks_share_one_loop_and_one_command_line_and_never_import_each_other(graph):
    tasks = ("atensi.train", "atensi.recall_train", "atensi.rujukan_train")
    data = ("atensi.recall", "atensi.rujukan")
    for name in tasks:
        assert "atensi.training_loop" in graph[name], name
        assert not graph[name] & (set(tasks) - {name}), name
    for name in data:
        assert not graph[name] & (set(tasks) | set(data)), name
    # The command is generated from the registry and writes through its one runner.
    assert {"atensi.tasks", "atensi.tasks.runner"} <= graph["atensi.train"]
    assert not graph["atensi.tasks"] & set(tasks)


def test_every_figure_module_takes_its_style_from_style_and_style_imports_no_figure(graph):
    drawing = drawing_modules() - {"atensi.style"}
    assert {"atensi.plots", "atensi.cuda_plots", "atensi.tensorcore_plots"} <= drawing
    for name in sorted(drawing):
        assert "atensi.style" in graph[name], f"{name} menggambar tanpa atensi.style"
    assert not graph["atensi.style"] & drawing


def _bound_names(function: ast.AST) -> set[str]:
    """Names a function binds locally: arguments, assignments, loop and with targets."""
    names = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def test_no_function_hides_a_module_of_the_package_it_imported(trees):
    """``for value, label, style in ...`` inside a figure function makes every
    ``style.SMALL`` in that function fail, and only when it runs."""
    hidden = []
    for name, tree in sorted(trees.items()):
        modules = {alias.asname or alias.name for node in tree.body
                   if isinstance(node, ast.ImportFrom) and node.level and not node.module
                   for alias in node.names}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hidden += [f"{name}.{node.name}: {clash}"
                           for clash in sorted(_bound_names(node) & modules)]
    assert hidden == []


CONTRIBUTING = SRC.parent / "CONTRIBUTING.md"


def layers(text: str) -> list[tuple[str, list[str]]]:
    """The layer drawing in CONTRIBUTING.md, bottom first: (layer, module patterns).

    The first ``text`` block after "Modul tersusun dalam lapisan"; a line that
    starts with spaces continues the layer above it."""
    block = text.split("Modul tersusun dalam lapisan", 1)[1].split("```text\n", 1)[1]
    found: list[tuple[str, list[str]]] = []
    for line in block.split("\n```", 1)[0].splitlines():
        if line.startswith(" "):
            found[-1][1].extend(p.strip() for p in line.split(",") if p.strip())
        else:
            name, modules = line[:18].strip(), line[18:]
            found.append((name, [p.strip() for p in modules.split(",") if p.strip()]))
    return found[::-1]


def _named_by(module: str, pattern: str) -> bool:
    """``kernels*`` names atensi.kernels and every module below it; ``model`` only atensi.model."""
    short = module.removeprefix(PACKAGE + ".") if module != PACKAGE else PACKAGE
    return short == pattern.rstrip("*") or (pattern.endswith("*")
                                             and short.startswith(pattern[:-1] + "."))


def layer_of(module: str, drawing: list[tuple[str, list[str]]]) -> list[int]:
    """Every layer whose patterns name ``module``."""
    return [i for i, (_, patterns) in enumerate(drawing) for p in patterns if _named_by(module, p)]


def upward_imports(graph: dict[str, set[str]], drawing) -> list[str]:
    return sorted(f"{name} ({drawing[layer_of(name, drawing)[0]][0]}) -> {target} "
                  f"({drawing[layer_of(target, drawing)[0]][0]})"
                  for name, targets in graph.items() for target in targets
                  if layer_of(target, drawing)[0] > layer_of(name, drawing)[0])


def test_every_module_sits_in_exactly_one_layer_of_the_drawing(graph):
    drawing = layers(CONTRIBUTING.read_text(encoding="utf-8"))
    assert [name for name, _ in drawing][:2] == ["dasar", "matematika"]
    placed = {name: layer_of(name, drawing) for name in graph}
    assert {name: where for name, where in placed.items() if len(where) != 1} == {}
    # Every pattern names a module that exists.
    patterns = [p for _, names in drawing for p in names]
    assert [p for p in patterns if not any(_named_by(name, p) for name in graph)] == []


def test_no_import_goes_up_a_layer(graph):
    drawing = layers(CONTRIBUTING.read_text(encoding="utf-8"))
    assert upward_imports(graph, drawing) == []


def test_the_layer_check_sees_an_upward_import(tmp_path):
    drawing = [("bawah", ["a"]), ("atas", ["b*"])]
    src = _package(tmp_path, {"__init__.py": "", "a.py": "from .b import c\n",
                              "b/__init__.py": "", "b/c.py": "import pkg.a\n"})
    graph = {name.replace("pkg", PACKAGE, 1): {t.replace("pkg", PACKAGE, 1) for t in targets}
             for name, targets in import_graph(src, "pkg").items() if name != "pkg"}
    assert upward_imports(graph, drawing) == ["atensi.a (bawah) -> atensi.b.c (atas)"]
