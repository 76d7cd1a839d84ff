"""The layering the README's "Layout, in import order" describes, read from the source with ast
(nothing imported): ``reports/`` imports nothing of ``fixtures/`` or ``conftest.py``; the case
model (``fixtures/cases/``) imports neither the DSL nor the packages above it, and torch only
where its vocabulary is torch's; pytest's machinery is imported only by the plugin, beside
``conftest.py``, ``suites/`` and the test modules of ``tests/`` and ``examples/``. A process
started by a module name (``reports/ab.py``'s ``fixtures.bandwidth.ab_worker``) is no import."""

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.harness

DSL = ("cutlass", "cuda")
PYTEST_MACHINERY = ("pytest", "_pytest", "pluggy", "xdist")
# the case model's vocabulary that is torch's: each dtype's torch dtype, each op's torch
# reference, the edge values from torch.finfo and torch.iinfo
CASE_MODEL_ON_TORCH = {"fixtures/cases/dtypes.py", "fixtures/cases/ops.py", "fixtures/cases/values.py",
                       "fixtures/cases/semantics.py"}


def modules(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path, module_level: bool = True) -> set[str]:
    """The top-level package of every module ``path`` imports: those run on import (under an
    ``if`` or ``try`` at module level too), or with ``module_level=False`` every import in it,
    functions' included. A relative import is of its own package, so it names none."""
    tree = ast.parse(path.read_text(), str(path))
    if module_level:
        nodes, pending = [], list(tree.body)
        while pending:
            node = pending.pop()
            if isinstance(node, (ast.If, ast.Try)):
                pending += [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                            *(n for handler in getattr(node, "handlers", []) for n in handler.body)]
            else:
                nodes.append(node)
    else:
        nodes = list(ast.walk(tree))
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.add(node.module)
    return names


def top(names: set[str]) -> set[str]:
    return {name.split(".")[0] for name in names}


def dotted(names: set[str], prefix: str) -> set[str]:
    return {name for name in names if name == prefix or name.startswith(prefix + ".")}


def test_reports_import_nothing_of_fixtures_or_the_plugin_anywhere():
    found = {str(p.relative_to(ROOT)): top(imported(p, module_level=False)) & {"fixtures", "conftest"}
             for p in modules("reports")}
    assert {path: names for path, names in found.items() if names} == {}


def test_the_case_model_imports_no_dsl_and_nothing_above_it():
    found = {}
    for path in modules("fixtures/cases"):
        names = imported(path)
        above = {n for n in dotted(names, "fixtures") if not n.startswith("fixtures.cases")}
        if top(names) & set(DSL) or above:
            found[str(path.relative_to(ROOT))] = (top(names) & set(DSL)) | above
    assert found == {}


def test_the_case_model_imports_torch_only_where_its_vocabulary_is_torchs():
    on_torch = {str(p.relative_to(ROOT)) for p in modules("fixtures/cases") if "torch" in top(imported(p))}
    assert on_torch == CASE_MODEL_ON_TORCH


def test_only_the_plugin_imports_pytests_machinery():
    """Beside it, ``conftest.py`` (which loads it), ``suites/`` (the tests), and the test modules of
    ``tests/`` and ``examples/`` (the drills): no other module of the library does."""
    library = [p for folder in ("reports", "fixtures") for p in modules(folder)
               if not p.is_relative_to(ROOT / "fixtures" / "plugin")]
    found = {str(p.relative_to(ROOT)): top(imported(p)) & set(PYTEST_MACHINERY) for p in library}
    assert {path: names for path, names in found.items() if names} == {}
    assert "pytest" in top(imported(ROOT / "fixtures" / "plugin" / "collector.py")), "the scan sees the plugin's own"
    assert [p.name for p in modules("examples") if top(imported(p)) & set(PYTEST_MACHINERY)] == [
        "fault_storm_drill.py", "repro_drill.py"], "examples import pytest only in the drills pytest runs"


def test_no_two_test_modules_of_the_testpaths_share_a_name():
    """pytest imports a test module outside a package by its file name alone, so two of one name
    (``suites/compile/test_host_costs.py`` and a ``tests/test_host_costs.py``) fail collection
    when one run collects both, as CI's does."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in [*modules("suites"), *modules("tests")]:
        if path.name.startswith("test_") and not (path.parent / "__init__.py").exists():
            if path.name in seen:
                clashes.append(f"{seen[path.name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
            seen.setdefault(path.name, path)
    assert not clashes, clashes
