"""Inspect registry entry point: importing this registers the suite's tasks
(``spatialstale_evals/detect``, ``spatialstale_evals/navigate``, every name in
the package's ``__all__``) and the ``spatialstale/<policy>`` scripted model
provider."""

from inspect_ai.model import modelapi

from spatialstale_evals import TASKS, task_functions

task_functions()  # imports each task module, whose @task registers it


@modelapi(name="spatialstale")
def spatialstale():  # noqa: ANN201 - Inspect's provider factory protocol
    from spatialstale_evals.harness.provider import ScriptedAPI

    return ScriptedAPI


__all__ = [*TASKS, "spatialstale"]
