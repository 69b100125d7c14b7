"""One line of an agent's notes, read as cell claims: the free-text grammar.

A line is cut into tokens (cells, claim words, negations, time words, doubt
words, glue) and into clauses (at ``;``, a sentence's end, ``but``). In a
clause, a claim word takes the markers before it (``not``, ``no longer``,
``was``, ``now``, ``->``); words joined by an update (``was X, now Y``,
``X -> Y``, ``changed from X to Y``) make one *chain*, whose value is its
current word; a chain binds the cells it names: forward (``HOLE at (3,4)``,
``Holes: (3,4), (5,6)``, ``safe at (3,4) and (3,5)``) or backward (``(3,4):
hole``, ``(3,4) and (3,5) are safe``, ``(3,4)=H``). Each cell's claims are
then ordered: current (after an update word) over plain over past (no claim).

The rule is *when in doubt, read nothing; never the opposite*: a line with a
doubt word or ``?`` (``maybe``, ``probably``, ``might``, ``or``, ``if``, and
words that make a claim word name another place: ``except``, ``near``,
``avoiding``, ``neither`` ..., or a direction right before it: ``route along
holes``, ``avoid holes``), opposite
claims about one cell that no update word orders, a negation or an update that
attaches to no claim word (``HOLE at (3,4), not anymore``), a double negation,
or a retraction (``wrong``, ``outdated``) is *ambiguous*: counted, no claim.
A negated claim word is its opposite (``no hole at (3,4)`` is SAFE, ``(3,4)
isn't safe`` a hole); a negated ``start``, ``goal`` or letter claims nothing.

Every number is matched by a bounded pattern (at most four digits, not
followed by a fifth) before ``int()``, so no digit run can raise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spatialstale_evals.world.grid import Cell

SAFE, HOLE_CLAIM = "SAFE", "HOLE"
#: A cell's value that reads but claims nothing (``?``, ``unknown``).
UNKNOWN = "UNKNOWN"

_N = r"(\d{1,4})(?!\d)"
#: Every way a cell is written: ``(3,4)`` (``(r3,c4)``, ``(row 3, col 4)``), ``[3,4]``,
#: ``row 3 col 4``, ``col 4 row 3`` (swapped), ``r3c4``.
_CELL_FORMS = (
    rf"\(\s*(?:r(?:ow)?\s*[=:]?\s*)?{_N}\s*[,;]\s*(?:c(?:ol(?:umn)?)?\s*[=:]?\s*)?{_N}\s*\)",
    rf"\[\s*{_N}\s*,\s*{_N}\s*\]",
    rf"\brow\s*[:=#]?\s*{_N}\s*[,;/]?\s*(?:col(?:umn)?|c)\s*[:=#]?\s*{_N}",
    rf"\bcol(?:umn)?\s*[:=#]?\s*{_N}\s*[,;/]?\s*row\s*[:=#]?\s*{_N}",
    rf"\br{_N}\s*,?\s*c{_N}",
)
_TOKEN = re.compile(
    "|".join(f"(?P<cell{i}>{form})" for i, form in enumerate(_CELL_FORMS))
    + r"|(?P<arrow>-+>|=+>|→|⇒|⟶)|(?P<q>\?)|(?P<stop>[;!|]|\.(?=\s|$))|(?P<sep>[:=]|[-–—](?![-–—]*>))"
    + r"|(?P<lsep>[,&+/])|(?P<word>[a-z][a-z'’]*)|(?P<num>\d+)",
    re.IGNORECASE,
)
#: Any cell, for a quick look before a line is cut into tokens.
ANY_CELL = re.compile("|".join(_CELL_FORMS), re.IGNORECASE)

_SAFE_WORDS = ("safe", "ice", "icy", "frozen", "walkable", "passable", "solid")
_HOLE_WORDS = ("hole", "holes", "danger", "dangers", "dangerous", "deadly", "lethal", "unsafe")
#: Claim words that never bind forward (the observation's ``Goal at (7,7).``).
_BACKWARD_ONLY = {"start": SAFE, "goal": SAFE}
#: Single letters, read only as a cell's value (``(3,4)=H``, ``(3,4): F``).
LETTERS = {"s": SAFE, "f": SAFE, "g": SAFE, "h": HOLE_CLAIM}
_UNKNOWN_WORDS = ("unknown", "unexplored", "unseen", "unvisited", "agent", "me")
#: Word -> token kind (claim words are looked up apart).
_KINDS: dict[str, str] = {
    **dict.fromkeys(("not", "no", "never", "isn't", "isnt", "aren't", "arent", "don't", "dont", "doesn't"), "neg"),
    **dict.fromkeys(("cannot", "can't", "cant", "won't", "nothing"), "neg"),
    **dict.fromkeys(("wasn't", "wasnt", "weren't"), "negpast"),
    **dict.fromkeys(("was", "were", "previously", "formerly", "originally", "initially", "earlier"), "past"),
    **dict.fromkeys(("before", "old", "prior", "former", "used", "had", "past"), "past"),
    **dict.fromkeys(("now", "currently", "current", "became", "become", "becomes", "turned", "turns"), "now"),
    **dict.fromkeys(("changed", "changes", "updated", "update", "latest", "new", "flipped"), "now"),
    **dict.fromkeys(("thawed", "melted", "froze", "refroze", "refrozen", "anymore"), "now"),
    **dict.fromkeys(("to", "into"), "to"),
    **dict.fromkeys(("from",), "from"),
    **dict.fromkeys(("at", "on", "in", "located"), "at"),
    **dict.fromkeys(("and", "also", "both", "plus", "but"), "lsep"),
    **dict.fromkeys(("maybe", "perhaps", "possibly", "possible", "probably", "probable", "likely"), "unc"),
    **dict.fromkeys(("unlikely", "might", "may", "could", "guess", "guessed", "guessing", "suspect"), "unc"),
    **dict.fromkeys(("suspected", "seems", "seem", "seemed", "apparently", "think", "believe", "looks"), "unc"),
    **dict.fromkeys(("unsure", "uncertain", "unclear", "unconfirmed", "unverified", "assume", "assumed"), "unc"),
    **dict.fromkeys(("presumably", "potential", "potentially", "either", "or", "doubt", "tbd", "verify"), "unc"),
    **dict.fromkeys(("if", "unless", "true", "yes"), "unc"),
    **dict.fromkeys(("except", "excluding", "unlike", "neither", "nor", "besides", "only", "than"), "rel"),
    **dict.fromkeys(("near", "nearby", "next", "beside", "adjacent", "around", "surrounding", "between"), "rel"),
    **dict.fromkeys(("zone", "area", "region", "moved", "avoiding", "without"), "rel"),
    **dict.fromkeys(("along", "alongside", "beyond", "behind", "toward", "towards", "through", "across"), "dir"),
    **dict.fromkeys(("via", "below", "above", "under", "beneath", "left", "right", "up", "down"), "dir"),
    **dict.fromkeys(("north", "south", "east", "west", "avoid", "avoids", "avoided", "dodge", "skip"), "dir"),
    **dict.fromkeys(("wrong", "false", "incorrect", "invalid", "outdated", "stale", "obsolete", "gone"), "doubt"),
    **dict.fromkeys(("ignore", "fixed", "removed", "deprecated", "longer", "retract"), "doubt"),
    **dict.fromkeys(("step", "enter", "go", "walk", "move", "tread", "stand", "visit", "visited"), "benign"),
    **dict.fromkeys(("explored", "been", "use", "cross", "pass", "touch", "land", "fall", "revisit"), "benign"),
    **dict.fromkeys(("a", "an", "the", "cell", "cells", "tile", "tiles", "square", "squares", "spot"), "fill"),
    **dict.fromkeys(("spots", "position", "positions", "pos", "location", "it", "its", "it's", "is"), "fill"),
    **dict.fromkeys(("are", "be", "being", "that", "that's", "there", "there's", "this", "still"), "fill"),
    **dict.fromkeys(("definitely", "confirmed", "verified", "known", "all", "each", "indeed"), "fill"),
    **dict.fromkeys(("certainly", "surely", "one", "ones", "here", "which", "as", "any"), "fill"),
    **dict.fromkeys(("found", "seen", "observed", "spotted", "noted", "marked", "so", "far", "path", "route"), "fill"),
}
#: Kinds that may stand between a claim word and the cell it binds, or its markers.
_GLUE = {"fill", "sep"}
_PRONOUNS = {"it", "it's", "which", "that's"}
#: Time words that may head a note (``UPDATE: ...``) without being an update of a claim.
_LABELS = {"update", "updated", "latest", "new", "current"}
_PAST_VETO = {"was", "were", "previously", "formerly"}
_MARKERS = {"neg", "negpast", "past", "now", "negnow", "to", "from"}


@dataclass
class Token:
    """One piece of a line: its kind (``cell``, ``claim``, ``letter``, ``neg``,
    ``past``, ``now``, ``unc``, ``fill``, ``sep``, ``lsep``, ``other``...), its
    text, and for a cell its (row, col), for a claim word its value; ``used``
    once a claim word took it as a marker or bound it."""

    kind: str
    text: str
    cell: Cell | None = None
    value: str | None = None
    flippable: bool = False
    forward: bool = True
    used: bool = False


def _word_kinds() -> dict[str, tuple[str, str | None, bool, bool]]:
    """word -> (kind, value, flippable, forward), claim words over the other kinds."""
    kinds: dict[str, tuple[str, str | None, bool, bool]] = {w: (k, None, False, True) for w, k in _KINDS.items()}
    kinds.update({w: ("letter", v, False, False) for w, v in LETTERS.items()})
    kinds.update({w: ("claim", UNKNOWN, False, False) for w in _UNKNOWN_WORDS})
    kinds.update({w: ("claim", v, False, False) for w, v in _BACKWARD_ONLY.items()})
    for claim, words in ((SAFE, _SAFE_WORDS), (HOLE_CLAIM, _HOLE_WORDS)):
        kinds.update({w: ("claim", claim, True, True) for w in words})
    return kinds


_WORD_KINDS = _word_kinds()
_OTHER = ("other", None, False, True)


def _word_token(word: str) -> Token:
    w = word.lower().replace("’", "'")
    kind, value, flippable, forward = _WORD_KINDS.get(w, _OTHER)
    return Token(kind, w, value=value, flippable=flippable, forward=forward)


def tokens(line: str) -> list[Token]:
    """The line's tokens, phrases folded (``no longer``, ``not sure``, ``used to``,
    ``frozen lake``, a value ``?`` after a cell and ``=`` or ``:``)."""
    out: list[Token] = []
    for m in _TOKEN.finditer(line):
        kind = m.lastgroup or ""
        if kind.startswith("cell"):
            out.append(Token("cell", m[0], cell=_pair(m)))
        elif kind == "word":
            out.append(_word_token(m[0]))
        elif kind == "sep" and m[0] in "-–—" and not out:
            continue  # a bullet
        elif kind in ("sep", "lsep"):
            out.append(Token(kind, m[0].strip()))
        elif kind == "num":  # a number as a cell's value (``(3,4)=0``) says something unread
            value = bool(out) and out[-1].kind == "sep" and out[-1].text in ":="
            out.append(Token("doubt" if value else "other", m[0]))
        else:
            out.append(Token(kind, m[0]))
    return _fold(out)


def _pair(m: re.Match[str]) -> tuple[int, int]:
    """The (row, col) of a cell match; ``col 4 row 3`` is swapped back."""
    groups = [g for g in m.groups() if g is not None]
    r, c = int(groups[1]), int(groups[2])  # groups[0] is the whole named group
    return (c, r) if m.lastgroup == "cell3" else (r, c)


def _fold(toks: list[Token]) -> list[Token]:
    """Phrases of two tokens made one (``tokens``)."""
    out: list[Token] = []
    for t in toks:
        prev = out[-1] if out else None
        if prev and prev.kind == "neg" and prev.text == "no" and t.text == "longer":
            prev.kind, prev.text = "negnow", "no longer"
        elif prev and prev.kind == "neg" and t.text in ("sure", "certain", "confirmed", "verified", "known", "clear"):
            prev.kind, prev.text = "unc", f"{prev.text} {t.text}"
        elif prev and prev.text == "used" and t.text == "to":
            continue
        elif prev and prev.text == "frozen" and t.text in ("lake", "lakes"):
            prev.kind, prev.value, prev.text = "other", None, "frozen lake"
        elif prev and prev.kind == "sep" and t.kind == "q" and len(out) > 1 and out[-2].kind == "cell":
            out.append(Token("claim", "?", value=UNKNOWN, forward=False))
        else:
            out.append(t)
    return out


@dataclass
class Chain:
    """Claim words one update joins; ``start``..``end`` span its markers too."""

    start: int
    end: int
    value: str | None  # SAFE, HOLE, UNKNOWN, None (past or no claim), or "AMBIGUOUS"
    tense: str  # "now", "plain" or "past"
    forward: bool
    word: bool  # ends on a claim word proper (not a letter, start, goal or unknown)


@dataclass
class Reading:
    """What one line (or one entry of a structured block) says."""

    claims: list[tuple[Cell, str]] = field(default_factory=list)
    ambiguous: bool = False
    read: bool = False  # a claim, an unknown cell, a past claim, or ambiguity


def _opposite(value: str) -> str:
    return HOLE_CLAIM if value == SAFE else SAFE


def _elements(clause: list[Token]) -> tuple[list[dict], bool]:
    """Each claim word with its markers (looked for backwards over glue, then a
    ``now`` or a past word right after it); False when a negation is doubled."""
    elems, ok = [], True
    for i, t in enumerate(clause):
        if t.kind not in ("claim", "letter"):
            continue
        marks, start, j = [], i, i - 1
        while j >= 0 and (clause[j].kind in _GLUE or clause[j].kind in _MARKERS) and not clause[j].used:
            if clause[j].kind in _MARKERS:
                marks.append(clause[j].kind)
                clause[j].used, start = True, j
            j -= 1
        t.used = True
        elems.append({"i": i, "start": start, "tok": t, "marks": marks})
    for e in elems:  # ``(3,4) safe now``, ``hole previously``
        k = e["i"] + 1
        while k < len(clause) and clause[k].kind in _GLUE:
            k += 1
        if k < len(clause) and clause[k].kind in ("now", "past") and not clause[k].used:
            e["marks"].append(clause[k].kind)
            clause[k].used = True
    for e in elems:
        negs = sum(m in ("neg", "negpast", "negnow") for m in e["marks"]) + (e["tok"].text == "unsafe")
        value = e["tok"].value
        if negs >= 2:
            ok = False
        elif negs == 1 and e["tok"].text != "unsafe":
            value = _opposite(value) if e["tok"].flippable else None
        e["value"] = value
        e["past"] = any(m in ("past", "negpast", "from") for m in e["marks"])
        e["now"] = any(m in ("now", "negnow", "to") for m in e["marks"])
    return elems, ok


def _chains(clause: list[Token], elems: list[dict]) -> list[Chain]:
    """Join elements an update links (nothing but glue, commas or an arrow
    between them, and an arrow or a time marker on the later)."""
    groups: list[list[dict]] = []
    for e in elems:
        if groups:
            last = groups[-1][-1]
            between = clause[last["i"] + 1 : e["start"]]
            arrow = any(t.kind == "arrow" for t in between)
            linked = arrow or e["now"] or e["past"] or last["past"]
            if all(t.kind in _GLUE | {"lsep", "arrow"} or t.used for t in between) and linked:
                for t in between:
                    t.used = t.used or t.kind == "arrow"
                e["now"] = e["now"] or arrow
                last["past"] = last["past"] or (arrow or e["now"]) and not e["past"]
                groups[-1].append(e)
                continue
        groups.append([e])
    out = []
    for g in groups:
        now = {e["value"] for e in g if e["now"] and not e["past"]}
        plain = {e["value"] for e in g if not e["now"] and not e["past"]}
        tier, tense = (now, "now") if now else (plain, "plain") if plain else (set(), "past")
        value = None if not tier else next(iter(tier)) if len(tier) == 1 else "AMBIGUOUS"
        last = g[-1]["tok"]
        out.append(Chain(g[0]["start"], g[-1]["i"], value, tense, last.forward, last.flippable))
    return out


def _bind(clause: list[Token], chain: Chain) -> tuple[list[Cell], str]:
    """The cells ``chain`` names and the binding's tense (an arrow from a cell,
    ``(3,4) -> safe``, makes it current)."""
    if clause[chain.end].kind == "letter":  # only ``(3,4)=H`` / ``(3,4): H``
        s = chain.start
        if s >= 2 and clause[s - 1].kind == "sep" and clause[s - 2].kind == "cell":
            return _list(clause, s - 2, -1), chain.tense
        return [], chain.tense
    # forward: glue, at most one ``at``, glue, a cell, then a list of cells
    k, explicit, seen_at = chain.end + 1, False, False
    while k < len(clause) and (clause[k].kind in _GLUE or clause[k].kind == "at" and not seen_at):
        seen_at = seen_at or clause[k].kind == "at"
        explicit = explicit or seen_at or clause[k].text == ":"
        k += 1
    forward: list[Cell] = []
    if chain.forward and k < len(clause) and clause[k].kind == "cell":
        forward = _list(clause, k, +1)
    if forward and explicit:
        return forward, chain.tense
    # backward: glue or an arrow (a comma too before a time marker), then a cell list
    k, tense = chain.start - 1, chain.tense
    timed = chain.tense != "plain" or chain.start < chain.end or any(
        t.text in _PRONOUNS for t in clause[max(chain.start - 3, 0) : chain.end]
    )
    while k >= 0 and (
        clause[k].kind in _GLUE | {"arrow"} or clause[k].kind == "lsep" and clause[k].text in (",", "but") and timed
    ):
        tense = "now" if clause[k].kind == "arrow" and tense == "plain" else tense
        k -= 1
    if k >= 0 and clause[k].kind == "cell":
        return _list(clause, k, -1), tense
    return forward, chain.tense


def _list(clause: list[Token], k: int, step: int) -> list[Cell]:
    """The cell at ``k`` and the cells listed with it (``,``, ``and``; an arrow
    after a claim word: ``Safe path: (0,0) -> (0,1)``)."""
    cells = [clause[k].cell]
    clause[k].used = True
    j = k + step
    while 0 <= j < len(clause):
        t = clause[j]
        if t.kind == "lsep" or t.kind == "arrow" and step > 0 or t.text in ("both", "all"):
            j += step
        elif t.kind == "cell":
            cells.append(t.cell)
            t.used = True
            j += step
        else:
            break
    return cells


def clauses(toks: list[Token]) -> list[list[Token]]:
    """Split at ``;``, ``!``, ``|``, a sentence's end, and ``but`` (unless ``but now``)."""
    out: list[list[Token]] = [[]]
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.kind == "stop" or t.text == "but" and not (nxt and nxt.kind == "now"):
            out.append([])
        else:
            out[-1].append(t)
    return [c for c in out if c]


def read_line(line: str, height: int, width: int) -> Reading:
    """One line's claims (module docstring)."""
    toks = tokens(line)
    if not any(t.kind == "cell" and _inside(t.cell, height, width) for t in toks):
        return Reading()
    if not any(t.kind in ("claim", "letter") for t in toks):
        return Reading()
    if any(t.kind in ("unc", "rel", "q", "doubt") for t in toks):
        return Reading(ambiguous=True, read=True)
    found: dict[Cell, list[tuple[str | None, str]]] = {}
    ok, stray = True, set()
    for clause in clauses(toks):
        elems, clause_ok = _elements(clause)
        ok = ok and clause_ok
        for chain in _chains(clause, elems):
            k = chain.start - 1
            while k >= 0 and clause[k].kind in _GLUE:
                k -= 1
            if k >= 0 and clause[k].kind == "dir":
                ok = False  # ``route along holes: ...``: the claim word names another place
            cells, tense = _bind(clause, chain)
            for cell in cells:
                found.setdefault(cell, []).append((chain.value, tense))
            if not cells and chain.tense != "past" and chain.word:
                stray.add(chain.value)
        loose = [t for t in clause if not t.used]
        for i, t in enumerate(loose):
            after = loose[i + 1] if i + 1 < len(loose) else None
            if t.kind in ("neg", "negnow", "negpast") and not (after and after.kind == "benign"):
                ok = False  # a negation of no claim word: the line is in doubt
            if t.kind in ("now", "negnow") and t.text not in _LABELS or t.kind == "past" and t.text in _PAST_VETO:
                ok = False  # an update or a past with no claim word
    found = {cell: made for cell, made in found.items() if _inside(cell, height, width)}
    if not found:
        return Reading()
    if not ok:
        return Reading(ambiguous=True, read=True)
    reading = Reading(read=True)
    for cell, made in found.items():
        tier = [v for v, tense in made if tense == "now"] or [v for v, tense in made if tense == "plain"]
        values = {v for v in tier if v is not None}
        if "AMBIGUOUS" in values or {SAFE, HOLE_CLAIM} <= values:
            return Reading(ambiguous=True, read=True)
        reading.claims += [(cell, v) for v in sorted(values) if v != UNKNOWN]
    if any(_opposite(v) in stray or "AMBIGUOUS" in stray for _, v in reading.claims):
        return Reading(ambiguous=True, read=True)  # a claim word of the other kind names no cell
    return reading


def _inside(cell: Cell | None, height: int, width: int) -> bool:
    return cell is not None and 0 <= cell[0] < height and 0 <= cell[1] < width
