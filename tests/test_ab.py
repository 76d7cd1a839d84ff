"""``python -m reports ab``: the verdict of each metric from its interval, the ABBA interleaving,
the ranked summary, and the drills (a fake worker stands for an install; the real worker's
figures are ``suites/compile/test_host_costs.py``'s)."""

import json
import statistics
import sys
import textwrap

import pytest

from reports import __main__ as cli
from reports import ab

pytestmark = pytest.mark.harness


def metric(a, b, kind="compile", size=""):
    return ab.judge(ab.Metric("m", kind, size, list(a), list(b)))


@pytest.mark.parametrize(("a", "b", "kind", "size", "verdict"), [
    ([1.00, 1.01, 0.99, 1.00] * 3, [1.00, 1.01, 0.99, 1.00] * 3, "compile", "", "same"),
    ([1.00, 1.01, 0.99, 1.00] * 3, [1.10, 1.11, 1.09, 1.10] * 3, "compile", "", "slower"),  # 10% more time
    ([1.00, 1.01, 0.99, 1.00] * 3, [0.90, 0.91, 0.89, 0.90] * 3, "compile", "", "faster"),
    ([1.0, 1.3, 0.7, 1.0], [1.05, 1.35, 0.75, 1.05], "compile", "", "ambiguous"),  # the interval straddles 5%
    ([3000, 3001, 2999, 3000] * 4, [2970, 2971, 2969, 2970] * 4, "bandwidth", "bandwidth", "slower"),  # 1% less
    ([3000, 3001, 2999, 3000] * 4, [2970, 2971, 2969, 2970] * 4, "bandwidth", "launch", "same"),  # within 2%
    ([2.0], [3150.0], "memory", "", "slower"),  # KiB a cycle: a compiled function kept each cycle
    ([2.0], [40.0], "memory", "", "same"),
], ids=["same", "slower", "faster", "ambiguous", "bandwidth-1pct", "launch-1pct", "leak", "no-leak"])
def test_a_verdict_is_where_the_interval_lies_against_the_threshold(a, b, kind, size, verdict):
    m = metric(a, b, kind, size)
    assert m.verdict == verdict, (m.delta, m.low, m.high, m.threshold)
    assert m.low <= m.delta <= m.high


# one fresh process a sample, eight a side (the fewest at which one process far off stays outside
# the rank interval): A's last ran 60% slow throughout, as one in six or so did on the CPU machine
ONE_SLOW_PROCESS = [1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 1.60]


@pytest.mark.parametrize(("b", "verdict"), [
    ([1.10, 1.11, 1.09, 1.10, 1.12, 1.08, 1.105, 1.095], "slower"),  # 10% slower compiles: Welch said -5 .. +20%
    ([1.00, 1.005, 0.995, 1.01, 0.99, 1.00, 1.02, 0.985], "same"),  # A/A: Welch said -20 .. +5%
], ids=["10pct-slower", "a-a"])
def test_one_process_far_off_moves_neither_the_change_nor_its_interval(b, verdict):
    m = metric(ONE_SLOW_PROCESS, b, "compile")
    assert m.verdict == verdict, (m.delta, m.low, m.high)
    _, low, high = (100 * x / statistics.fmean(ONE_SLOW_PROCESS) for x in ab._welch(ONE_SLOW_PROCESS, b))
    assert low < -5 or (low < 5 < high)  # by the mean, Welch's interval: ambiguous


@pytest.mark.parametrize(("n", "m", "c"), [(3, 3, -1), (4, 4, 0), (5, 5, 2), (6, 6, 5), (8, 8, 13), (12, 12, 37), (10, 6, 11)])
def test_the_rank_interval_takes_mann_whitneys_exact_critical_value(n, m, c):
    """The two-sided 5% critical values of U in the published tables."""
    assert ab._mann_whitney_lower(n, m) == c


def test_a_change_counts_as_b_costing_more_whichever_way_the_unit_runs():
    assert metric([100.0] * 4, [99.0] * 4, "bandwidth", "bandwidth").delta == pytest.approx(1.0)  # less GB/s
    assert metric([1.0] * 4, [1.1] * 4, "compile").delta == pytest.approx(10.0)  # more seconds


FAKE_WORKER = textwrap.dedent('''
    """A fake install: every figure 1.0 (x1.1 compiles with --plant-compile-delay), and a log of
    the requests in the order they came. It compiles the families FAKE_FAMILIES names (f1,f2);
    FAKE_PLAN_ERROR makes its plan fail; FAKE_GPU names a GPU it benches on, FAKE_SKIPS a bench case
    it leaves out. Its meanings: % and // on Int8 and Int32, C's and Python's rule (Int32 % Python's
    with --plant-meaning); FAKE_NO_HOST_JIT: none on the host, FAKE_ONLY_INT8: Int8's alone."""
    import json, os, sys
    slow = 1.1 if "--plant-compile-delay" in sys.argv else 1.0
    leak = [3000.0, 1.0] if "--plant-leak" in sys.argv else [1.0, 0.0]
    families = [f for f in os.environ.get("FAKE_FAMILIES", "f1,f2").split(",") if f]
    seconds = {"f1": 1.0, "f2": 2.0}
    cases = ["x-16384x8192", "y-16384x8192"]
    skips = {c: "fake: faults" for c in cases if c == os.environ.get("FAKE_SKIPS")}
    print(json.dumps({"ready": True, "dsl": "9.9", "torch": "0", "gpu": os.environ.get("FAKE_GPU")}), flush=True)
    for line in sys.stdin:
        r = json.loads(line)
        if r["op"] == "exit":
            break
        with open(os.environ["FAKE_LOG"], "a") as log:
            log.write(json.dumps([sys.argv[1:], r]) + "\\n")
        if r["op"] == "plan":
            answer = ({"error": os.environ["FAKE_PLAN_ERROR"]} if "FAKE_PLAN_ERROR" in os.environ else
                      {"cases": [c for c in cases if c not in skips], "skipped": skips, "families": families,
                       "left_out": {f: "fake: no" for f in seconds if f not in families}})
        elif r["op"] == "meanings":
            mod = {"Int8": "C: the sign of the dividend (torch.fmod)",
                   "Int32": "Python: the sign of the divisor (torch.remainder)" if "--plant-meaning" in sys.argv
                   else "C: the sign of the dividend (torch.fmod)"}
            types = ["Int8"] if "FAKE_ONLY_INT8" in os.environ else ["Int8", "Int32"]
            paths = [p for p in r["paths"] if not (p == "host" and "FAKE_NO_HOST_JIT" in os.environ)]
            answer = {"meanings": [m for t in types for p in paths for m in (
                          {"subject": "% on operands of different signs", "type": t, "path": p, "meaning": mod[t]},
                          {"subject": "// on operands of different signs", "type": t, "path": p, "meaning": "floor"})],
                      "left_out": {"host": "fake: needs the driver"} if "FAKE_NO_HOST_JIT" in os.environ else {},
                      "errors": {}}
        elif r["op"] == "bench":
            answer = {"error": "asked for a case it leaves out"} if r["case"] in skips else {"gbps": [100.0, 100.1, 99.9]}
        elif not set(r.get("families", [r.get("case")])) <= set(families):
            answer = {"error": f"asked to compile {r} but compiles only {families}"}
        elif r["op"] == "fresh":
            answer = {"import_seconds": [1.0], "from_dlpack": [10.0], "implicit_conversion": [12.0],
                      **{f: [slow * seconds[f]] for f in r["families"]}}
        else:
            answer = {"rss_kib_per_cycle": [leak[0]], "functions_kept_per_cycle": [leak[1]]}
        print(json.dumps(answer), flush=True)
''')


@pytest.fixture
def fake_worker(tmp_path, monkeypatch):
    (tmp_path / "fake_ab_worker.py").write_text(FAKE_WORKER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "requests.log"))
    monkeypatch.setattr(ab, "WORKER", "fake_ab_worker")
    return tmp_path / "requests.log"


def env_file(tmp_path, name, *exports):
    """An install as an env.sh: the fake worker on its path, ``exports`` (``NAME=value``) set."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "python3").exists():
        (bin_dir / "python3").symlink_to(sys.executable)
    lines = [f"export PATH={bin_dir}:$PATH", f"export PYTHONPATH={tmp_path}", *(f"export {e}" for e in exports)]
    path = tmp_path / f"{name}.sh"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_an_a_a_run_is_same_everywhere_and_asks_abba(fake_worker, tmp_path, capsys):
    assert cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(tmp_path / "out"), "--host-only"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("A/B: B is not slower than A on any of 8 metrics")
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| same | compile, pooled | `every family` |" in summary
    document = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert {m["verdict"] for m in document["metrics"]} == {"same"}
    assert {m["name"] for m in document["metrics"]} == {"import cutlass.cute", "from_dlpack", "implicit conversion",
                                                        "f1", "f2", "every family", "resident memory per compile",
                                                        "compiled functions kept per compile"}
    assert "meaning changed" not in out  # identical installs: no meaning line
    assert "Meanings the DSL defines itself: 4 observed by both (host), none changed." in summary
    assert document["meanings"]["a"] == document["meanings"]["b"] and len(document["meanings"]["a"]) == 4


def test_the_drills_in_b_are_caught(fake_worker, tmp_path, capsys):
    """A 10% slower compile and a kept compiled function each come out slower; the rest same."""
    code = cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(tmp_path / "out"), "--host-only",
                     "--plant-b-compile-delay", "0.1", "--plant-b-leak"])
    assert code == 1
    document = json.loads((tmp_path / "out" / "ab.json").read_text())
    slower = {m["name"] for m in document["metrics"] if m["verdict"] == "slower"}
    assert slower == {"f1", "f2", "every family", "resident memory per compile", "compiled functions kept per compile"}
    summary = (tmp_path / "out" / "summary.md").read_text().split("## What changed, ranked")[1]
    assert summary.index("`resident memory per compile`") < summary.index("`import cutlass.cute`")  # slower ranked first
    leak_row = next(row for row in summary.splitlines() if "`compiled functions kept per compile`" in row)
    assert "| 1 functions/cycle | 1 .. 1 functions/cycle | 0.5 functions/cycle |" in leak_row  # its own unit, not KiB
    assert "KiB/cycle |" in next(row for row in summary.splitlines() if "`resident memory per compile`" in row)
    assert (tmp_path / "out" / "ab-deltas.png").stat().st_size > 0
    # ABBA: each figure asked of A then B in even rounds, of B then A in odd ones; fresh-process figures 16 rounds
    asked = ["B" if argv else "A" for argv, r in map(json.loads, fake_worker.read_text().splitlines()) if r["op"] == "fresh"]
    assert asked == ["A", "B", "B", "A"] * 8


def test_an_install_that_is_not_there_is_one_line_before_anything_starts(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["ab", "--a", str(tmp_path / "nowhere" / "env.sh"), "--b", sys.executable, "--out", str(out)]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"reports ab: --a {tmp_path / 'nowhere' / 'env.sh'}: no such environment file"
    assert not out.exists()


def test_a_runs_host_costs_are_listed_in_its_summary_and_survive_results_json():
    from reports import summary
    from reports.model import CaseResult, Fingerprint, HostCost, RunResult

    figure = HostCost("import cutlass.cute", "s", [2.0, 2.5, 2.2])
    run = RunResult(fingerprint=Fingerprint(dsl="4.8.1"), arch="sm_90a", started="2026-11-26T10:00:00+00:00",
                    cases=[CaseResult("suites/compile/test_host_costs.py::test_import_time", "passed", "compile", 7.0,
                                      host_costs=[figure])])
    assert "| import cutlass.cute | 2.2 s | 3 | `test_import_time` |" in summary.render(run)
    assert RunResult.from_json(json.loads(json.dumps(run.to_json()))).cases[0].host_costs == [figure]


def test_a_negative_memory_figure_is_explained_once():
    """"-1022 KiB/cycle" memory per compile once stood in a summary with no word of what it means."""
    from reports import summary
    from reports.model import CaseResult, Fingerprint, HostCost, RunResult

    def run_of(*kib):
        figures = [HostCost("resident memory per compile", "KiB/cycle", [k]) for k in kib]
        return RunResult(fingerprint=Fingerprint(dsl="4.8.1"), arch="sm_90a", started="",
                         cases=[CaseResult("suites/compile/test_host_costs.py::test_memory", "passed", "compile", 7.0,
                                           host_costs=figures)])

    assert summary.render(run_of(-1022.0, -3.0)).count(summary.NEGATIVE_MEMORY) == 1
    assert summary.NEGATIVE_MEMORY not in summary.render(run_of(12.0))
    memory = ab.Metric("resident memory per compile", "memory", a=[-1022.0, 10.0], b=[5.0, 7.0])
    result = ab.AbRun({}, {}, [ab.Install("A", "a"), ab.Install("B", "b")], [ab.judge(memory)])
    assert summary.NEGATIVE_MEMORY in ab.render(result)


@pytest.mark.parametrize(("option", "value"), [("--rounds", "0"), ("--fresh-rounds", "3"), ("--plant-b-slowdown", "-0.01"),
                                                ("--plant-b-compile-delay", "1.5")])
def test_a_bad_value_is_one_line_before_any_worker_starts(tmp_path, capsys, option, value):
    out = tmp_path / "out"
    assert cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(out), option, value]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"reports ab: {option} ") and not out.exists()


def test_fresh_rounds_sets_how_many_fresh_processes_each_side_gets(fake_worker, tmp_path):
    assert cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(tmp_path / "out"), "--host-only",
                     "--fresh-rounds", "4"]) == 0
    asked = [r["op"] for _, r in map(json.loads, fake_worker.read_text().splitlines())]
    assert asked.count("fresh") == 8  # 4 rounds, A and B each


def test_a_family_one_install_cannot_compile_is_measured_by_neither_and_said(fake_worker, tmp_path, capsys):
    """B compiles only f2 (as 4.3 refuses the dynamic predicated family): both compile f2 alone, the
    growth cycles compile f2, and f1 is listed as not measured, with why."""
    b = env_file(tmp_path, "b", "FAKE_FAMILIES=f2")
    assert cli.main(["ab", "--a", sys.executable, "--b", b, "--out", str(tmp_path / "out"), "--host-only"]) == 0
    requests = [r for _, r in map(json.loads, fake_worker.read_text().splitlines())]
    assert {tuple(r["families"]) for r in requests if r["op"] == "fresh"} == {("f2",)}
    assert {r["case"] for r in requests if r["op"] == "growth"} == {"f2"}
    document = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert "f2" in {m["name"] for m in document["metrics"]} and "f1" not in {m["name"] for m in document["metrics"]}
    assert document["skipped"] == {"f1": "compile: install B cannot compile it here: fake: no",
                                   "calls (compiled call, TVM-FFI call)": "need a GPU: neither install sees one here"}
    assert "- `f1`: compile: install B cannot compile it here: fake: no" in (tmp_path / "out" / "summary.md").read_text()


def test_installs_that_compile_nothing_here_are_measured_without_compiles(fake_worker, tmp_path, capsys):
    """On a host where neither can compile (4.3 without a driver), import and conversions are
    measured, no growth cycle is asked for, and each compile figure is listed as not measured."""
    a, b = env_file(tmp_path, "a", "FAKE_FAMILIES="), env_file(tmp_path, "b", "FAKE_FAMILIES=")
    assert cli.main(["ab", "--a", a, "--b", b, "--out", str(tmp_path / "out"), "--host-only", "--fresh-rounds", "4"]) == 0
    assert capsys.readouterr().out.startswith("A/B: B is not slower than A on any of 3 metrics")
    requests = [r for _, r in map(json.loads, fake_worker.read_text().splitlines())]
    assert {r["op"] for r in requests} == {"plan", "fresh", "meanings"} and all(r["families"] == [] for r in requests if r["op"] == "fresh")
    skipped = json.loads((tmp_path / "out" / "ab.json").read_text())["skipped"]
    assert set(skipped) == {"f1", "f2", "memory and compiled functions kept per compile", "calls (compiled call, TVM-FFI call)"}
    assert skipped["f1"].startswith("compile: install A cannot compile it here")


def test_on_a_gpu_the_calls_are_listed_too_when_no_family_compiles(fake_worker, tmp_path):
    a, b = (env_file(tmp_path, side, "FAKE_FAMILIES=", "FAKE_GPU=H100") for side in "ab")
    assert cli.main(["ab", "--a", a, "--b", b, "--out", str(tmp_path / "out"), "--host-only", "--fresh-rounds", "4"]) == 0
    skipped = json.loads((tmp_path / "out" / "ab.json").read_text())["skipped"]
    assert skipped["calls, memory and compiled functions kept per compile"] == "no compile family both installs compile here"


def test_an_install_whose_plan_fails_is_one_line_and_exit_6(fake_worker, tmp_path, capsys):
    b = env_file(tmp_path, "b", "FAKE_PLAN_ERROR='HostJitBroken: host-side @cute.jit execution fails'")
    assert cli.main(["ab", "--a", sys.executable, "--b", b, "--out", str(tmp_path / "out"), "--host-only"]) == 6
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"reports ab: INSTALL BROKEN: install B ({b}): its plan failed: HostJitBroken: host-side @cute.jit")
    assert "fresh" not in fake_worker.read_text()


def test_an_install_that_cannot_run_is_exit_6_not_bs_slower_and_leaves_nothing(fake_worker, tmp_path, capsys):
    """A Python without the DSL as --a exited 1, the status of "B is slower", and left OUT/logs, so
    the rerun with the same --out was refused."""
    a = tmp_path / "a.sh"
    a.write_text("echo \"ModuleNotFoundError: No module named 'cutlass'\" >&2; exit 1\n")
    out = tmp_path / "out"
    assert cli.main(["ab", "--a", str(a), "--b", sys.executable, "--out", str(out), "--host-only"]) == 6
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"reports ab: INSTALL BROKEN: install A ({a}): its worker exited (1): ModuleNotFoundError: No module named 'cutlass'"
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(out), "--host-only",
                     "--fresh-rounds", "4"]) == 0  # the rerun with the same --out


@pytest.mark.parametrize("mode", [0o644, 0o755], ids=["not-executable", "no-program"])
def test_an_install_that_is_no_program_is_bad_input_one_line_exit_4(fake_worker, tmp_path, capsys, mode):
    """A non-executable --a exited 3 ("not written: ... Exec format error")."""
    a = tmp_path / "python"
    a.write_text("not a program\n")
    a.chmod(mode)
    out = tmp_path / "out"
    assert cli.main(["ab", "--a", str(a), "--b", sys.executable, "--out", str(out), "--host-only"]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"reports ab: --a {a}: ")
    assert not out.exists()


def test_an_earlier_ab_report_as_out_is_named_as_one(fake_worker, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(out), "--host-only", "--fresh-rounds", "4"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    assert cli.main(argv) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"reports ab: --out {out}: holds an earlier A/B report (ab.json); choose a new folder, or remove that one first"


def test_without_a_gpu_the_calls_and_the_bench_plan_are_listed_as_not_measured(fake_worker, tmp_path):
    assert cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(tmp_path / "out"),
                     "--fresh-rounds", "4"]) == 0
    skipped = json.loads((tmp_path / "out" / "ab.json").read_text())["skipped"]
    assert skipped == {"calls (compiled call, TVM-FFI call)": "need a GPU: neither install sees one here",
                       "bench plan (bandwidth)": "needs a GPU: neither install sees one here"}
    assert "- `calls (compiled call, TVM-FFI call)`: need a GPU" in (tmp_path / "out" / "summary.md").read_text()


def test_a_bench_case_one_install_leaves_out_is_asked_of_neither_and_said(fake_worker, tmp_path, monkeypatch):
    """On a GPU, B leaves out a case A benches (as 4.5 leaves out those that fault there): neither
    is asked for it, and it is listed as not measured, with the install and why."""
    monkeypatch.setenv("FAKE_GPU", "Fake GPU")
    b = env_file(tmp_path, "b", "FAKE_GPU='Fake GPU'", "FAKE_SKIPS=y-16384x8192")
    assert cli.main(["ab", "--a", sys.executable, "--b", b, "--out", str(tmp_path / "out"), "--fresh-rounds", "4"]) == 0
    benched = {r["case"] for _, r in map(json.loads, fake_worker.read_text().splitlines()) if r["op"] == "bench"}
    assert benched == {"x-16384x8192"}
    document = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert document["skipped"] == {"y-16384x8192": "install B: fake: faults"}
    assert {m["name"] for m in document["metrics"] if m["kind"] == "bandwidth"} == {"x-16384x8192"}


def test_cases_that_name_no_bench_case_are_bad_input_not_an_empty_pass(fake_worker, tmp_path, monkeypatch, capsys):
    """On a GPU a --cases glob that matches no case of the bench plan is one line, exit 4, nothing
    measured and no report (it ran the host costs and passed before); with --host-only, which
    benches nothing, --cases is refused before any worker starts."""
    monkeypatch.setenv("FAKE_GPU", "Fake GPU")
    out = tmp_path / "out"
    assert cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(out), "--cases", "nomatch*"]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("reports ab: --cases nomatch*: no bench case matches (they are named like x-16384x8192")
    assert not out.exists()
    assert [r["op"] for _, r in map(json.loads, fake_worker.read_text().splitlines())] == ["plan", "plan"]
    fake_worker.unlink()
    assert cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(out), "--host-only",
                     "--cases", "x*"]) == 4
    assert capsys.readouterr().err.startswith("reports ab: --cases: bench cases, which --host-only leaves out")
    assert not fake_worker.exists()  # no worker started


MOD_CHANGED = ("% on operands of different signs, Int32 (host): C: the sign of the dividend (torch.fmod) → "
               "Python: the sign of the divisor (torch.remainder)")


def test_a_changed_meaning_is_one_line_and_exit_1(fake_worker, tmp_path, capsys):
    """B's Int32 % planted to follow Python's rule: the one meaning that differs is one line in the
    verdict and in summary.md, both tables are kept, and the run exits 1 though no figure is slower."""
    code = cli.main(["ab", "--a", sys.executable, "--b", sys.executable, "--out", str(tmp_path / "out"), "--host-only",
                     "--fresh-rounds", "4", "--plant-b-meaning"])
    assert code == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["A/B: B is not slower than A on any of 8 metrics; 1 meaning changed", f"- meaning changed: {MOD_CHANGED}"]
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert [line for line in summary.splitlines() if "Int32 (host)" in line] == [f"- meaning changed: {MOD_CHANGED}",
                                                                                f"- {MOD_CHANGED}"]
    document = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert {m["verdict"] for m in document["metrics"]} == {"same"}
    changed = [(a, b) for a, b in zip(document["meanings"]["a"], document["meanings"]["b"]) if a != b]
    assert [(a["type"], b["meaning"]) for a, b in changed] == [("Int32", "Python: the sign of the divisor (torch.remainder)")]


def test_meanings_without_a_host_jit_are_listed_as_not_measured(fake_worker, tmp_path, capsys):
    """A is 4.3 on a CPU machine (its host JIT needs the driver): no meaning is compared, and that is said."""
    a = env_file(tmp_path, "a", "FAKE_NO_HOST_JIT=1")
    assert cli.main(["ab", "--a", a, "--b", sys.executable, "--out", str(tmp_path / "out"), "--host-only",
                     "--fresh-rounds", "4", "--plant-b-meaning"]) == 0
    assert "meaning changed" not in capsys.readouterr().out
    document = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert document["skipped"]["meanings (host)"] == "install A: fake: needs the driver"
    assert 'Meanings: none compared ("Not measured" says why).' in (tmp_path / "out" / "summary.md").read_text()


def test_a_meaning_only_one_install_observed_is_no_change_but_said(fake_worker, tmp_path, capsys):
    """B leaves Int32 out (as 4.3's GPU path cannot compile float %): not a change, listed as not measured."""
    b = env_file(tmp_path, "b", "FAKE_ONLY_INT8=1")
    assert cli.main(["ab", "--a", sys.executable, "--b", b, "--out", str(tmp_path / "out"), "--host-only",
                     "--fresh-rounds", "4"]) == 0
    skipped = json.loads((tmp_path / "out" / "ab.json").read_text())["skipped"]
    assert skipped["meanings only install A observed (2)"].endswith(
        "% on operands of different signs, Int32 (host); // on operands of different signs, Int32 (host)")


def test_the_real_workers_tell_a_planted_meaning_as_one_line(tmp_path):
    """Two real workers of this install, B with --plant-meaning: the semantics family's own cases and
    reading on the host JIT, the one planted meaning the only line."""
    from fixtures.dsl import compat

    if compat.host_jit_unavailable():
        pytest.skip(compat.host_jit_unavailable())
    a, b = ab.Install("A", sys.executable), ab.Install("B", sys.executable, ("--plant-meaning",))
    with open(tmp_path / "a.log", "w") as log_a, open(tmp_path / "b.log", "w") as log_b:
        workers = {"A": ab._Worker(a, log_a), "B": ab._Worker(b, log_b)}
        try:
            result = ab.AbRun(workers["A"].ready, workers["B"].ready, [a, b], [])
            ab._ask_meanings(workers, result, ["host"])
        finally:
            for worker in workers.values():
                worker.close()
    assert result.errors == [] and result.skipped == {}
    assert len(result.meaning_table("A")) > 40  # %, // and the conversions the host JIT runs
    assert result.changed_meanings == [MOD_CHANGED]
