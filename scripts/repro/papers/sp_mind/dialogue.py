"""SP-Mind's agent loop and its LLM baselines, run as dialogues of one language model in lock-step.

- ``agent`` (SP-Mind): the system prompt with the skill docs; the model calls a tool with arguments it
  chooses (constrained decoding, :mod:`.grammar`), the tool runs, the verifier (:mod:`.verifier`) reads the
  call and result against the task; its findings go back to the model, which revises the call, until the
  verifier accepts it or ``max_attempts`` calls were made. The answer is the last call's result.
- ``agent_no_verify``: the same dialogue's first call (first attempt only).
- ``agent_no_docs``: the agent with tool signatures but no skill docs (and no note on the gates' scale).
- ``react``: a plain ReAct loop with the same model, docs and first call: after each call the model reads
  the raw observation and either calls again or finishes; no verifier.

The ``agent`` and ``react`` rows share the prompt and the first call (one row, forked after it), so the
comparison isolates what follows the first attempt. Rows of one system prompt share its key/values.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch

from repro.data.language.fast import FastLlama, Prefix, RowBatch, prefill
from repro.papers.sp_mind.calls import execute, parse_call, result_text
from repro.papers.sp_mind.grammar import CallGrammar, Done, Free, Node, expand, follow
from repro.papers.sp_mind.prompts import observation_message, task_message, verifier_message
from repro.papers.sp_mind.skills import SKILLS, Data, tools_for
from repro.papers.sp_mind.verifier import findings

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
TOOLS = list(SKILLS)


def user_turn(text: str, close_assistant: bool) -> str:
    head = f"{IM_END}\n" if close_assistant else ""
    return f"{head}{IM_START}user\n{text}{IM_END}\n{IM_START}assistant\n"


@dataclass
class Controller:
    """What happens between the model's turns for one task: runs calls, writes the next message, ends."""

    spec: dict
    data: Data
    grammar: CallGrammar
    config: str
    max_calls: int
    reasoning: int = 0
    typed: bool = True
    calls: list[dict] = field(default_factory=list)

    def tools(self, excluded: set[str] = frozenset()) -> list[str]:
        """The tools offered: those returning the task's answer type when calls are typed, minus ``excluded``
        (never none)."""
        offered = tools_for(self.spec["answer_type"], self.typed)
        return [t for t in offered if t not in excluded] or offered

    def first_turn(self) -> tuple[str, Node]:
        return user_turn(task_message(self.spec), False), self.grammar.call(self.tools(), reasoning=self.reasoning)

    def run_call(self, text: str) -> dict:
        call = parse_call(text)
        result, error = execute(self.data, call, self.spec["reference"].get("hidden"))
        record = {"text": text.strip(), "call": call, "result": result_text(result, error), "error": error}
        self.calls.append(record)
        return record | {"value": result}

    def turn(self, text: str) -> tuple[str, Node] | None:
        raise NotImplementedError

    @property
    def answer_call(self) -> dict | None:
        return self.calls[-1]["call"] if self.calls else None


@dataclass
class VerifyController(Controller):
    """SP-Mind: call -> result -> verifier findings -> revised call, until accepted or out of calls. With
    ``prune`` the revised call's grammar also leaves out what the findings ruled out (a tool that returns the
    wrong type or cannot take a value the task names, a value the task does not name, a wrong scale), so a
    rejected call is never written again."""

    prune: bool = True

    ruled_out: dict = field(default_factory=lambda: {"tool": set(), "value": {}, "param": set()})

    def turn(self, text: str) -> tuple[str, Node] | None:
        record = self.run_call(text)
        problems = findings(self.spec, record["call"], record["value"], record["error"], self.data)
        self.calls[-1]["findings"] = [p["text"] for p in problems]
        if not problems or len(self.calls) >= self.max_calls:
            return None
        if self.prune:
            for p in problems:
                if "tool" in p:
                    self.ruled_out["tool"].add(p["tool"])
                if "value" in p:
                    self.ruled_out["value"].setdefault(p["value"][0], set()).add(p["value"][1])
                if "param" in p:
                    self.ruled_out["param"].add(p["param"])
        message = verifier_message(record["result"], [p["text"] for p in problems])
        node = self.grammar.call(
            self.tools(self.ruled_out["tool"]),
            reasoning=self.reasoning,
            exclude=self.ruled_out["value"],
            drop=self.ruled_out["param"],
        )
        return user_turn(message, True), node


class ReactController(Controller):
    """Plain ReAct: call -> observation -> another call or finish(), with no verifier."""

    def turn(self, text: str) -> tuple[str, Node] | None:
        if parse_call(text)["skill"] == "finish":
            return None
        record = self.run_call(text)
        if len(self.calls) >= self.max_calls:
            return None
        message = observation_message(record["result"])
        return user_turn(message, True), self.grammar.call(self.tools(), finish=True, reasoning=self.reasoning)


class Dialogue:
    """One row of the batch: pending tokens, the grammar node of the current turn, its controller; rows
    that share the first call carry the controllers to fork into (``forks``)."""

    def __init__(self, controller: Controller, group: int, encode, forks: tuple[Controller, ...] = ()) -> None:
        self.controller, self.group, self.encode, self.forks = controller, group, encode, list(forks)
        text, self.node = controller.first_turn()
        self.pending = list(encode(text))
        self.turn_tokens: list[int] = []
        self.free_left = 0
        self.done = self.waiting = False
        self.fed = self.choices = 0
        self.turn_ends: list[int] = []  # tokens of the dialogue up to the end of each call

    def needs_choice(self):
        return None if self.done or self.waiting else expand(self.node)

    def advance(self, decode) -> None:
        """Take forced tokens and end turns until the model must choose (or the dialogue ends)."""
        while not self.done and not self.waiting:
            options = expand(self.node)
            if isinstance(options, Done):
                if self.forks:
                    self.waiting = True
                    return
                self.end_turn(decode)
                continue
            if isinstance(options, Free) or len(options) > 1:
                return
            ((token, nexts),) = options.items()
            self.take(token, follow(nexts))

    def take(self, token: int, node: Node) -> None:
        self.pending.append(token)
        self.turn_tokens.append(token)
        self.node = node

    def end_turn(self, decode) -> None:
        self.turn_ends.append(self.fed + len(self.pending))
        text = decode(self.turn_tokens)
        self.turn_tokens = []
        nxt = self.controller.turn(text)
        if nxt is None:
            self.done = True
            return
        message, self.node = nxt
        self.pending += self.encode(message)

    def fork(self, decode) -> list[Dialogue]:
        """Copies of this row for each fork controller (same tokens so far), then every copy ends the turn."""
        clones = []
        for controller in self.forks:
            clone = copy.copy(self)
            clone.controller = copy.copy(controller)
            clone.controller.calls = [dict(c) for c in self.controller.calls]
            clone.pending, clone.turn_tokens, clone.forks = list(self.pending), list(self.turn_tokens), []
            clone.turn_ends = list(self.turn_ends)
            clones.append(clone)
        self.forks, self.waiting = [], False
        for row in [self, *clones]:
            row.waiting = False
            row.end_turn(decode)
        return clones


@dataclass
class RunStats:
    steps: int = 0
    fed_tokens: int = 0
    prefix_tokens: int = 0
    model_choices: int = 0


def choose(model: FastLlama, hidden: torch.Tensor, options, free_left: int, special: set[int]) -> tuple[int, bool]:
    """Greedy choice: the allowed token with the highest logit (ties: the lowest id); for free text any
    non-control token. Returns (token, whether a free-text span ends with it)."""
    if isinstance(options, Free):
        logits = model.logits(hidden[None])[0]
        logits[list(special)] = float("-inf")
        token = int(torch.argmax(logits))
        text = model.tokenizer.decode([token])
        return token, "\n" in text or free_left <= 1
    ids = sorted(options)
    scores = model.logits(hidden[None], ids)[0]
    return ids[int(torch.argmax(scores))], False


def prompt_prefixes(model: FastLlama, prompts: list[str], stats: RunStats) -> list[Prefix]:
    """Key/values of each system prompt, read once and shared by every dialogue (and batch) that starts with it."""
    out = []
    with torch.no_grad():
        for text in prompts:
            ids = model.tokenizer.encode(text)
            out.append(prefill(model, ids))
            stats.prefix_tokens += len(ids)
    return out


def run_dialogues(
    model: FastLlama,
    prefixes: list[Prefix],
    rows: list[Dialogue],
    stats: RunStats,
    chunk: int = 64,
    capacity: int = 256,
) -> list[Dialogue]:
    """Run every dialogue to its end in lock-step; rows are sorted by prompt group (``Dialogue.group``).
    Adds to ``stats``; returns every dialogue, forks included."""
    tok = model.tokenizer
    special = set(tok.special.values())
    everyone = list(rows)
    with torch.no_grad():
        if [r.group for r in rows] != sorted(r.group for r in rows):
            raise ValueError("dialogues must be sorted by prompt group")
        batch = RowBatch(model, prefixes, [r.group for r in rows], capacity)
        while True:
            for row in rows:
                row.advance(tok.decode)
            if rows and all(r.done or r.waiting or not r.forks for r in rows) and any(r.waiting for r in rows):
                index, new_rows = [], []
                for i, row in enumerate(rows):
                    spawned = row.fork(tok.decode) if row.waiting else []
                    everyone += spawned
                    for r in [row, *spawned]:
                        index.append(i)
                        new_rows.append(r)
                        r.advance(tok.decode)
                batch.select(index)
                rows = new_rows
            finished = [i for i, r in enumerate(rows) if r.done]
            if len(finished) == len(rows):
                break
            if len(finished) >= max(4, len(rows) // 3):
                keep = [i for i, r in enumerate(rows) if not r.done]
                batch.select(keep)
                rows = [rows[i] for i in keep]
            chunks = []
            for row in rows:
                part = [] if row.done or row.waiting else row.pending[:chunk]
                row.pending = row.pending[len(part) :]
                row.fed += len(part)
                chunks.append(part)
            hidden = batch.feed(chunks)
            stats.steps += 1
            stats.fed_tokens += int(np.sum([len(c) for c in chunks]))
            for r, row in enumerate(rows):
                if row.done or row.waiting or row.pending or r not in hidden:
                    continue
                options = expand(row.node)
                if isinstance(options, Done) or (not isinstance(options, Free) and len(options) == 1):
                    continue
                if isinstance(options, Free) and row.free_left == 0:
                    row.free_left = options.max_tokens
                token, ends = choose(model, hidden[r], options, row.free_left, special)
                stats.model_choices += 1
                row.choices += 1
                if isinstance(options, Free):
                    row.free_left -= 1
                    row.take(token, options.then() if ends else row.node)
                    if ends:
                        row.free_left = 0
                        if "\n" not in tok.decode([token]):
                            row.pending += row.encode("\n")
                else:
                    row.take(token, follow(options[token]))
    return everyone
