"""The semantics family (``fixtures.cases.semantics``) on the host JIT: every record on every type
it is defined on, computed by a host-side ``@cute.jit`` function through the GPU kernel's own
per-fragment code and judged against the record's reference. The meanings the DSL defines
itself (the sign of ``%``, out-of-range conversions) go to the report and are held to their
release line's pins (``MeaningChanged``). Where the run has the gpu tier's test of a case, the two
are compared by whichever ends second (``fixtures.plugin.meeting``): a GPU runner runs this half
in its CPU-only tail."""

import pytest

from fixtures.cases import semantics as sem
from fixtures.plugin.semantics import SEMANTICS_KEY, semantics_params

pytestmark = pytest.mark.host


@pytest.mark.parametrize("case", semantics_params("host"))
def test_semantics_on_host(case, meeting, semantics_runner, host_jit, request):
    from fixtures.dsl import semantics as run

    run.require_export(case, "host")
    ops, got, expected = semantics_runner.run(case, "host")
    found = run.meanings(case, "host", ops, got)
    request.node.user_properties.append((SEMANTICS_KEY, found))
    gpu = None
    if meeting.apart and sem.known(case, "gpu") is None and sem.known(case, "host") is None:
        gpu = meeting.leave("host", got, "gpu")  # the gpu tier's result, if its test ended first
    run.judge(case, found, *([lambda: run.check_paths_agree(case, ops, gpu, got, expected)] if gpu is not None else []),
              lambda: run.check_against_reference(case, "host", ops, got, expected), path="host", ops=ops, got=got)


def test_every_exported_numeric_type_is_covered_or_named():
    """A type the release exports is a family type or in ``NOT_COVERED`` with its reason."""
    import cutlass

    exported = {n for n in dir(cutlass) if isinstance(getattr(cutlass, n), type) and issubclass(getattr(cutlass, n), cutlass.Numeric)}
    covered = {t.cutlass for t in sem.TYPES.values()}
    assert exported - covered - set(sem.NOT_COVERED) == set(), "exported numeric types neither covered nor named in NOT_COVERED"


def test_every_exported_math_function_is_a_record_or_left_out():
    """A ``cute.math`` export is a record (``cute.math.NAME(...)``) or in ``MATH_LEFT_OUT`` with its reason."""
    import cutlass.cute as cute

    exported = {n for n in dir(cute.math) if not n.startswith("_")}
    recorded = {op.spelling.split("(")[0].removeprefix("cute.math.") for op in sem.OPERATIONS.values()
                if op.spelling.startswith("cute.math.")}
    assert exported - recorded - set(sem.MATH_LEFT_OUT) == set()
