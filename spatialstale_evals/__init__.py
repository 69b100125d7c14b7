"""SpatialSTALE evals: does an agent notice that its spatial memory has gone stale?

    from inspect_ai import eval
    from spatialstale_evals import detect, navigate
    eval(detect(regime="L2"), model="openai/gpt-4o")

The tasks are exported here as inspect_evals packages do. Eagerly, not
lazily: importing the ``detect`` submodule rebinds the package attribute
``detect`` to the module, so a lazy ``__getattr__`` would hand out the module
once the registry had loaded it. The price is that ``spatialstale_evals.world``
alone also loads Inspect (about 1.5 s); the world's own modules still import
nothing from the Inspect layer.
"""

from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate

__all__ = ["detect", "navigate"]
