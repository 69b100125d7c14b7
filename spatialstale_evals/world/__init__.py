"""The SpatialSTALE world: grids, change regimes, memory, observations, the env.

Imports nothing from Inspect; the Inspect layer and the analysis build on it.
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
