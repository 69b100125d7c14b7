"""Running the suite at scale: the paper's matrix of tasks on Inspect's
``eval_set`` (resumable) and its cost, priced without a model call.

Imports the tasks and ``harness``; ``analysis`` (which only reads logs) does
not import this package, nor does anything below it.
"""
