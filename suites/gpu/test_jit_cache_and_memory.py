"""Host costs that need a GPU (issue 47; docs/ab.md): the DSL's in-memory JIT cache as the
framework-integration page describes it, and what a process keeps per compile-and-launch cycle
(GPU memory, compiled functions), recorded as host-cost figures."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from fixtures.dsl import call_paths, host_costs, runner
from fixtures.dsl.compiler import Compiler
from fixtures.dsl.kernels import kernel_of
from reports.model import HOST_COST_KEY, HostCost

pytestmark = pytest.mark.gpu

GROWTH_CYCLES = 6


# a signature every release line compiles (the predicated stage's dynamic one meets DSL 4.3's
# ScaledBasis TypeError, a known limitation: seen on an H100 with 4.3.5)
EVERY_RELEASE = "tv-fp16-align16-dynamic-128x2048"

def test_the_jit_cache_compiles_a_signature_once_and_a_new_alignment_again(seed):
    """An implicit call (``@cute.jit`` called, nothing compiled ahead) with CuTe views: a second
    call with the same signature compiles nothing; the same tensors claimed at another
    ``assumed_align`` compile again (the framework-integration page). Each call verified."""
    from cutlass.cute.runtime import from_dlpack
    from cutlass.cutlass_dsl import CuTeDSL

    case = host_costs.family_case(EVERY_RELEASE)
    function = call_paths.implicit_launch(kernel_of(case.stage))
    cache = CuTeDSL._get_dsl().jit_cache
    launch = runner.prepare(case, seed, Compiler())
    grown = []
    for align in (16, 16, 8):
        before = len(cache)
        views = [from_dlpack(p.view, assumed_align=align).mark_layout_dynamic(leading_dim=1)
                 for p in (launch.placed[n] for n in "abc")]
        launch.poison_output()
        function(*views, runner.current_stream())
        torch.cuda.synchronize()
        launch.verify()
        grown.append(len(cache) - before)
    assert grown == [1, 0, 1], f"compiles per call (align 16, 16 again, 8): {grown}"


def test_what_a_process_keeps_per_compile_and_launch(request):
    """A fresh compile of one signature, launched, per cycle: compiled functions alive after their
    cycle (none), GPU and resident KiB kept a cycle, as figures."""
    case = host_costs.family_case(EVERY_RELEASE)

    def cycle() -> None:
        launch = runner.prepare(case, 0, Compiler())
        launch.launch()
        torch.cuda.synchronize()

    def gpu_used() -> int:
        free, total = torch.cuda.mem_get_info()
        return total - free

    growth = host_costs.growth_per_cycle(cycle, GROWTH_CYCLES, gpu_used=gpu_used)
    figures = [HostCost("compiled functions kept per compile and launch", "1/cycle", [growth["functions_kept_per_cycle"]]),
               HostCost("resident memory per compile and launch", "KiB/cycle", [growth["rss_kib_per_cycle"]]),
               HostCost("GPU memory per compile and launch", "KiB/cycle", [growth["gpu_kib_per_cycle"]])]
    request.node.user_properties.append((HOST_COST_KEY, [dataclasses.asdict(f) for f in figures]))
    assert growth["functions_kept_per_cycle"] == pytest.approx(0, abs=0.01), growth
