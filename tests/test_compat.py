"""API drift resolution: the newest spelling that exists wins, an older one is reported, none is an error."""

import sys
import types

import pytest

from fixtures.dsl import compat
from fixtures.dsl.compat import Capability, MissingCapability, Spelling

pytestmark = pytest.mark.harness

NEW, OLD = "harness_fake_dsl_new", "harness_fake_dsl_old"


@pytest.fixture
def capability(monkeypatch):
    """Registers a fake capability ``fake`` spelled NEW.thing, then OLD.thing; resolution's cache is reset around it."""
    monkeypatch.setitem(
        compat.CAPABILITIES, "fake", Capability("fake", (Spelling(NEW, "thing"), Spelling(OLD, "thing")), "moved")
    )
    compat.resolution.cache_clear()
    yield "fake"
    compat.resolution.cache_clear()


def install_module(monkeypatch, name, **attrs):
    monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(__name__=name, **attrs))


def test_first_spelling_wins_when_both_exist(monkeypatch, capability):
    """A release that keeps an alias must still resolve to the current spelling, with no drift."""
    new, old = object(), object()
    install_module(monkeypatch, NEW, thing=new)
    install_module(monkeypatch, OLD, thing=old)
    found = compat.resolution(capability)
    assert (found.used, found.preferred, found.drifted) == (f"{NEW}.thing", f"{NEW}.thing", False)
    assert compat.resolve(capability) is new


@pytest.mark.parametrize(
    "new_module",
    [pytest.param(None, id="new-module-missing"), pytest.param({}, id="new-module-lacks-attr")],
)
def test_older_spelling_is_used_and_reported_as_drift(monkeypatch, capability, new_module):
    """An install with only the old spelling works, and the report says it is behind."""
    old = object()
    if new_module is not None:
        install_module(monkeypatch, NEW, **new_module)
    else:
        monkeypatch.delitem(sys.modules, NEW, raising=False)
    install_module(monkeypatch, OLD, thing=old)
    found = compat.resolution(capability)
    assert (found.used, found.preferred, found.drifted) == (f"{OLD}.thing", f"{NEW}.thing", True)
    assert compat.resolve(capability) is old
    assert found in compat.drift_report()


def test_no_spelling_raises_naming_every_spelling(monkeypatch, capability):
    """A capability gone from every known place must fail loudly, listing where it was looked for."""
    install_module(monkeypatch, NEW)
    monkeypatch.delitem(sys.modules, OLD, raising=False)
    with pytest.raises(MissingCapability) as raised:
        compat.resolve(capability)
    assert str(raised.value) == f"fake: none of {NEW}.thing, {OLD}.thing exists in this install"
    assert isinstance(raised.value, AttributeError)
    found = compat.resolution(capability)
    assert (found.used, found.drifted) == (None, True)


class CudaDriverDependencyError(Exception):
    """Named like the DSL's (4.3/4.4), which is all the classification looks at."""


class DSLCudaRuntimeError(Exception):
    """Named like the DSL's runtime error."""


class ICE(Exception):
    def __init__(self, cause):
        super().__init__("ICE")
        self.cause = cause  # the DSL's errors carry their cause here, not in __cause__


@pytest.mark.parametrize(
    ("error", "needed_a_driver"),
    [
        pytest.param(ICE(CudaDriverDependencyError("no libcuda")), True, id="first-compile-in-a-process"),
        pytest.param(RuntimeError("Unknown function cutlass_show_Tensor"), True, id="later-compiles"),
        pytest.param(DSLCudaRuntimeError("cudaErrorInsufficientDriver (error code: 35)"), True, id="later-runs-4.4"),
        pytest.param(DSLCudaRuntimeError("cudaErrorIllegalAddress (error code: 700)"), False, id="a-real-runtime-error"),
        pytest.param(RuntimeError("something else broke"), False, id="other-runtime-error"),
        pytest.param(ICE(TypeError("incompatible function arguments")), False, id="a-real-compile-error"),
        pytest.param(ValueError("Unknown function x"), False, id="not-a-runtime-error"),
    ],
)
def test_only_the_jit_engine_failure_counts_as_needing_a_driver(error, needed_a_driver):
    assert compat._jit_engine_needed_a_driver(error) is needed_a_driver


def _raising(error):
    class Compile:
        def __getitem__(self, options):
            return self

        def __call__(self, *args):
            raise error

    return Compile()


@pytest.mark.parametrize("driver_missing", [True, False], ids=["cpu-host", "gpu-host"])
def test_compile_traced_returns_none_only_without_a_driver(monkeypatch, driver_missing):
    """On a host with a driver the same failure is a real one and must surface."""
    import cutlass.cute as cute

    error = ICE(CudaDriverDependencyError("no libcuda"))
    monkeypatch.setattr(cute, "compile", _raising(error))
    monkeypatch.setattr(compat, "driver_missing", lambda: driver_missing)
    if driver_missing:
        assert compat.compile_traced(lambda: None) is None
    else:
        with pytest.raises(ICE):
            compat.compile_traced(lambda: None)
    monkeypatch.setattr(compat, "driver_missing", lambda: True)
    with pytest.raises(ICE):
        monkeypatch.setattr(cute, "compile", _raising(ICE(TypeError("bad"))))
        compat.compile_traced(lambda: None)
