"""fixtures.cases.releases: expectations keyed by the release that introduced them."""

import pytest
from packaging.version import Version

from fixtures.cases import releases

pytestmark = pytest.mark.harness

HISTORY = {"4.3": "0", "4.6": "generic"}


@pytest.mark.parametrize(
    ("release", "form"),
    [("4.3.0", "0"), ("4.5.3", "0"), ("4.6.0", "generic"), ("4.8.1", "generic"), ("5.0", "generic")],
)
def test_the_newest_form_at_or_before_the_release_applies(release, form):
    assert releases.by_release(HISTORY, Version(release)) == form


def test_a_release_older_than_every_entry_is_an_error():
    with pytest.raises(LookupError, match="4.2.1 predates"):
        releases.by_release(HISTORY, Version("4.2.1"))


def test_the_installed_release_is_used_by_default(monkeypatch):
    monkeypatch.setattr(releases, "installed", lambda: Version("4.4.2"))
    assert releases.by_release(HISTORY) == "0"
    assert releases.matches("<4.6") and not releases.matches(">=4.6") and releases.matches("")
