"""The house's arrows run one way (issue: "checked types, arrows in one direction"): the layers and
forbidden imports of pyproject.toml's ``[tool.importlinter]`` hold, and no import cycle exists among
the product's modules — imports inside functions included, imports only for type checking not."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
# import-linter's lint-imports, on the packages of the working directory (first on the path)
LINT = "import sys; sys.path.insert(0, '.'); from importlinter.cli import lint_imports_command; lint_imports_command()"


def cycles() -> list[list[str]]:
    """The strongly connected groups of more than one module in the import graph of webapp and handlers."""
    graph = grimp.build_graph("webapp", "handlers", include_external_packages=False,
                              exclude_type_checking_imports=True)
    edges = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in edges[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_among_the_products_modules():
    assert cycles() == []


def test_the_layers_and_forbidden_imports_of_pyproject_hold():
    done = subprocess.run([sys.executable, "-c", LINT, "--config", str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "6 kept, 0 broken" in done.stdout


def test_the_check_fails_on_an_import_against_the_layers(tmp_path):
    """A store module that imported a service would break the layers: the checker says so."""
    shadow = tmp_path / "repo"
    shutil.copytree(ROOT / "webapp", shadow / "webapp", ignore=shutil.ignore_patterns("node_modules", "static",
                                                                                         "translations", "__pycache__"))
    shutil.copytree(ROOT / "handlers", shadow / "handlers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", shadow / "pyproject.toml")
    with (shadow / "webapp" / "store" / "immutable.py").open("a", encoding="utf-8") as f:
        f.write("\nfrom ..services import cases  # against the layers\n")
    done = subprocess.run([sys.executable, "-c", LINT], cwd=shadow, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "webapp.store.immutable -> webapp.services.cases" in done.stdout
