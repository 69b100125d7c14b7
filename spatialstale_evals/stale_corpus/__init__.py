"""The ``stale`` family: STALE's corpus (records, trimming), its probes, its
judge and metrics, reading a judge's reply, and its scripted agents and judge."""
