"""Run reports: the result model (``model``), its writers (``report_files``, ``summary``, the
plots), bandwidth baselines and the gate (``baseline``, ``gate``), and ``python -m reports``
(``compare``, ``merge``, ``release_table``). The run's recorder and its state (``collector``,
``run_state``, ``health``, ``bench_plugin``, ``bench_phase``) are pytest plugin code that still
lives here. Never imports ``fixtures``.
"""
