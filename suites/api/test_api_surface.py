"""The DSL API surface the harness and the tutorials' kernels use: present in this install, or
renamed with a known replacement (drift), and never marked deprecated without it being recorded.

A deprecation is re-emitted as ``api_surface.Deprecated`` so the run's report lists it under
what will break in a later release (the same place deprecation warnings the DSL emits during
any other case end up). Drift is a finding, not a failure: ``fixtures.dsl.compat`` resolves it.
"""

import warnings

import pytest

from fixtures.dsl import api_surface, compat

pytestmark = pytest.mark.api


def _record_deprecation(name: str, obj) -> None:
    message = api_surface.deprecation(obj)
    if message:
        warnings.warn(api_surface.Deprecated(f"{name}: {message}"), stacklevel=2)


def _known_spellings(name: str) -> list[str]:
    """The capabilities that list ``name`` as one of their spellings."""
    return [cap.name for cap in compat.CAPABILITIES.values() if name in map(str, cap.spellings)]


@pytest.mark.parametrize("use", api_surface.uses(), ids=lambda u: u.name)
def test_used_name_exists(use: api_surface.Use) -> None:
    """A name the harness spells directly must exist under that spelling in every release."""
    try:
        obj = api_surface.resolve(use.name)
    except (ImportError, AttributeError) as exc:
        known = _known_spellings(use.name)
        hint = f"; fixtures.dsl.compat knows it as {', '.join(known)}: use compat.resolve there" if known else ""
        pytest.fail(f"{use.name} (used at {use.where}) is not in this install ({type(exc).__name__}: {exc}){hint}",
                    pytrace=False)
    _record_deprecation(use.name, obj)


@pytest.mark.parametrize("capability", sorted(compat.CAPABILITIES))
def test_capability_resolves(capability: str) -> None:
    """Each capability the tutorials use resolves to one of its known spellings (an older one is drift)."""
    found = compat.resolution(capability)
    if found.used is None and compat.CAPABILITIES[capability].optional:
        return  # reported as drift (absent); the harness does without it
    tried = ", ".join(map(str, compat.CAPABILITIES[capability].spellings))
    assert found.used is not None, f"{capability}: none of {tried} exists in this install"
    _record_deprecation(found.used, compat.resolve(capability))
