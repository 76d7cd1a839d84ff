"""The harness's one installed name: the opt-in for a pytest run outside its checkout.

``pytest -p cute_dsl_harness ...`` loads the harness's plugin (``fixtures.plugin.hooks``) from the
checkout this module lies in (an editable install, as ``requirements.txt`` makes) and puts that
checkout on ``PYTHONPATH`` for the run's child processes. Nothing else loads it: installed, the
harness registers no pytest plugin, so another project's run in the same environment imports
nothing of it. In the checkout, ``conftest.py`` loads the plugin by the same name (loaded once).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

if not (ROOT / "fixtures" / "plugin" / "hooks.py").is_file():
    raise ImportError(f"cute_dsl_harness: no harness checkout beside {ROOT / 'cute_dsl_harness.py'}: "
                      "the harness runs from its checkout; install it with `pip install -e CHECKOUT`")

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in [str(ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep)] if p))

pytest_plugins = ["fixtures.plugin.hooks"]
