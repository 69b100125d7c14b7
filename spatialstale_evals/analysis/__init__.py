"""Analysis of SpatialSTALE logs: the paper's tables, paired tests and plots,
and the benefit/safety view of memory (``spatialstale report``). It only reads
logs; running the matrix is ``spatialstale_evals.runs``.

Imports ``world`` and ``harness``; nothing there imports this package.
"""
