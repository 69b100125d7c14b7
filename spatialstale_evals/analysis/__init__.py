"""Analysis of SpatialSTALE logs: the paper's tables, paired tests and plots
(``report``), and the full run matrix on ``eval_set`` (``matrix``).

Imports ``world`` and ``harness``; nothing there imports this package.
"""
