"""The Inspect model provider that serves the scripted reference agents as
``spatialstale/<name>`` (``api``): a family's own agents by name, the
built-in policies (``harness/belief.py``) through each family's ``scripted_reply``."""
