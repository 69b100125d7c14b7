"""Inspect registry entry point: importing this registers the suite's tasks
(``spatialstale_evals/detect``, ``spatialstale_evals/navigate``) and the
``spatialstale/<policy>`` scripted model provider."""

from inspect_ai.model import modelapi

from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate


@modelapi(name="spatialstale")
def spatialstale():  # noqa: ANN201 - Inspect's provider factory protocol
    from spatialstale_evals.harness.provider import ScriptedAPI

    return ScriptedAPI


__all__ = ["detect", "navigate", "spatialstale"]
