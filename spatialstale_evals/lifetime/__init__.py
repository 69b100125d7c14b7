"""The ``lifelong`` task family: memory the agent writes itself, across the
episodes of one lake's lifetime, scored exactly against the lake's truth.

It imports only ``spatialstale_evals.world``, ``spatialstale_evals.harness``
and itself."""
