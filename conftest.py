"""pytest plugin glue: options, markers, the install fingerprint header, tier gating, reports.

Everything with logic lives in ``fixtures/`` and ``reports/``; this file only wires it into
pytest's hooks.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from fixtures.cases import arch as arch_mod
from fixtures.dsl import device, nvml, settings
from fixtures.plugin import bench_phase, bench_plugin, collector, fault, gpus, health, install, run_state, startup
from reports import model
from reports.model import DEVICE_TIERS, TIER_PRECEDENCE, ApiDrift, CaseRecord
from reports.usage import HarnessUsageError

# the fixtures the suites take; pytester: the harness's own tests (tests/) drive this plugin through it
pytest_plugins = ["fixtures.plugin.provided", "pytester"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cute-dsl harness")
    group.addoption(
        "--arch",
        default=None,
        help=f"compile target for the compile tier (default: the GPU's, else {arch_mod.DEFAULT_ARCH})",
    )
    group.addoption(
        "--require-gpu",
        action="store_true",
        default=False,
        help="fail the run at start when no CUDA device is present (what a GPU runner uses)",
    )
    group.addoption(
        "--gpus",
        default=None,
        metavar="0,3",
        help="the GPUs to use, by position among those visible (nvidia-smi's order, or CUDA_VISIBLE_DEVICES') or UUID; "
        "xdist worker gwN runs on the (N mod count)-th (default: every visible GPU)",
    )
    group.addoption(
        "--stage-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE before collection so the stages it registers join the matrix (repeatable)",
    )
    group.addoption(
        "--explore",
        default=None,
        metavar="N",
        help="draw N fresh cases a stage in the gpu tier's drawn search (default: the gate's fixed draws)",
    )
    group.addoption(
        "--drawn-case",
        action="append",
        default=[],
        metavar="ID",
        help="rerun exactly the drawn case ID (as a drawn failure prints it; repeatable)",
    )
    group.addoption(
        "--sanitize",
        nargs="?",
        const="memcheck",
        default=None,
        metavar="TOOLS",
        help="also run a sample of the gpu plan under compute-sanitizer, each case alone: "
        "memcheck (the default), racecheck, initcheck, synccheck, comma-separated (tests marked sanitize)",
    )
    group.addoption(
        "--fault-storm",
        default=None,
        metavar="N",
        help=f"stop launching on a GPU after N device faults there within {health.STORM_WINDOW_S:.0f} s "
        f"(default {health.STORM_FAULTS}, the gate's); off: never, for a run debugging a faulting kernel",
    )
    group.addoption(
        "--repro-dir",
        default=None,
        metavar="DIR",
        help="also write a standalone reproducer script (torch and the DSL only) for every failing gpu case into DIR",
    )
    group.addoption(
        "--report-dir",
        default=None,
        help="where results.json, junit.xml and summary.md go (default: runs/<timestamp>)",
    )
    bench_plugin.add_options(group)
    bench_phase.add_options(group)


def pytest_configure(config: pytest.Config) -> None:
    """Check every option and input file first (the cheap ones before torch and the DSL load),
    then the install, then set the run up; a bad option or input is one line and exit 4, a
    broken install one line, a report and exit 6, before any case runs."""
    worker = hasattr(config, "workerinput")  # an xdist worker: its controller compiled the stage modules already
    checks_install = not worker and not bench_phase.is_serial_phase(config)  # the controller checks it once
    state = run_state.of(config)
    bench_phase.leave_measuring_to_serial_phase(config)
    if checks_install:
        state.environment = install.user_variables(os.environ)
    try:
        requested = config.getoption("--arch")
        if requested:
            arch_mod.validate(requested)
        bench_options = bench_plugin.parse_options(config)
        wanted = gpus.parse(config.getoption("--gpus"))
        state.explore = startup.explore_option(config.getoption("--explore"))
        state.fault_storm = startup.fault_storm_option(config.getoption("--fault-storm"))
        stage_modules = startup.stage_module_names(config.getoption("--stage-module"))
        state.sanitize, state.sanitizer_missing = startup.sanitize_option(
            config.getoption("--sanitize"), config.getoption("--require-gpu")
        )
        report_dir = None if bench_phase.is_serial_phase(config) else collector.check_report_dir(config)
        if not worker:
            state.repro_dir = startup.repro_dir_option(config.getoption("--repro-dir"))
        _choose_gpus(config, state, wanted)
        if checks_install and (found := install.check_packages(Path(__file__).resolve().with_name("requirements.txt"))):
            collector.stop_for_install(config, report_dir, found)
        _pin(config, state, bench_options.plant_fraction)
        if config.getoption("--require-gpu") and device.gpu_unavailable():
            raise HarnessUsageError(f"--require-gpu: {device.gpu_unavailable()}")
        state.arch = arch_mod.validate(requested or device.device_arch() or arch_mod.DEFAULT_ARCH)
        dump_dir = collector.scratch_dir(config) / "dsl-dumps" / str(os.getpid())
        dump_dir.mkdir(parents=True, exist_ok=True)
        settings.apply(state.arch, dump_dir)
        if checks_install and (found := install.check_dsl(state.environment)):
            collector.stop_for_install(config, report_dir, found)
        from fixtures.cases.stages import with_registered
        from fixtures.dsl.compat import drift_report
        from fixtures.dsl.environment import fingerprint

        state.fingerprint = fingerprint()
        if not worker:  # the controller's recorder reports it
            state.api_drift = [ApiDrift(**vars(r), drifted=r.drifted) for r in drift_report()]
        board = state.pinned.board() if state.pinned else None
        gate = config.stash[bench_plugin.GATE_KEY] = bench_plugin.BenchGate(config, bench_options, state.fingerprint, board)
        state.baseline = gate.info()
        if gate.save_path is not None and not worker and device.gpu_unavailable():  # after the gate refused a wrong file
            raise HarnessUsageError(f"--bandwidth-save: {device.gpu_unavailable().split(' (')[0]}: the bench tier "
                                    "measures nothing here, so there is no baseline to save (run it on a GPU runner)")
        registered = startup.load_stage_modules(stage_modules)
        state.stages = with_registered(registered)
        state.drawn_cases = startup.drawn_case_option(config.getoption("--drawn-case"), state.stages)
        if registered and not worker:
            # provided is loaded by pytest_plugins; its compiler keeps the start-up compile
            from fixtures.plugin.provided import process_compiler

            startup.compile_registered(registered, state.stages, process_compiler(config))
    except HarnessUsageError as exc:
        collector.unconfigure(config)
        raise pytest.UsageError(str(exc)) from None
    workers = getattr(config.option, "numprocesses", None) or 0
    if checks_install and (warning := startup.workers_warning(workers, len(os.sched_getaffinity(0)))):
        print(warning, file=sys.stderr)
    config.pluginmanager.register(gate, "cute-harness-bench-gate")
    collector.configure(config, report_dir)
    bench_phase.register(config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``plan(NAME)`` takes ``case`` from that plan, over the run's stages."""
    marker = metafunc.definition.get_closest_marker("plan")
    if marker is not None:
        from fixtures.plugin.params import plan_params

        metafunc.parametrize("case", plan_params(*marker.args, run_state.of(metafunc.config).stages, **marker.kwargs))


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """``-m`` and ``-k`` checked once every plugin has registered its markers, before collection."""
    if not hasattr(session.config, "workerinput"):
        startup.check_selection(session.config)


def _choose_gpus(config: pytest.Config, state: run_state.RunState, wanted: list[str] | None) -> None:
    """The run's GPUs, through NVML alone (a worker is handed them): a ``--gpus`` that names none
    of them is a usage error before torch loads."""
    if hasattr(config, "workerinput"):
        state.gpus = collector.handed_gpus(config)
    else:
        state.outer_visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        state.gpus = gpus.select(gpus.visible(state.outer_visible), wanted, state.outer_visible)


def _pin(config: pytest.Config, state: run_state.RunState, plant_fraction: float | None) -> None:
    """Pin this process to its GPU of the run's, before anything touches CUDA; the controller
    also checks each has the memory its share needs."""
    if not hasattr(config, "workerinput") and state.gpus and not bench_phase.is_serial_phase(config):
        from fixtures.bandwidth.figures import PlantedSlowdown, most_held
        from fixtures.cases.matrix import device_bytes, large_cases, largest_operand_bytes

        workers = getattr(config.option, "numprocesses", None) or 1
        stages_module = config.rootpath / "suites" / "gpu" / "test_stages.py"
        selected = startup.selected_by_options(large_cases(), config.getoption("keyword"), config.getoption("markexpr"),
                                               config.args, stages_module)
        bench_held = 0
        if startup.may_select_tier(config.rootpath / "suites" / "bench", "bench", config.getoption("markexpr"), config.args):
            bench_held = most_held(largest_operand_bytes(), PlantedSlowdown(plant_fraction) if plant_fraction else None)
        gpus.check_free(state.gpus, workers, bench_held, tuple(device_bytes(c) for c in selected))
    state.pinned = gpus.for_worker(state.gpus, getattr(config, "workerinput", {}).get("workerid"))
    if state.pinned is not None:
        settings.pin_gpu(state.pinned.uuid)
    if hasattr(config, "workerinput"):
        state.cuda_at_start = collector.handed_cuda_at_start(config)
    else:
        state.cuda_at_start = state.pinned is not None and device.gpu_unavailable() is None


def pytest_unconfigure(config: pytest.Config) -> None:
    collector.unconfigure(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``-n``'s default distribution, by compiled signature (``--dist`` other than ``load`` is honoured)."""
    if config.getoption("dist") == "load":
        from fixtures.plugin.schedule import SignatureScheduling

        return SignatureScheduling(config, log)
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist: each worker is handed the run's folders, so every process agrees on them."""
    node.workerinput.update(collector.worker_input(node.config))


def pytest_report_header(config: pytest.Config) -> list[str]:
    from fixtures.dsl.environment import fingerprint

    reports = collector.report_dir(config)
    if reports is None:
        reports = "the parallel run's" if bench_phase.is_serial_phase(config) else "none (--collect-only)"
    state = run_state.of(config)
    in_use = [f"gpu {g.index}: {g.name}, {g.uuid}, {g.memory_mib} MiB, memory clock "
              f"{g.memory_clock_mhz or '?'} MHz" for g in state.gpus]
    if len(state.gpus) > 1:
        in_use.append(f"xdist worker gwN runs on the (N mod {len(state.gpus)})-th of these; every one of them measures every bench case")
    variables = ", ".join(f"{k}={v}" for k, v in state.environment.items()) or "none"
    return [*fingerprint().header_lines(), f"CUTE_DSL_* set by the user: {variables}", *in_use,
            f"compile arch: {state.arch}; reports: {reports}"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = run_state.of(config)
    no_gpu = device.gpu_unavailable()
    pinned = state.pinned
    if no_gpu and pinned is not None and state.cuda_at_start:  # there at start, gone now: a failure, never a skip
        state.gpu_lost = f"{pinned.uuid} ({pinned.name}): {nvml.device_status(pinned.uuid)}; {no_gpu.split(' (')[0]}"
        health.record_lost(collector.notes_dir(config), pinned.uuid, state.gpu_lost)
        no_gpu = None
    skip_device = pytest.mark.skip(reason=no_gpu) if no_gpu else None
    for item in items:
        tier = next((t for t in TIER_PRECEDENCE if item.get_closest_marker(t)), "harness")
        item.user_properties.append((model.TIER_KEY, tier))
        if pinned is not None and tier in DEVICE_TIERS:
            item.user_properties.append((model.GPU_KEY, pinned.uuid))
        case = getattr(getattr(item, "callspec", None), "params", {}).get("case")
        if hasattr(case, "stage"):
            record = CaseRecord(case.id, case.stage.name, case.dtype.id, case.align, case.layout, case.family)
            item.user_properties.append((model.CASE_KEY, asdict(record)))  # plain data: xdist serialises reports
        for word in getattr(case, "keywords", ()):
            item.extra_keyword_matches.add(word)
        if skip_device and any(item.get_closest_marker(t) for t in DEVICE_TIERS):
            item.add_marker(skip_device)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed or not item.get_closest_marker("gpu"):
        return
    error = fault.cuda_context_error()
    if error is None:
        return
    state = run_state.of(item.config)
    if state.pinned is not None and state.fault_storm is not None:  # counted towards a fault storm on this GPU
        health.record_fault(collector.notes_dir(item.config), state.pinned.uuid, state.fault_storm)
    if hasattr(item.config, "workerinput"):
        # exit before this report is sent: xdist reports the case as crashed (with the error
        # recorded here) and replaces the worker, so every other case still runs
        fault.record(collector.notes_dir(item.config), item.nodeid, error, report.longreprtext[-4000:],
                     [(k, v) for k, v in item.user_properties if k in (model.REPRO_KEY, model.REPRO_SOURCES_KEY)])
        os._exit(3)
    state.poisoned = (item.nodeid, error)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A device case does not start on a GPU that is gone, stormed, or whose context a fault poisoned."""
    if not any(item.get_closest_marker(t) for t in DEVICE_TIERS):
        return
    state = run_state.of(item.config)
    if state.gpu_lost:
        pytest.fail(f"{model.LOST}: {state.gpu_lost}", pytrace=False)
    storm = state.pinned and health.storm(collector.notes_dir(item.config), state.pinned.uuid)
    if storm:
        pytest.fail(f"{model.STORM}: {storm}", pytrace=False)
    if state.poisoned and item.get_closest_marker("gpu"):
        nodeid, error = state.poisoned
        pytest.fail(f"CUDA context poisoned by {nodeid} ({error}); run with -n 2 or more to isolate faults")


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report, sched) -> None:
    recorded = fault.recorded(collector.notes_dir(sched.config), crashitem)
    if recorded:  # only GPU cases record faults
        report.longrepr = f"{recorded}\n(the CUDA context was poisoned; its xdist worker was replaced)"
        report.user_properties = [(model.TIER_KEY, "gpu"), *fault.recorded_properties(collector.notes_dir(sched.config), crashitem)]
