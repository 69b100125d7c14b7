"""The scripted reference agents (``agents``) and the Inspect model provider
that serves them as ``spatialstale/<policy>`` (``api``)."""
