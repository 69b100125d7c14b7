"""Inspect registry entry point: importing this registers the suite's tasks
(``spatialstale_evals/detect``, ``spatialstale_evals/navigate``, every name in
the package's ``__all__``), the ``spatialstale/<policy>`` scripted model
provider and ``spatialstale-local/<model>``, the local server's provider."""

from inspect_ai.model import modelapi

from spatialstale_evals import TASKS, task_functions
from spatialstale_evals.local_model.config import PROVIDER


@modelapi(name="spatialstale")
def spatialstale():  # noqa: ANN201 - Inspect's provider factory protocol
    from spatialstale_evals.scripted.api import ScriptedAPI

    return ScriptedAPI


@modelapi(name=PROVIDER)
def spatialstale_local():  # noqa: ANN201 - Inspect's provider factory protocol
    from spatialstale_evals.local_model.provider import LocalModelAPI

    return LocalModelAPI


# The tasks last: if a task module fails to import (an Inspect below the declared
# minimum, say), Inspect reports that error, and the providers above are registered
# all the same, so `--model spatialstale/...` does not hide it behind "Model API
# spatialstale not recognized".
task_functions()  # imports each task module, whose @task registers it

__all__ = [*TASKS, "spatialstale", "spatialstale_local"]
