"""Bad input to the harness (an option, an input file, a stage module), as one class: each is
raised with a one-line message, and ``conftest.py`` turns exactly these into pytest's usage error
(exit status 4) while the run starts. Any other exception then is a bug and shows as one."""


class HarnessUsageError(ValueError):
    """A one-line reason the run cannot start with what it was given (a ``ValueError``, so the
    ``python -m reports`` commands that catch those keep doing so)."""
