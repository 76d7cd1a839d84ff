"""Exports pinned both ways: every function, type and operation the installed release's pinned
line exports (``fixtures.cases.exports``, ``pins/exports.json``) is here, under its name or, drifted,
under a spelling ``fixtures.dsl.compat`` knows (a rename: reported as drift); one gone with no known
spelling is red (removed). The other way, a name the release exports that no pin lists fails the
host tier's covered-or-named tests (``suites/host/test_semantics_on_host.py``)."""

import importlib

import pytest

from fixtures.cases import exports
from fixtures.dsl import compat

pytestmark = pytest.mark.api


def _resolve(name: str):
    """``cute.math.erf``, ``cutlass.Int8``, ``cute.ReductionOp.ADD``: the object, or AttributeError."""
    parts = name.split(".")
    obj = importlib.import_module("cutlass.cute" if parts[0] == "cute" else "cutlass")
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def _renamed(name: str) -> str | None:
    """The capability of ``fixtures.dsl.compat`` that knows ``name`` as a spelling and resolves to another."""
    full = "cutlass." + name if name.startswith("cute.") else name
    for capability in compat.CAPABILITIES.values():
        if full in map(str, capability.spellings) and compat.resolution(capability.name).used not in (None, full):
            return capability.name
    return None


@pytest.mark.parametrize("name", sorted(exports.pinned()))
def test_pinned_export_is_here(name):
    try:
        _resolve(name)
    except (ImportError, AttributeError):
        capability = _renamed(name)
        if capability is None:
            pytest.fail(f"{name} ({exports.pinned()[name]}): exported by DSL {exports.pinned_line()} (pinned) and not by "
                        f"this release ({exports.releases.installed()}): removed (a rename would be a "
                        f"fixtures.dsl.compat capability listing it)", pytrace=False)
        compat.resolve(capability)  # recorded as drift: the report lists the spelling in use
