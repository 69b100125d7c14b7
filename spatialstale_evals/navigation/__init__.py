"""The ``navigate`` family: the episode (the lake, the agent, its memory), the
memory strategies (a registry) and the navigation loop with its scorer."""
