"""The api suite's machinery: which names the source scan finds, what counts as deprecated,
and which warnings become recorded findings."""

import warnings

import pytest
from typing_extensions import deprecated

from fixtures.dsl import api_surface
from fixtures.plugin import collector
from reports.model import Deprecation

pytestmark = pytest.mark.harness

SOURCE = """
import cutlass
import cutlass.cute as cute
import numpy as np
from cutlass.cute.runtime import from_dlpack as fd
from cutlass import range_constexpr

x = cute.arch.thread_idx()
y = cutlass.Float16
z = np.zeros(3).shape
w = cute.compile[cute.KeepPTX]
v = fd(z).mark_layout_dynamic()
"""


def test_scan_finds_whole_chains_from_dsl_imports_only(tmp_path, monkeypatch):
    """Maximal attribute chains rooted at a DSL alias, and from-imports; numpy's and method calls on
    values are not DSL names."""
    monkeypatch.setattr(api_surface, "ROOT", tmp_path)
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    found = api_surface._uses_in(path)
    assert sorted(found) == [
        "cutlass.Float16",
        "cutlass.cute.KeepPTX",
        "cutlass.cute.arch.thread_idx",
        "cutlass.cute.compile",
        "cutlass.cute.runtime.from_dlpack",
        "cutlass.range_constexpr",
    ]
    assert found["cutlass.cute.arch.thread_idx"] == "mod.py:8"


def test_the_project_uses_the_tutorials_core_names():
    """The scan reads the real stages: the kernels' launch-side names must be among the uses."""
    names = {u.name for u in api_surface.uses()}
    assert {"cutlass.cute.arch.thread_idx", "cutlass.cute.zipped_divide", "cutlass.cute.runtime.from_dlpack"} <= names
    assert all(name.startswith("cutlass.") for name in names)


def test_resolve_reports_a_missing_name():
    with pytest.raises((AttributeError, ImportError)):
        api_surface.resolve("json.no_such_name_anywhere")
    assert api_surface.resolve("json.decoder.JSONDecoder").__name__ == "JSONDecoder"


def current(x):
    return x


@deprecated("old_name is deprecated, use current instead")
def old_name(x):
    return current(x)


@deprecated("OldClass is going away")
class OldClass:
    pass


def test_deprecation_marks_the_wrapper_and_the_class_not_what_they_wrap():
    """The decorator sets ``__deprecated__`` on the function it wraps as well; only the wrapper
    (and a class marked in place) is deprecated, a subclass inherits the attribute but is not."""
    wrapped = old_name.__wrapped__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # subclassing warns, as it should

        class NewClass(OldClass):
            pass

    assert api_surface.deprecation(old_name) == "old_name is deprecated, use current instead"
    assert getattr(wrapped, "__deprecated__", None) is not None
    assert api_surface.deprecation(wrapped) is None
    assert api_surface.deprecation(OldClass) == "OldClass is going away"
    assert api_surface.deprecation(NewClass) is None
    assert api_surface.deprecation(current) is None
    assert api_surface.deprecation(3) is None


def warning(message, category, filename="/work/x.py"):
    return warnings.WarningMessage(message, category, filename, 7)


@pytest.mark.parametrize(
    ("message", "category", "filename", "recorded"),
    [
        pytest.param("x", api_surface.Deprecated, "/work/suites/api/t.py", True, id="api-suite"),
        pytest.param("old op", DeprecationWarning, "/site-packages/nvidia_cutlass_dsl/dsl_packages/cutlass/cute/core.py", True,
                     id="from-dsl-file"),
        pytest.param("cute.testing.benchmark is deprecated", DeprecationWarning, "/work/t.py", True, id="shim-names-dsl"),
        pytest.param("torch.foo is deprecated", FutureWarning, "/site-packages/torch/x.py", False, id="torch"),
        pytest.param("cute.x changed", UserWarning, "/work/t.py", False, id="not-a-deprecation"),
    ],
)
def test_only_dsl_deprecations_become_findings(message, category, filename, recorded):
    finding = collector.deprecation_finding(warning(message, category, filename), "t.py::test")
    assert (finding is not None) == recorded
    if recorded:
        assert finding == Deprecation(category.__name__, message, f"{filename}:7", "t.py::test")
