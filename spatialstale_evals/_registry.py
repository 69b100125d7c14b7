"""Inspect registry entry point: importing this registers the suite's tasks and
model providers with Inspect (``spatialstale_evals/detect`` etc.)."""
