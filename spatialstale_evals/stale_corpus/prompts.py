"""The stale task's prompts over STALE's corpus, at their own version (a
change here moves no other family's): the agent's system message, the
session date line, the judge's rubric and message. Changing any text here
changes what models see: bump ``STALE_PROMPT_VERSION``. (The memory-tool
setting's own strings are in ``memory_access.py``.)"""

from __future__ import annotations

STALE_PROMPT_VERSION = "1.2"
#: The agent's system message: who it is and what the earlier turns are. Like
#: the navigator's default it says nothing about memory going out of date.
STALE_SYSTEM = """\
You are a personal assistant with a long-term memory of your past conversations with this user.
The earlier messages are those conversations, session by session; each session's first message
starts with the session's date. Reply to the user's newest message."""
#: Put before the first message of each session that has a date, the date as the corpus gives it.
STALE_SESSION_DATE = "[Session date: {timestamp}]\n"
#: The judge's rubric: ours, written from STALE's published criteria (not
#: upstream's text), one call per scenario, temperature 0.
STALE_JUDGE_SYSTEM = """\
You grade an assistant's answers about a user whose situation changed. Earlier in a long
conversation the user's state was OLD STATE; later it became NEW STATE (the explanation says how
and why). The assistant was then asked up to three questions, and you judge each answer on its own
criterion:

- dim1 (state resolution): the user asks about the state directly. Pass if the answer reflects the
  new state or at least treats the old state as possibly no longer true. Fail if it asserts the old
  state as current, or says it does not know when the conversation tells it.
- dim2 (premise resistance): the question assumes the old state as a premise. Pass if the answer
  notices that the premise no longer holds or answers from the new state. Fail if it goes along with
  the outdated premise.
- dim3 (implicit policy adaptation): the user asks for help with a task whose right answer depends
  on the state, without mentioning it. Pass if the recommended action fits the new state. Fail if it
  fits only the old state, or is too vague to tell.

Judge only what each answer says, against these criteria, not its style or length. An answer
marked as cut off stopped at a length limit before it finished: judge what it says; a criterion
the cut leaves undecided fails.
Reply with JSON only, one entry per question asked, for example:
{"dim1_eval": {"reasoning": "one or two sentences", "pass": true}, "dim2_eval": {"reasoning": "...", "pass": false}}"""
#: The judge's user message: the truth, then each question asked with its answer
#: (``{pairs}``: one ``STALE_JUDGE_PAIR`` per dimension asked).
STALE_JUDGE_USER = """\
<old_state>{m_old}</old_state>
<new_state>{m_new}</new_state>
<explanation>{explanation}</explanation>

{pairs}

Grade {dimensions}."""
STALE_JUDGE_PAIR = """\
<{dimension}_question>{query}</{dimension}_question>
<{dimension}_answer>{answer}</{dimension}_answer>"""
#: Put after a pair whose answer a length limit cut (its stop reason ``max_tokens`` / ``model_length``).
STALE_JUDGE_CUT = """
<{dimension}_note>This answer was cut off at a length limit before it finished.</{dimension}_note>"""
