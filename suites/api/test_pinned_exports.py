"""Exports pinned both ways: every function, type and operation the installed release's pinned
line exports (``fixtures.cases.exports``, ``pins/exports.json``) is here, under its name or, drifted,
under a spelling ``fixtures.dsl.compat`` knows (a rename: reported as drift); one gone with no known
spelling is red (removed). The other way, a name the release exports that no pin lists fails the
host tier's covered-or-named tests (``suites/host/test_semantics_on_host.py``)."""

import pytest

from fixtures.cases import exports
from fixtures.dsl import compat

pytestmark = pytest.mark.api


@pytest.mark.parametrize("name", sorted(exports.pinned()))
def test_pinned_export_is_here(name):
    try:
        compat.exported(name)
    except (ImportError, AttributeError):
        capability = compat.renamed(name)
        if capability is None:
            pytest.fail(f"{name} ({exports.pinned()[name]}): exported by DSL {exports.pinned_line()} (pinned) and not by "
                        f"this release ({exports.releases.installed()}): removed (a rename would be a "
                        f"fixtures.dsl.compat capability listing it)", pytrace=False)
        compat.resolve(capability)  # recorded as drift: the report lists the spelling in use
