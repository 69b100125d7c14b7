"""The ``probe`` task (specification.md#probe): target selection against an independent
reading of the instance, the scripted bounds, chance on the controls for
one-sided agents, the conversation modes, junk replies and bad parameters."""

from __future__ import annotations

import functools
import re
from collections import deque
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, resolve_sample_attachments
from inspect_ai.model import ChatMessageAssistant, ModelOutput, modelapi
from inspect_ai.tool import ToolCall

from spatialstale_evals.harness.belief import entries, position
from spatialstale_evals.probe import probe
from spatialstale_evals.scripted.api import ScriptedAPI, count_input_tokens, last_prompt, text_output
from spatialstale_evals.world import dataset

MOVES = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}
STALE = {"stale_thaw", "stale_freeze"}


def metric(log: EvalLog, name: str) -> float:
    return log.results.scores[0].metrics[name].value


def probes(log: EvalLog) -> list[dict]:
    return [r for s in log.samples for r in s.scores["probe_scorer"].metadata["probes"]]


def run(task, model: str, tmp_path: Path, limit: int = 4, **kwargs) -> EvalLog:
    kwargs.setdefault("log_realtime", False)  # read when finished: no live-viewing buffer
    log = inspect_eval(task, model=model, log_dir=str(tmp_path), limit=limit, display="none", **kwargs)[0]
    assert log.status == "success", log.error
    assert not any(s.error for s in log.samples)
    return log


def bfs(grid, src, passable) -> dict:
    dist, queue = {src: 0}, deque([src])
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES.values():
            n = (r + dr, c + dc)
            if 0 <= n[0] < len(grid) and 0 <= n[1] < len(grid[0]) and n not in dist and passable(n):
                dist[n] = dist[(r, c)] + 1
                queue.append(n)
    return dist


# -- targets ---------------------------------------------------------------------------


@pytest.mark.parametrize("regime", ["L0", "L1", "L2", "L3"])
def test_targets_are_deterministic_of_the_documented_kinds_and_placements_are_legal(regime: str) -> None:
    from spatialstale_evals.world.targets import choose_targets

    for inst in dataset.load(None, regime)[:15]:
        targets = choose_targets(inst, 3)
        assert targets == choose_targets(inst, 3)
        final = inst.final_grid()
        claims = {e.cell: e.claim for e in inst.memory}
        goal = (inst.height - 1, inst.width - 1)
        for kind in ("stale_thaw", "stale_freeze", "valid_safe", "valid_danger"):
            of_kind = [t for t in targets if t.kind == kind]
            # the kind from the entry's claim and the final cell, read here
            truth = {
                "stale_thaw": ("SAFE", "H"),
                "stale_freeze": ("DANGER", "F"),
                "valid_safe": ("SAFE", "F"),
                "valid_danger": ("DANGER", "H"),
            }[kind]
            available = [cell for cell, claim in claims.items() if (claim, final[cell[0]][cell[1]]) == truth]
            if kind.startswith("stale"):
                assert len(of_kind) == min(3, len(available)), (inst.id, kind)
            else:
                assert len(of_kind) <= min(3, len(available)), (inst.id, kind)
            for t in of_kind:
                assert (t.entry.claim, final[t.cell[0]][t.cell[1]]) == truth
                assert final[t.cell[0]][t.cell[1]] not in "SG" and t.safe_now == (truth[1] == "F")
        for t in targets:
            if t.placement is None:
                continue
            p = t.placement
            assert abs(p[0] - t.cell[0]) + abs(p[1] - t.cell[1]) == 1, "next to the target"
            assert final[p[0]][p[1]] == "F" and claims[p] == "SAFE", "legal, safe, and believed safe"
            believed = bfs(final, goal, lambda n, claims=claims, goal=goal: claims.get(n) == "SAFE" or n == goal)
            assert believed.get(t.cell) == believed[p] - 1, "the target is a step of memory's shortest route"
            if t.kind == "valid_safe":
                true = bfs(final, goal, lambda n, final=final: final[n[0]][n[1]] != "H")
                best = [
                    (p[0] + dr, p[1] + dc)
                    for dr, dc in MOVES.values()
                    if true.get((p[0] + dr, p[1] + dc), -9) == true[p] - 1
                ]
                assert best == [t.cell], "the only shortest true move"
        assert all(t.placement is None for t in targets if t.kind in ("stale_freeze", "valid_danger"))
        # as many controls as stale targets of the same claim (specification.md#probe), ranked within a kind
        kinds = [t.kind for t in targets]
        assert kinds.count("valid_safe") == kinds.count("stale_thaw") or not any(k.startswith("stale") for k in kinds)
        assert kinds.count("valid_danger") == kinds.count("stale_freeze") or not any(
            k.startswith("stale") for k in kinds
        )
        for kind in set(kinds):
            keys = [
                (kind in ("stale_thaw", "valid_safe") and t.placement is None, t.route_distance, t.cell)
                for t in targets
                if t.kind == kind
            ]
            assert keys == sorted(keys)


# -- the scripted bounds -----------------------------------------------------------------


BOUNDS = [(regime, modality) for regime in ("L1", "L2", "L3") for modality in ("text", "image")]


@pytest.fixture(scope="module")
def bound_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], EvalLog]:
    """observer and memory on 3 instances of every (regime, modality): one eval, each log matched by its
    model, regime and modality."""
    logs = inspect_eval(
        [probe(regime=regime, modality=modality) for regime, modality in BOUNDS],
        model=["spatialstale/observer", "spatialstale/memory"],
        log_dir=str(tmp_path_factory.mktemp("bounds")), limit=3, display="none", log_realtime=False,
        max_tasks=2 * len(BOUNDS),
    )  # fmt: skip
    out = {}
    for log in logs:
        assert log.status == "success", log.error
        assert len(log.samples) == 3 and not any(s.error for s in log.samples)
        args = log.eval.task_args
        key = (log.eval.model.removeprefix("spatialstale/"), args["regime"], args["modality"])
        assert key not in out
        out[key] = log
    assert set(out) == {(m, *bound) for m in ("observer", "memory") for bound in BOUNDS}
    return out


@pytest.mark.parametrize(("regime", "modality"), BOUNDS)
def test_observer_passes_every_probe_and_memory_fails_every_stale_one(regime: str, modality: str, bound_logs) -> None:
    observer, memory = bound_logs[("observer", regime, modality)], bound_logs[("memory", regime, modality)]
    asked = [r for r in probes(observer) if r["outcome"] != "skipped"]
    assert asked and all(r["outcome"] == "pass" for r in asked)
    for r in probes(memory):
        if r["outcome"] != "skipped":
            assert r["outcome"] == ("fail" if r["kind"] in STALE else "pass"), r
    for dim, name in (("explicit", "state_resolution"), ("premise", "premise_resistance")):
        assert metric(memory, name) == 0.0 and metric(memory, f"{dim}_control") == 1.0
        assert metric(observer, f"{dim}_balanced") == 1.0
    assert metric(memory, "premise_balanced") == 0.5, "accepting every premise is chance"
    assert metric(memory, "explicit_balanced") == 0.5, "as many controls as stale targets of each claim"
    assert metric(memory, "policy_adaptation") == 0.0 and metric(memory, "implicit_control") == 1.0
    assert metric(observer, "probe_parse_failure_rate") == 0.0


def test_random_lands_near_chance_and_the_metrics_equal_the_probes(tmp_path) -> None:
    log = run(probe(regime="L2"), "spatialstale/random", tmp_path, limit=20)
    records = probes(log)
    for dim, name in (("explicit", "state_resolution"), ("premise", "premise_resistance")):
        stale = [r for r in records if r["dimension"] == dim and r["kind"] in STALE]
        control = [r for r in records if r["dimension"] == dim and r["kind"] not in STALE]
        acc = sum(r["outcome"] == "pass" for r in stale) / len(stale)
        ctl = sum(r["outcome"] == "pass" for r in control) / len(control)
        assert metric(log, name) == pytest.approx(acc) and metric(log, f"{dim}_control") == pytest.approx(ctl)
        assert 0.35 < metric(log, f"{dim}_balanced") < 0.65
    implicit = [r for r in records if r["dimension"] == "implicit"]
    skipped = sum(r["outcome"] == "skipped" for r in implicit)
    assert metric(log, "implicit_skipped_rate") == pytest.approx(skipped / len(implicit))


# -- one-sided agents score chance, not 1.0 --------------------------------------------------


class OneSided(ScriptedAPI):
    """Always DANGER, always rejects the premise, never takes a step memory's
    shortest route would take (read from the prompt here, by its own search)."""

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        prompt, usage = last_prompt(input), count_input_tokens(input, tools)
        if not tools:
            text = '{"state": "DANGER", "premise_holds": false, "reason": "no"}'
            return text_output(self.model_name, text, usage)
        (r, c), goal = position(prompt)
        safe = {e.cell for e in entries(prompt) if e.claim == "SAFE"} | {goal}
        size = max(max(cell) for cell in safe) + 1
        grid = ["F" * size] * size
        to_goal = bfs(grid, goal, lambda n: n in safe)
        direction = next(d for d, (dr, dc) in MOVES.items() if to_goal.get((r + dr, c + dc), -9) != to_goal[(r, c)] - 1)
        return ModelOutput.for_tool_call(self.model_name, "move", {"direction": direction})


@modelapi(name="onesided")
def _one_sided() -> type[OneSided]:
    return OneSided


def test_one_sided_agents_score_chance_on_every_dimension(tmp_path) -> None:
    log = run(probe(regime="L1"), "onesided/observer", tmp_path, limit=6)
    assert metric(log, "explicit_balanced") == 0.5, "always DANGER: every hole right, every safe cell wrong"
    assert metric(log, "premise_resistance") == 1.0 and metric(log, "premise_control") == 0.0
    assert metric(log, "premise_balanced") == 0.5
    assert metric(log, "policy_adaptation") == 1.0 and metric(log, "implicit_control") == 0.0
    assert metric(log, "implicit_balanced") == 0.5


# -- blind answers score 0.5 on the canonical instances -------------------------------------


@functools.cache
def canonical_targets(regime: str) -> list[tuple]:
    """Every target of the 50 canonical instances (3 per kind, the task's default), with its truth now."""
    from spatialstale_evals.world.targets import choose_targets

    found = []
    for inst in dataset.load(None, regime):
        final = inst.final_grid()
        found += [(t, final[t.cell[0]][t.cell[1]] != "H") for t in choose_targets(inst, 3)]
    return found


def blind_balanced(regime: str, answer) -> dict[str, float]:
    """Balanced accuracy per dimension of an agent that answers without looking, over the 50
    canonical instances of ``regime``, counted here from the targets and the probe rules (docs/specification.md#probe):
    explicit by the cell's truth, premise and implicit by stale vs control; a move passes when it
    steps onto the target exactly when the target is safe now. ``answer(dimension, target, safe_now,
    stale)`` is the chance (0..1) that the agent's answer passes, so a random mover is its expectation."""
    tally = {d: {c: [0.0, 0] for c in ("a", "b")} for d in ("explicit", "premise", "implicit")}
    for t, safe_now in canonical_targets(regime):
        stale = t.kind in STALE
        asks = {"explicit": "a" if safe_now else "b", "premise": "a" if stale else "b"}
        if t.entry.claim == "SAFE" and t.placement is not None:
            asks["implicit"] = "a" if stale else "b"
        for dim, cls in asks.items():
            tally[dim][cls][0] += answer(dim, t, safe_now, stale)
            tally[dim][cls][1] += 1
    return {d: (c["a"][0] / c["a"][1] + c["b"][0] / c["b"][1]) / 2 for d, c in tally.items()}


def mover(direction: str | None):
    """A mover that always moves ``direction`` (None: each of the four with chance 1/4)."""

    def passes(dim: str, t, safe_now: bool, stale: bool) -> float:
        if dim != "implicit":
            return 0.0
        lands = {d: (t.placement[0] + dr, t.placement[1] + dc) == t.cell for d, (dr, dc) in MOVES.items()}
        chosen = [direction] if direction else list(MOVES)
        return sum(lands[d] == safe_now for d in chosen) / len(chosen)

    return passes


@pytest.mark.parametrize("regime", ["L1", "L2", "L3"])
def test_blind_answers_score_chance_on_the_canonical_instances(regime: str) -> None:
    for direction in (*MOVES, None):
        score = blind_balanced(regime, mover(direction))["implicit"]
        assert score == pytest.approx(0.5, abs=0.03), (regime, direction or "random", score)
    constant = {
        "always DANGER": lambda dim, t, safe_now, stale: float(not safe_now),
        "always SAFE": lambda dim, t, safe_now, stale: float(safe_now),
        "always premise false": lambda dim, t, safe_now, stale: float(stale),
        "always premise true": lambda dim, t, safe_now, stale: float(not stale),
    }
    for name, answer in constant.items():
        dim = "explicit" if "premise" not in name else "premise"
        assert blind_balanced(regime, answer)[dim] == pytest.approx(0.5, abs=0.03), (regime, name)


class AlwaysRight(ScriptedAPI):
    """Moves RIGHT whatever it sees; answers DANGER / premise false to the questions."""

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        if tools:
            return ModelOutput.for_tool_call(self.model_name, "move", {"direction": "RIGHT"})
        text = '{"state": "DANGER", "premise_holds": false, "reason": "blind"}'
        return text_output(self.model_name, text, count_input_tokens(input, tools))


@modelapi(name="alwaysright")
def _always_right() -> type[AlwaysRight]:
    return AlwaysRight


def test_a_blind_mover_scores_chance_through_the_task(tmp_path) -> None:
    log = run(probe(regime="L1", dimensions="implicit"), "alwaysright/observer", tmp_path, limit=2)
    assert metric(log, "implicit_balanced") == 0.5


# -- conversations ------------------------------------------------------------------------


def model_inputs(log: EvalLog) -> list[list]:
    samples = [resolve_sample_attachments(s, "full") for s in log.samples]
    return [e.input for s in samples for e in s.events if e.event == "model"]


def test_shared_keeps_one_conversation_per_target_and_independent_none(tmp_path) -> None:
    shared = run(probe(regime="L1", conversation="shared"), "spatialstale/observer", tmp_path / "s", limit=1)
    alone = run(probe(regime="L1"), "spatialstale/observer", tmp_path / "i", limit=1)
    assert all(len(messages) == 2 for messages in model_inputs(alone)), "system + the probe, nothing earlier"
    lengths = [len(m) for m in model_inputs(shared)]
    # per target: explicit (2 messages), premise (4: + the explicit answer), implicit (6) when placed
    assert lengths[:2] == [2, 4] and set(lengths) <= {2, 4, 6} and 6 in lengths
    first = model_inputs(shared)[1]
    assert "Question: is cell" in first[1].text and isinstance(first[2], ChatMessageAssistant)
    assert "Your notes say" in first[3].text
    assert [r["outcome"] for r in probes(shared)] == [r["outcome"] for r in probes(alone)]


# -- junk replies and bad parameters ---------------------------------------------------------

JUNK = [
    "I think it is fine.",
    '{"state": "maybe"}',
    '{"cell": [7, 7], "state": "SAFE"}',
    "I'm sorry, but I can't help with that.",
    '{"premise_holds": "perhaps"',
]


class Junk(ScriptedAPI):
    """Every kind of bad reply, in turn; moves with a bad direction or two calls."""

    count = 0

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        Junk.count += 1
        if tools:  # a direction that is none, or a valid move with a second call after it
            direction = "NORTH" if Junk.count % 2 else "UP"
            out = ModelOutput.for_tool_call(self.model_name, "move", {"direction": direction})
            extra = [ToolCall(id="c1", function="move", arguments={"direction": "UP"})] * (direction == "UP")
            out.choices[0].message.tool_calls = [*out.choices[0].message.tool_calls, *extra]
            return out
        return text_output(self.model_name, JUNK[Junk.count % len(JUNK)], 1)


@modelapi(name="junk")
def _junk() -> type[Junk]:
    return Junk


def test_junk_replies_are_counted_never_fatal(tmp_path) -> None:
    log = run(probe(regime="L2"), "junk/observer", tmp_path, limit=3)
    asked = [r for r in probes(log) if r["outcome"] != "skipped" and r["dimension"] != "implicit"]
    assert asked and all(r["outcome"] == "unparseable" and r["problem"] for r in asked)
    moves = [r for r in probes(log) if r["dimension"] == "implicit" and r["outcome"] != "skipped"]
    assert {r["outcome"] for r in moves if "direction" not in r} == {"unparseable"}
    valid = [r for r in moves if "direction" in r]
    assert valid and all(r["extra_calls"] == 1 and r["outcome"] in ("pass", "fail") for r in valid)
    assert sum(s.scores["probe_scorer"].metadata["counts"]["extra_calls"] for s in log.samples) == len(valid)
    assert metric(log, "state_resolution") == 0.0 and metric(log, "premise_control") == 0.0
    problems = {re.sub(r":.*", "", r["problem"]) for r in asked}
    assert {"refusal", "answered about another cell", "no JSON object with 'state'"} <= problems


class EmptyOrCut(ScriptedAPI):
    """Replies ``""`` to every probe (model ``observer``), or a valid-looking start cut by ``max_tokens``
    (model ``memory``; the scripted provider accepts only its policies' names)."""

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        if self.model_name == "observer":
            return text_output(self.model_name, "", 1)
        out = text_output(self.model_name, '{"cell": [1, 2], "state": "SA', 1)
        out.choices[0].stop_reason = "max_tokens"
        return out


@modelapi(name="emptyorcut")
def _empty_or_cut() -> type[EmptyOrCut]:
    return EmptyOrCut


def test_empty_and_cut_replies_are_counted_per_dimension(tmp_path) -> None:
    from spatialstale_evals.analysis.report import build_report

    for name, flag in (("observer", "empty_answers"), ("memory", "truncated_answers")):
        log = run(probe(regime="L1"), f"emptyorcut/{name}", tmp_path / name, limit=1)
        asked = [r for r in probes(log) if r["outcome"] != "skipped"]
        assert asked and all(r["outcome"] == "unparseable" for r in asked)
        other = "truncated_answers" if flag == "empty_answers" else "empty_answers"
        assert metric(log, flag) == len(asked) and metric(log, other) == 0
        table = build_report(tmp_path / name, tmp_path / f"{name}-out").tables["probe"]
        ours = table[~table["config"].str.startswith("reference")].set_index("dimension")
        for dim in ("explicit", "premise", "implicit"):
            assert ours.loc[dim, flag] == sum(r["dimension"] == dim for r in asked)
            assert ours.loc[dim, other] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"dimensions": "explicit,guess"}, "dimensions must be one of explicit, premise, implicit"),
        ({"dimensions": []}, "dimensions must be 'all' or a list"),
        ({"targets_per_kind": 0}, "targets_per_kind must be a positive integer"),
        ({"conversation": "group"}, "conversation must be one of independent, shared"),
        ({"show_store": "yes"}, "show_store must be true or false"),
        ({"image_palette": "grayscale"}, "need modality=image"),
        ({"colour": "red"}, "unknown task parameter(s) colour"),
        ({"show_store": False}, "pass dimensions=explicit,premise"),
    ],
)
def test_bad_parameters_fail_before_any_call(args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        probe(**args)


def test_show_store_false_shows_only_the_target_entry(tmp_path) -> None:
    log = run(probe(regime="L1", show_store=False, dimensions="explicit"), "spatialstale/memory", tmp_path, limit=1)
    for messages in model_inputs(log):
        assert "Memory notes (1):" in messages[-1].text
    assert metric(log, "state_resolution") == 0.0 and metric(log, "explicit_control") == 1.0


# -- the solver and scorer on their own, the estimate, the matrix and the report ----------


def test_the_solver_asks_only_the_dimensions_it_is_given(tmp_path) -> None:
    from inspect_ai import Task

    from spatialstale_evals.harness.samples import InstanceSet
    from spatialstale_evals.probing.probes import probe_targets
    from spatialstale_evals.probing.scoring import probe_scorer
    from spatialstale_evals.runs.cost import task_settings

    settings = task_settings("probe", dimensions="premise", targets_per_kind=1)
    task = Task(
        dataset=probe(regime="L3").dataset,
        solver=probe_targets(InstanceSet.load(None, "L3"), settings),
        scorer=probe_scorer(),
    )
    log = run(task, "spatialstale/observer", tmp_path, limit=2)
    assert {r["dimension"] for r in probes(log)} == {"premise"}
    per_sample = [s.scores["probe_scorer"].metadata["probes"] for s in log.samples]
    assert all(len(records) == len({r["kind"] for r in records}) for records in per_sample), "one target per kind"


@pytest.mark.parametrize("conversation", ["independent", "shared"])
def test_the_estimate_is_exact_for_the_observer(conversation: str, tmp_path) -> None:
    from spatialstale_evals.runs.cost import estimate_cost

    args = {"regime": "L2", "conversation": conversation}
    log = run(probe(**args), "spatialstale/observer", tmp_path, limit=3)
    tokens = sum(u.input_tokens for s in log.samples for u in s.model_usage.values())
    out = sum(u.output_tokens for s in log.samples for u in s.model_usage.values())
    calls = sum(1 for s in log.samples for e in s.events if e.event == "model")
    estimate = estimate_cost("probe", dataset.load(None, "L2")[:3], **args)[1]
    assert (estimate.calls, estimate.input_tokens, estimate.output_tokens) == (calls, tokens, out)


def test_the_matrix_plans_probe_tasks_on_request() -> None:
    from spatialstale_evals.runs.matrix import MatrixSpec, plan

    spec = MatrixSpec(models=["m"], regimes=["L1"], axes={"modalities": ["text", "image"]}, families=["probe"], seeds=2)
    planned = plan(spec, estimate=False)
    assert [t.name for t in planned] == ["probe L1 text", "probe L1 image"]
    assert "probe" not in MatrixSpec(models=["m"]).families, "the paper's matrix stays the paper's"


def test_the_report_table_equals_the_probes_of_the_logs(tmp_path) -> None:
    from spatialstale_evals.analysis.report import build_report

    logs = [run(probe(regime="L1"), f"spatialstale/{m}", tmp_path / m, limit=4) for m in ("memory", "random")]
    table = build_report(tmp_path, tmp_path / "report").tables["probe"]
    for log in logs:
        records = probes(log)
        for dim in ("explicit", "premise", "implicit"):
            row = table[(table["model"] == log.eval.model) & (table["dimension"] == dim)].iloc[0]
            asked = [r for r in records if r["dimension"] == dim and r["outcome"] != "skipped"]
            stale = [r for r in asked if r["kind"] in STALE]
            control = [r for r in asked if r["kind"] not in STALE]
            assert row["stale_n"] == len(stale) and row["control_n"] == len(control)
            assert row["stale_acc"] == pytest.approx(sum(r["outcome"] == "pass" for r in stale) / len(stale))
            assert row["control_acc"] == pytest.approx(sum(r["outcome"] == "pass" for r in control) / len(control))
            assert row["skipped"] == sum(r["dimension"] == dim and r["outcome"] == "skipped" for r in records)
            assert row["stale_acc"] == pytest.approx(
                metric(
                    log,
                    {"explicit": "state_resolution", "premise": "premise_resistance", "implicit": "policy_adaptation"}[
                        dim
                    ],
                )
            )
    reference = table[table["config"].str.startswith("reference: STALE")]
    assert set(reference["model"]) == {"CUPMem", "best plain model"} and len(reference) == 8


def test_a_scripted_run_repeats_exactly(tmp_path) -> None:
    """Same seed, same samples and the same random answers, run after run."""
    a = run(probe(regime="L3", conversation="shared"), "spatialstale/random", tmp_path / "a", limit=3)
    b = run(probe(regime="L3", conversation="shared"), "spatialstale/random", tmp_path / "b", limit=3)
    assert probes(a) == probes(b) and [s.input for s in a.samples] == [s.input for s in b.samples]
    assert [s.scores["probe_scorer"].metadata["counts"] for s in a.samples] == [
        s.scores["probe_scorer"].metadata["counts"] for s in b.samples
    ]
