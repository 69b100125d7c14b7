"""The measurements behind ``benchmarks/perf.py``, one module per measurement.

``runner`` holds what every measurement shares (timed in-process runs, model
events, statistics), ``providers`` the benchmark-only ``perfbench/<name>``
model providers (registered with Inspect when it is imported), ``report`` the
Markdown tables; ``overhead`` (with ``profiling``), ``tokens``, ``memory``,
``logs`` and ``scaling`` each measure one thing and return plain dicts, which
``perf.py`` gathers into its JSON. Importing any of them changes no
production code: the one measurement that wraps the scripted agents' own
functions (``overhead``) does so only inside a ``with`` block.
"""
