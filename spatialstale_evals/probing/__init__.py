"""The ``probe`` family: STALE's three questions about single entries whose
truth the lake knows, their solver, scorer and metrics."""
