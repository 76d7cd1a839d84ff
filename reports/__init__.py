"""Run reports: the result model (``model``) and its vocabulary, its writers (``report_files``,
``summary``, the plots, ``atomic``: the one writer of whole files), a report folder claimed for
one writer (``report_folder``), bandwidth baselines and the gate (``baseline``, ``gate``),
``usage`` (the one class of bad input), and ``python -m reports`` (``compare``, ``merge``,
``release_table``). Knows nothing of the pytest plugin; never imports ``fixtures``.
"""
