"""The SpatialSTALE world: grids, change regimes, memory, observations, the env.

Its modules import nothing from Inspect; the Inspect layer and the analysis
build on it. (Importing it still runs ``spatialstale_evals/__init__.py``, which
exports the two tasks and so loads Inspect.)
"""

from spatialstale_evals.world.env import ENV_ID, DynamicFrozenLakeEnv, register_env
from spatialstale_evals.world.grid import ACTIONS, Cell, Grid
from spatialstale_evals.world.instance import Instance, generate_instance, step_budget
from spatialstale_evals.world.memory import MemoryEntry
from spatialstale_evals.world.regimes import REGIMES, Event

register_env()

__all__ = [
    "ACTIONS",
    "ENV_ID",
    "REGIMES",
    "Cell",
    "DynamicFrozenLakeEnv",
    "Event",
    "Grid",
    "Instance",
    "MemoryEntry",
    "generate_instance",
    "register_env",
    "step_budget",
]
