"""The Inspect layer: prompts, the shared audit, the navigation loop, scorers
and scripted reference agents. Builds on ``spatialstale_evals.world``."""
