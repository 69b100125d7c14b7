"""Every string the ``lifelong`` task sends that the other tasks do not, versioned.

The system prompt tells the agent what the task is: episodes on one lake,
a context reset between them, a lake that may change, a memory directory
that persists, and the recommended note format (the paper's ``SAFE at
(r,c)`` / ``HOLE at (r,c)`` lines). It never says how to treat a note that
disagrees with what the agent sees: that is what the task measures.

The lake's rules, the observation, the step line and the ``move`` tool's
answers are the navigate task's (``harness/prompts.py``), so the two tasks
describe one world in one set of words. Under ``memory=none`` the system prompt
is ``LIFELONG_SYSTEM_NO_MEMORY``: the same words without the memory tool, the
notes or the write-back turn (version 1.1 added it). Under ``memory=transcript`` the
conversation is never reset: ``LIFELONG_SYSTEM_TRANSCRIPT`` (with the memory paragraph
under ``memory_tool=true``), ``TRANSCRIPT_EPISODE_START`` heading every later episode and
``NEXT_EPISODE_TRANSCRIPT`` in its write-back (version 1.2 added them; the ``notes`` and
``none`` prompts are unchanged); under ``memory=shared`` it is ``LIFELONG_SYSTEM_SHARED``
(version 1.2 added it too, with ``SCOUT_READ_ONLY`` and the provenance labels of
``provenance.py``). Changing any text here changes what models see: bump
``PROMPT_VERSION`` (recorded in every sample's metadata).
"""

from __future__ import annotations

from spatialstale_evals.harness.prompts import NAVIGATE_RULES

PROMPT_VERSION = "1.2"

#: The memory file ``initial_memory="paper"`` writes the instance's entries to.
PAPER_MEMORY_PATH = "/memories/lake.md"

#: How notes about cells are best written (every arm with the memory tool ends its system prompt with it).
NOTE_FORMAT = """Recommended format for notes about cells, one line each:
SAFE at (r,c)
HOLE at (r,c)"""
#: A turn with the memory tool, and the write-back turn, then ``NOTE_FORMAT`` (``notes`` and ``shared``).
MEMORY_TURNS = (
    """Each turn, call `move` once with direction UP, DOWN, LEFT or RIGHT. You may call `memory` before
you move (up to {max_memory_calls} memory calls per turn; they do not use up steps). When an episode
ends you get one more turn to update your memory before the next episode begins.

"""
    + NOTE_FORMAT
)

LIFELONG_SYSTEM = (
    NAVIGATE_RULES
    + """

You will play {episodes} episodes on this same lake, one after another, always from the same start
to the same goal. Each episode starts a new conversation: you will not remember anything from an
earlier episode except what you saved with the `memory` tool, whose /memories directory is kept
from one episode to the next. Between episodes, and sometimes during one, some cells of the lake
may change between ice and hole.

"""
    + MEMORY_TURNS
)

#: ``memory=none``: the same lake, episodes and rules, with nothing kept between
#: episodes and no word of memory or notes (``arms.py``).
LIFELONG_SYSTEM_NO_MEMORY = (
    NAVIGATE_RULES
    + """

You will play {episodes} episodes on this same lake, one after another, always from the same start
to the same goal. Each episode starts a new conversation: you will not remember anything from an
earlier episode. Between episodes, and sometimes during one, some cells of the lake may change
between ice and hole.

Each turn, call `move` once with direction UP, DOWN, LEFT or RIGHT."""
)

#: ``memory=transcript``: one conversation across the episodes, never reset (``arms.py``).
LIFELONG_SYSTEM_TRANSCRIPT = (
    NAVIGATE_RULES
    + """

You will play {episodes} episodes on this same lake, one after another, always from the same start
to the same goal, all in this one conversation: when an episode ends, the next begins here, with
you back at the start. Between episodes, and sometimes during one, some cells of the lake may
change between ice and hole.

Each turn, call `move` once with direction UP, DOWN, LEFT or RIGHT."""
)
#: ``memory=transcript`` with ``memory_tool=true``: the same, and the memory tool as ``notes`` offers it.
TRANSCRIPT_MEMORY_TOOL = (
    """

You may also call `memory` before you move (up to {max_memory_calls} memory calls per turn; they do
not use up steps); its /memories directory is kept from one episode to the next. When an episode
ends you get one more turn to update your memory before the next episode begins.

"""
    + NOTE_FORMAT
)

#: ``memory=shared``: the notes' words, with the episodes taken in turns by two agents sharing /memories.
LIFELONG_SYSTEM_SHARED = (
    NAVIGATE_RULES
    + """

You and another agent take turns playing {episodes} episodes on this same lake, one after another,
always from the same start to the same goal. Each episode starts a new conversation: you will not
remember anything from an earlier episode except what is saved with the `memory` tool, whose
/memories directory is kept from one episode to the next and shared with the other agent, who
reads and writes the same files. Between episodes, and sometimes during one, some cells of the lake
may change between ice and hole.

"""
    + MEMORY_TURNS
)
#: Added to the scout's system prompt under ``scout_access=readonly``.
SCOUT_READ_ONLY = "\n\nYour access to /memories is read-only: you can view the notes but not change them."
#: ``memory=transcript``: heads the first prompt of every episode after the first.
TRANSCRIPT_EPISODE_START = (
    "Episode {episode} of {episodes} begins. You are back at the start; the lake may have changed since you "
    "last saw it."
)
#: ``memory=transcript``: the write-back's line about the next episode (the conversation goes on).
NEXT_EPISODE_TRANSCRIPT = "Episode {episode} starts next, in this same conversation. "

#: Heads the first prompt of every episode.
EPISODE_START = "Episode {episode} of {episodes} begins."

#: The write-back turn after an episode: the outcome, and only the memory tool.
WRITE_BACK = (
    "Episode {episode} of {episodes} is over: {outcome} after {steps} steps. {next_episode}"
    "You may now use the `memory` tool to update your notes (up to {max_memory_calls} calls); "
    "reply without a tool call when you are done."
)
NEXT_EPISODE = "Episode {episode} starts next, with a new conversation. "
LAST_EPISODE = "It was the last episode. "

#: The answer to a memory call over the turn's cap.
MEMORY_LIMIT = "Not executed: at most {cap} memory calls per turn. Call `move` now."
MEMORY_LIMIT_WRITE_BACK = "Not executed: at most {cap} memory calls in this turn."
#: The answer to a memory call that failed in a way the tool itself did not report.
MEMORY_FAILED = "Error: the memory call failed ({error})."
#: The answer to a `move` call in the write-back turn (only `memory` is offered).
MOVE_AFTER_EPISODE = "Ignored: the episode is over; only `memory` is available now."
