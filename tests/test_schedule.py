"""The xdist scheduler's work units: every case of one compiled signature goes to one worker."""

import pytest

from fixtures.cases import matrix
from fixtures.plugin import gpus, run_state
from fixtures.plugin.schedule import SignatureScheduling, heaviest_first, large_lane, scope_of

pytestmark = pytest.mark.harness

def _nodeid(case_id: str) -> str:
    return f"suites/gpu/test_stages.py::test_stage_matches_torch[{case_id}]"


def test_every_case_of_one_signature_shares_a_unit_and_no_other_does():
    cases = [c for c in matrix.cases("gpu") if not matrix.is_large(c)]
    units: dict[str, set] = {}
    for case in cases:
        units.setdefault(scope_of(_nodeid(case.id)), set()).add(case.signature)
    assert all(len(signatures) == 1 for signatures in units.values())
    assert len(units) == len({c.signature for c in cases})


def test_a_dynamic_layout_puts_its_shapes_in_one_unit_and_a_static_one_does_not():
    dynamic = {c.id for c in matrix.cases("gpu") if c.stage.name == "predicated" and c.dtype.id == "fp16"
               and c.align == "align16" and c.layout == "dynamic" and not (c.operands or c.alias or matrix.is_large(c))}
    static = {i.replace("-dynamic-", "-static-") for i in dynamic}
    assert len(dynamic) > 1
    assert len({scope_of(_nodeid(i)) for i in dynamic}) == 1
    assert len({scope_of(_nodeid(i)) for i in static}) == len(static)


def test_the_compile_and_gpu_tiers_of_one_case_share_a_unit():
    case_id = "tv-fp16-align16-static-128x2048"
    compile_id = f"suites/compile/test_ptx_access.py::test_ptx_access_widths_and_bytes[{case_id}]"
    assert scope_of(compile_id) == scope_of(_nodeid(case_id))


def test_a_case_outside_the_plans_joins_the_unit_of_its_signature():
    """The CUDA-graph tests' 256x2048 is no plan's shape: dynamic, it is the plan's dynamic
    signature; static, both graph tests of it share one unit."""
    graph = "suites/gpu/test_cuda_graphs.py::test_replays_compute_every_captured_launch[tv-fp16-align16-{}-256x2048]"
    mixing = graph.replace("test_replays_compute_every_captured_launch", "test_graph_mixing_a_stage_with_torch_ops")
    assert scope_of(graph.format("dynamic")) == scope_of(_nodeid("tv-fp16-align16-dynamic-128x2048"))
    assert scope_of(graph.format("static")) == scope_of(mixing.format("static")) != scope_of(graph.format("static").replace("256x", "128x"))


def test_a_natural_and_an_offset_base_share_a_unit_and_align16_does_not():
    """The DSL compiles against the alignment claim, never the pointer: an operand one element
    past a 16-byte boundary claims what a naturally aligned one claims."""
    natural, offset, align16 = (_nodeid(f"tv-fp16-{a}-strided-128x2048") for a in ("natural", "offset", "align16"))
    assert scope_of(natural) == scope_of(offset) != scope_of(align16)


@pytest.mark.parametrize("nodeid", ["tests/test_values.py::test_plain", "suites/host/test_dlpack.py::test_x[fp16]",
                                    "suites/gpu/test_dynamic_reuse.py::test_one_compile_serves_every_shape[tv_remap-fp16-align16-dynamic]",
                                    "suites/gpu/test_x.py::test_y[nostage-fp16-align16-static-1x1]",
                                    "suites/gpu/test_x.py::test_y[tv-fp16-align8-static-1x1]"])
def test_a_test_that_is_no_matrix_case_is_a_unit_of_its_own(nodeid):
    assert scope_of(nodeid) == nodeid


class _Worker:
    """What the scheduler reads of an xdist worker (``WorkerController``), and what it sends it."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[str] = []

    def send_runtest_some(self, indices) -> None:
        self.sent += [str(i) for i in indices]

    def shutdown(self) -> None:
        self.shutting_down = True


def _dealt(config, workers: list[_Worker], collection: list[str]) -> SignatureScheduling:
    """A scheduler that has every one of ``workers``' collections (``collection``) and has made its first deal."""
    scheduler = SignatureScheduling(config)
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    return scheduler


def test_a_replacement_worker_still_collecting_waits_for_its_collection(pytestconfig, monkeypatch):
    """Two workers replace crashed ones at once; the first to finish collecting reschedules every
    worker, and the other, still collecting, must not stop the run (it gets work once collected)."""
    monkeypatch.setattr(pytestconfig.option, "tx", ["1*popen"], raising=False)
    scheduler = SignatureScheduling(pytestconfig)
    collection = [f"t.py::test_{i}" for i in range(8)]
    first, second = _Worker("gw0"), _Worker("gw1")
    scheduler.add_node(first)
    scheduler.add_node_collection(first, collection)
    scheduler.schedule()
    late = _Worker("gw2")
    scheduler.add_node(late)
    scheduler.add_node(second)
    scheduler.add_node_collection(second, collection)
    scheduler.schedule()
    assert late.sent == [] and second.sent
    scheduler.add_node_collection(late, collection)
    scheduler.schedule()
    assert sorted(first.sent + second.sent + late.sent, key=int) == [str(i) for i in range(8)]


def test_every_case_past_a_workers_reserve_is_in_one_unit_planted_ones_too():
    """One worker runs the cases that hold more than a worker's reserve one after another: none
    competes with another for memory; a large case within the reserve goes by its signature."""
    large = [c for c in matrix.cases("gpu") if matrix.is_large(c)]
    past = [c.id for c in large if matrix.device_bytes(c) > gpus.WORKER_RESERVE]
    within = [c.id for c in large if matrix.device_bytes(c) <= gpus.WORKER_RESERVE]
    assert past and {scope_of(_nodeid(i)) for i in past} == {"large"}
    assert all(c.shape == matrix.HUGE for c in large if c.id in past)
    assert within and "large" not in {scope_of(_nodeid(i)) for i in within}
    assert scope_of(_nodeid("planted_flat_int32_index-i8-align16-static-32832x65536")) == "large"
    assert scope_of(_nodeid("planted_flat_int32_index-i8-align16-static-65600x1024")) != "large"


def test_a_semantics_compile_groups_cases_share_a_unit_on_each_path():
    """One compile computes a group's cases, so one worker runs them; the host path's part of a
    case goes apart from its gpu part (it runs in the CPU-only tail), and a case alone is a unit
    of its own."""
    from fixtures.cases import semantics as sem

    gpu = "suites/gpu/test_semantics.py::test_semantics_on_gpu[{}]"
    host = "suites/host/test_semantics_on_host.py::test_semantics_on_host[{}]"
    group = next(g for g in (sem.compile_group(c.id, "gpu") for c in sem.cases()) if len(g) > 1)
    assert len({scope_of(gpu.format(c.id)) for c in group}) == 1
    assert scope_of(gpu.format(group[0].id)) != scope_of(host.format(group[0].id))
    alone = next(c for c in sem.cases() if len(sem.compile_group(c.id, "gpu")) == 1)
    assert scope_of(gpu.format(alone.id)) == gpu.format(alone.id)


def test_units_go_out_heaviest_first():
    """Canaries (no case id), then compiles by the values a thread holds, a predicated stage's
    two paths counting twice; the unit of many shapes before a single case of the same weight;
    the semantics family's small kernels last."""
    units = {
        "fp64": {_nodeid("tv-fp64-align16-static-128x2048"): False},
        "i8-predicated": {_nodeid("predicated-i8-align16-static-128x2048"): False},
        "i8-tv": {_nodeid("tv-i8-align16-static-128x2048"): False},
        "i8-tv-dynamic": {_nodeid(f"tv-i8-align16-dynamic-{s}"): False for s in ("128x2048", "256x2048")},
        "canary": {"suites/gpu/test_known_faults.py::test_fault_canary": False},
        "semantics": {"suites/gpu/test_semantics.py::test_semantics_on_gpu[semantics-floordiv-i8-tensor]": False},
    }
    order = [scope for scope, _ in sorted(units.items(), key=heaviest_first)]
    assert order == ["canary", "i8-predicated", "i8-tv-dynamic", "i8-tv", "fp64", "semantics"]


def test_a_slow_test_goes_out_after_the_large_cases_and_before_every_other():
    """A test marked slow (a drill, the memcheck sample) starts as its part of the run starts,
    after the one large unit and before the other tests outside the matrix; a slow CPU-only test
    still waits for every unit that touches a GPU."""
    drill, host_costs = "suites/gpu/test_fault_isolation.py::test_drill", "suites/compile/test_host_costs.py::test_import"
    units = {
        "large": {_nodeid("naive-i8-align16-static-32832x65536"): False},
        "canary": {"suites/gpu/test_known_faults.py::test_fault_canary": False},
        "drill": {drill: False},
        "i8-tv": {_nodeid("tv-i8-align16-static-128x2048"): False},
        "host": {"suites/host/test_layout_algebra.py::test_print_matches_notebook[coalesce]": False},
        "host-costs": {host_costs: False},
    }
    gpu_free = frozenset({host_costs, "suites/host/test_layout_algebra.py::test_print_matches_notebook[coalesce]"})
    order = [scope for scope, _ in sorted(units.items(), key=lambda unit: heaviest_first(
        unit, gpu_free=gpu_free, slow=frozenset({drill, host_costs})))]
    assert order == ["large", "drill", "canary", "i8-tv", "host-costs", "host"]


def test_a_worker_holding_a_slow_test_gets_no_other_while_a_light_one_is_left(pytestconfig, monkeypatch, tmp_path):
    """A worker holds the unit it runs and the next: two slow tests adjacent in the queue must not
    both go to one worker (it would run them one after the other while the others are done), and
    once only slow ones are left they still go out."""
    import json

    from fixtures.plugin.schedule import SLOW_FILE

    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"], raising=False)
    monkeypatch.setattr(run_state.of(pytestconfig), "scratch", tmp_path)
    slow = [f"suites/compile/test_host_costs.py::test_slow_{i}" for i in range(4)]
    collection = slow + [f"suites/host/test_light.py::test_{i}" for i in range(6)]
    (tmp_path / SLOW_FILE).write_text(json.dumps(slow))
    workers = [_Worker(f"gw{i}") for i in range(2)]
    scheduler = _dealt(pytestconfig, workers, collection)
    for _ in range(20):  # each worker finishes the unit it runs and asks for more, in turn
        for worker in workers:
            held = [n for unit in scheduler.assigned_work[worker].values() for n, done in unit.items() if not done]
            assert sum(n in slow for n in held) <= 1 or all(s in slow for s in scheduler.workqueue), (worker.gateway.id, held)
            if held:
                scheduler.assigned_work[worker][next(s for s, u in scheduler.assigned_work[worker].items() if held[0] in u)][held[0]] = True
            scheduler._reschedule(worker)
    assert sorted(collection[int(i)] for w in workers for i in w.sent) == sorted(collection)


def test_units_that_touch_no_gpu_go_out_after_every_other():
    """A unit whose every test is GPU-free (a compile-only signature, a host test) goes after the
    lightest unit that touches a GPU: the bench phase measures once those are done."""
    compile_only = "suites/compile/test_ptx_access.py::test_ptx_access_widths_and_bytes[predicated-i8-align16-static-128x2048]"
    shared = _nodeid("tv-fp64-align16-static-128x2048")
    units = {
        "compile-only": {compile_only: False},
        "shared": {shared: False, shared.replace("suites/gpu/test_stages.py::test_stage_matches_torch",
                                                 "suites/compile/test_ptx_access.py::test_ptx_access_widths_and_bytes"): False},
        "host": {"suites/host/test_layout_algebra.py::test_print_matches_notebook[coalesce]": False},
        "semantics": {"suites/gpu/test_semantics.py::test_semantics_on_gpu[semantics-floordiv-i8-tensor]": False},
    }
    gpu_free = frozenset({compile_only, "suites/host/test_layout_algebra.py::test_print_matches_notebook[coalesce]",
                          *(n for n in units["shared"] if "compile" in n)})
    order = [scope for scope, _ in sorted(units.items(), key=lambda unit: heaviest_first(unit, gpu_free=gpu_free))]
    assert order == ["shared", "semantics", "host", "compile-only"]


def test_a_signatures_tests_that_touch_no_gpu_go_apart_after_every_unit_that_does(pytestconfig, monkeypatch, tmp_path):
    """A signature's compile-tier test compiles from CPU views, its gpu-tier test from device
    tensors: no compile is shared, so the first goes with the other GPU-free units, beside the
    bench phase, instead of holding the GPU part."""
    import json

    from fixtures.plugin.bench_phase import GPU_FREE_FILE

    monkeypatch.setattr(pytestconfig.option, "tx", ["1*popen"], raising=False)
    state = run_state.of(pytestconfig)
    monkeypatch.setattr(state, "scratch", tmp_path)
    monkeypatch.setattr(state, "gpu_free", frozenset())
    gpu = _nodeid("tv-fp64-align16-static-128x2048")
    compile_only = gpu.replace("suites/gpu/test_stages.py::test_stage_matches_torch",
                               "suites/compile/test_ptx_access.py::test_ptx_access_widths_and_bytes")
    other = _nodeid("tv-i8-align16-static-128x2048")
    (tmp_path / GPU_FREE_FILE).write_text(json.dumps([compile_only]))
    worker = _Worker("gw0")
    scheduler = _dealt(pytestconfig, [worker], [compile_only, gpu, other])
    for _ in range(5):
        for unit in scheduler.assigned_work[worker].values():
            unit.update(dict.fromkeys(unit, True))
        scheduler._reschedule(worker)
    sent = [[compile_only, gpu, other][int(i)] for i in worker.sent]
    assert sent[-1] == compile_only and set(sent) == {compile_only, gpu, other}
    assert scheduler._split_scope(compile_only) != scheduler._split_scope(gpu) == scope_of(gpu)


def test_the_large_cases_go_out_first_in_two_lanes_that_two_workers_run(pytestconfig, monkeypatch):
    """On one GPU the cases past a worker's reserve are dealt into two units, alternately in
    collection order, and the first two workers dealt to get one each, before anything else: each
    lane holds half the large cases' compiles (the GPU's room for them decides what runs at once)."""
    monkeypatch.setattr(pytestconfig.option, "tx", ["3*popen"], raising=False)
    large = [_nodeid(c.id) for c in matrix.large_cases() if matrix.device_bytes(c) > gpus.WORKER_RESERVE][:6]
    collection = [*(f"t.py::test_{i}" for i in range(3)), *large]
    workers = [_Worker(f"gw{i}") for i in range(3)]
    scheduler = _dealt(pytestconfig, workers, collection)
    lanes = [{collection[int(i)] for i in w.sent} & set(large) for w in workers]
    assert lanes[:2] == [set(large[0::2]), set(large[1::2])] and not lanes[2]
    assert [collection[int(w.sent[0])] for w in workers[:2]] == large[:2]
    assert {scheduler._split_scope(n) for n in large} == {large_lane(0, 0), large_lane(0, 1)}


def test_with_two_gpus_each_gets_large_units_that_only_its_workers_run(pytestconfig, monkeypatch):
    """The cases past a worker's reserve split round the GPUs, and each GPU's round its lanes; a
    worker pinned to GPU 0 (gw0, gw2) never gets GPU 1's, however the queue stands, and GPU 1's
    workers never GPU 0's."""
    from reports.model import GpuRecord

    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"], raising=False)
    monkeypatch.setattr(run_state.of(pytestconfig), "gpus", [GpuRecord(i, f"GPU-{i}", "H100", 81559, None, "host") for i in range(2)])
    large = [c.id for c in matrix.large_cases() if matrix.device_bytes(c) > gpus.WORKER_RESERVE][:4]
    collection = [_nodeid(i) for i in large] + [f"t.py::test_{i}" for i in range(6)]
    workers = [_Worker(f"gw{i}") for i in (1, 0)]  # gw1 first: plain loadscope would deal it GPU 0's unit
    scheduler = _dealt(pytestconfig, workers, collection)
    assert {s for s in scheduler.workqueue} | {s for w in workers for s in scheduler.assigned_work[w]} >= {
        large_lane(0, 0), large_lane(1, 0), large_lane(0, 1), large_lane(1, 1)}
    for _ in range(50):  # each worker finishes what it holds and asks for more, in turn
        for worker in workers:
            for unit in scheduler.assigned_work[worker].values():
                unit.update(dict.fromkeys(unit, True))
            scheduler._reschedule(worker)
        if not scheduler.workqueue:
            break
    got = {w.gateway.id: {collection[int(i)] for i in w.sent} for w in workers}
    for worker in workers:
        index = int(worker.gateway.id[2:])
        others = {_nodeid(i) for n, i in enumerate(large) if n % 2 != index}
        assert not got[worker.gateway.id] & others, worker.gateway.id
    assert set().union(*got.values()) == set(collection)


def test_the_first_deal_is_already_in_dealing_order(pytestconfig, monkeypatch):
    """The queue is ordered before xdist deals its first units: a test outside the matrix (a
    fixed-cost one), last in collection and the smallest unit, goes out first."""
    monkeypatch.setattr(pytestconfig.option, "tx", ["1*popen"], raising=False)
    dynamic = [_nodeid(f"tv-fp16-align16-dynamic-{s}") for s in ("128x2048", "256x2048", "97x101")]
    collection = [*dynamic, _nodeid("tv-fp64-align16-static-128x2048"), "suites/gpu/test_fault_isolation.py::test_drill"]
    worker = _Worker("gw0")
    scheduler = _dealt(pytestconfig, [worker], collection)
    assert collection[int(worker.sent[0])] == "suites/gpu/test_fault_isolation.py::test_drill"
