"""Planted edits of the DSL's frontend, as an edited install carries them: the installed DSL copied
into a fresh virtual environment (``tests/edited_dsl.py``: folders made anew, files linked, the
edited sources and the ``dist-info`` folders copied), its frontend's own
Python edited and the ``RECORD`` rows rewritten to match, so the install check passes and only
the frontend family can see the edits:

- a branch's assignment dropped: the AST preprocessor's ``then`` block loses its last statement
  when that is an assignment (``create_if_function``);
- a loop-carried value not carried: a dynamic ``for`` loop's body yields its first carried value
  as it entered the iteration (``create_loop_function``);
- an unrolled range one short: ``range_value_check``, which hands ``range_constexpr``'s bounds to
  the unrolled loop, ends it a step early (``ast_helpers.py``).

The host tier's family, run in that environment, is red: each planted case's message names its
construct and the path (host JIT), and the cases whose constructs the edits leave alone pass.

An edit of the PyIR frontend alone, made in the same copy (``pyir_preprocessor.py``: a
``const_expr`` branch's test negated), is red under ``--frontend pyir`` and invisible under the
default frontend (its cases are among those that pass there): the lane is what sees it. One copy,
two child pytests on a few cases each: 30-40 s on 2 shared cores."""

import json
import subprocess
from pathlib import Path

import pytest

from fixtures.cases import frontend as fe
from tests.edited_dsl import Edit, EditedDsl

pytestmark = pytest.mark.harness

BASE_DSL = "nvidia_cutlass_dsl/dsl_packages/cutlass/base_dsl"

EDITS = (
    # a dynamic if's then block drops its last statement where that is an assignment
    Edit(f"{BASE_DSL}/ast_preprocessor.py",
         "                    body=then_body + [ast.Return(value=return_list)],\n",
         "                    body=(then_body[:-1] if then_body and isinstance(then_body[-1], ast.Assign) else then_body)"
         " + [ast.Return(value=return_list)],\n"),
    # a dynamic for loop's body yields its first carried value as the iteration received it
    Edit(f"{BASE_DSL}/ast_preprocessor.py",
         "            transformed_body.append(\n                ast.Return(\n                    value=ast.List(\n"
         "                        elts=[ast.Name(id=var, ctx=ast.Load()) for var in write_args],\n",
         "            transformed_body.insert(0, ast.copy_location(ast.Assign(targets=[ast.Name(id='_entry_0', ctx=ast.Store())],"
         " value=ast.Name(id=write_args[0], ctx=ast.Load())), node))\n"
         "            transformed_body.append(\n                ast.Return(\n                    value=ast.List(\n"
         "                        elts=[ast.Name(id='_entry_0' if n == 0 else var, ctx=ast.Load()) for n, var in enumerate(write_args)],\n"),
    # range_constexpr's bounds, as the unrolled loop gets them, end one step early
    Edit(f"{BASE_DSL}/ast_helpers.py", "        return (start, end, step)\n", "        return (start, end - step, step)\n"),
)


PYIR_EDITS = (
    # PyIR's const_expr if: the branch chosen at trace time is the other one
    Edit(f"{BASE_DSL}/pyir_preprocessor.py",
         "        node.orelse = self._wrap_body_in_constexpr_scope(node, node.orelse)\n"
         "        assert isinstance(node.test, ast.Call)\n"
         "        check = self._insert_cf_symbol_check(node.test.func)\n        return [check, node]\n",
         "        node.orelse = self._wrap_body_in_constexpr_scope(node, node.orelse)\n"
         "        assert isinstance(node.test, ast.Call)\n"
         "        check = self._insert_cf_symbol_check(node.test.func)\n"
         "        node.test = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=node.test), node.test)\n"
         "        return [check, node]\n"),
)


def _case(name: str, type_id: str = "i32", k: int | None = None) -> str:
    construct = fe.CONSTRUCTS[name]
    return next(c.id for c in fe.cases() if c.construct is construct and c.type.id == type_id and k in (None, c.k))


PLANTED = {  # case: the construct as its failure names it (with the path, "host JIT")
    _case(name, type_id): fe.CONSTRUCTS[name].what
    for name, type_id in (("assign_in_branch", "i32"), ("if_else", "f32"), ("store_in_branch", "i32"),
                          ("carried_class", "i32"), ("issue_2647", "i32"),  # the branch's assignment
                          ("for_range", "i32"), ("cutlass_range", "f32"), ("loop_if", "i32"),  # the carried value
                          ("range_constexpr", "i32"), ("constexpr_outer_dynamic_inner", "f32"))  # the unrolled range
}
PYIR_PLANTED = {_case("const_expr", k=3): fe.CONSTRUCTS["const_expr"].what,  # red under --frontend pyir
                _case("const_expr_removes_code", "f32"): fe.CONSTRUCTS["const_expr_removes_code"].what,
                _case("const_expr", "f32", k=3): fe.CONSTRUCTS["const_expr"].what}
# constructs none of the default frontend's edits touch (a while loop, a conditional expression, lambdas, the
# const_expr branches the PyIR edit inverts, which the default frontend never reads)
UNTOUCHED = tuple(_case(name) for name in ("while", "ternary", "lambda", "closure")) + tuple(PYIR_PLANTED)


def _pytest(edited: EditedDsl, report: Path, *cases: str, frontend: str = fe.DEFAULT_FRONTEND) -> subprocess.CompletedProcess:
    """The host tier's frontend family on ``cases`` under ``frontend`` in the edited install, from the checkout."""
    return edited.pytest("suites/host/test_frontend_on_host.py", "--frontend", frontend, "-k",
                         " or ".join(f"{case}]" for case in cases), f"--report-dir={report}",
                         dropped=("PYTEST", "PYTHONPATH", "VIRTUAL_ENV", "CUTE_DSL_"))


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    edited = EditedDsl(tmp_path_factory.mktemp("edited") / "env", EDITS + PYIR_EDITS)
    edited.records(rewritten=True)
    return edited


def test_edited_frontend_with_rewritten_records_is_red_naming_construct_and_path(edited, tmp_path):
    report = tmp_path / "report"
    done = _pytest(edited, report, *PLANTED, *UNTOUCHED)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # red, not stopped by the install check (6)
    cases = {c["nodeid"].split("[")[-1].rstrip("]"): c for c in json.loads((report / "results.json").read_text())["cases"]}
    assert set(cases) == {*PLANTED, *UNTOUCHED}, sorted(cases)
    for case, construct in PLANTED.items():
        message = cases[case]["message"]
        assert cases[case]["outcome"] == "failed", (case, cases[case]["outcome"], message)
        assert f"{construct} ({case}, default frontend), host JIT:" in message, message
    assert {case: cases[case]["outcome"] for case in UNTOUCHED} == dict.fromkeys(UNTOUCHED, "passed")


def test_an_edited_pyir_frontend_is_red_under_the_pyir_lane(edited, tmp_path):
    """The same copy under ``--frontend pyir``: the PyIR edit's cases fail, each naming its construct
    (the default frontend's run above passed them)."""
    done = _pytest(edited, tmp_path / "pyir", *PYIR_PLANTED, frontend=fe.PYIR_FRONTEND)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    cases = {c["nodeid"].split("[")[-1].rstrip("]"): c for c in json.loads((tmp_path / "pyir" / "results.json").read_text())["cases"]}
    assert set(cases) == set(PYIR_PLANTED), sorted(cases)
    for case, construct in PYIR_PLANTED.items():
        message = cases[case]["message"]
        assert cases[case]["outcome"] == "failed" and f"{construct} ({case}, pyir frontend), host JIT:" in message, message
