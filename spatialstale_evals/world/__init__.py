"""The SpatialSTALE world: grids, change regimes, memory, observations, the env.

It imports nothing from Inspect (a test checks that ``import
spatialstale_evals.world`` leaves ``inspect_ai`` unloaded); the Inspect layer
and the analysis build on it.
"""

from spatialstale_evals.world.env import ACTION_IDS, ACTION_NAMES, ENV_ID, DynamicFrozenLakeEnv, register_env
from spatialstale_evals.world.grid import MOVE_ORDER, Cell, Grid
from spatialstale_evals.world.instance import Instance, Window, generate_instance, step_budget
from spatialstale_evals.world.memory import MemoryEntry
from spatialstale_evals.world.regimes import REGIMES, Event, Regime, register_regime

register_env()

__all__ = [
    "ACTION_IDS",
    "ACTION_NAMES",
    "ENV_ID",
    "MOVE_ORDER",
    "REGIMES",
    "Cell",
    "DynamicFrozenLakeEnv",
    "Event",
    "Grid",
    "Instance",
    "MemoryEntry",
    "Regime",
    "Window",
    "generate_instance",
    "register_env",
    "register_regime",
    "step_budget",
]
