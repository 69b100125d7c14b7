"""The ``detect`` family: audit windows over an instance's memory, their scorer
and metrics. Builds on ``harness`` (the shared audit) and ``world``."""
