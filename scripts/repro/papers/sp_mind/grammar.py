"""Constrained decoding of tool calls: a token-level automaton over ``tool(name=value, ...)``.

At every step the decoder offers the model only the tokens that keep the text a prefix of a valid call:
one of the tools' names, then each parameter in the declared order (an optional one may be skipped), a value
from the parameter's domain (a marker, phenotype, region, scale or shape feature of the data, or an integer
written digit by digit), and the closing parenthesis. The model's own next-token scores choose among those
tokens (greedy); a single allowed token is forced without asking the model. A free-text node lets the model
write a plan or thought of bounded length before the call (``reasoning_tokens`` > 0, paper scale).

Nodes are built lazily: :func:`expand` turns a node into ``{token: [continuations]}`` (alternatives that
share a first token are merged, so the automaton is a trie over the options' token sequences).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from repro.papers.sp_mind.skills import FEATURES, REGIONS, SCALES, SKILLS, Skill

Next = Callable[[], "Node"]


@dataclass(frozen=True)
class Forced:
    tokens: tuple[int, ...]
    then: Next


@dataclass(frozen=True)
class Choice:
    options: tuple[tuple[tuple[int, ...], Next], ...]


@dataclass(frozen=True)
class Alt:
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class Free:
    """Up to ``max_tokens`` tokens of any text, ended by a newline (forced if the budget runs out)."""

    max_tokens: int
    then: Next


@dataclass(frozen=True)
class Done:
    pass


Node = Forced | Choice | Alt | Free | Done
DONE = Done()


def expand(node: Node) -> dict[int, list[Next]] | Done | Free:
    """The tokens allowed next and, for each, the continuations it leads to."""
    if isinstance(node, (Done, Free)):
        return node
    if isinstance(node, Forced):
        if not node.tokens:
            return expand(node.then())
        rest, then = node.tokens[1:], node.then
        return {node.tokens[0]: [lambda: Forced(rest, then) if rest else then()]}
    parts = [Forced(tokens, then) for tokens, then in node.options] if isinstance(node, Choice) else list(node.nodes)
    merged: dict[int, list[Next]] = {}
    for part in parts:
        sub = expand(part)
        if isinstance(sub, (Done, Free)):
            raise ValueError("an option ends where another continues: the call grammar is ambiguous")
        for token, nexts in sub.items():
            merged.setdefault(token, []).extend(nexts)
    return merged


def follow(nexts: list[Next]) -> Node:
    return nexts[0]() if len(nexts) == 1 else Alt(tuple(n() for n in nexts))


def value_domains(markers: list[str], phenotypes: list[str]) -> dict[str, list[str]]:
    """The values each parameter kind may take on this data (integers are written digit by digit)."""
    return {
        "marker": list(markers),
        "phenotype": list(phenotypes),
        "region": list(REGIONS),
        "scale": list(SCALES),
        "feature": list(FEATURES),
    }


class CallGrammar:
    """Builds the call automaton for the data's value domains with one tokenizer (``encode(text) -> ids``)."""

    def __init__(self, encode: Callable[[str], list[int]], markers: list[str], phenotypes: list[str], digits: int = 3):
        self.encode = encode
        self.domains = value_domains(markers, phenotypes)
        self.digits = digits
        self._ids: dict[str, tuple[int, ...]] = {}

    def ids(self, text: str) -> tuple[int, ...]:
        if text not in self._ids:
            self._ids[text] = tuple(self.encode(text))
        return self._ids[text]

    def call(
        self,
        tools: list[str],
        finish: bool = False,
        reasoning: int = 0,
        lead: str = "Call:",
        exclude: dict[str, set] | None = None,
        drop: set[str] | None = None,
    ) -> Node:
        """One assistant turn: optional free text (``reasoning`` tokens), then ``lead`` and a call of one of
        ``tools`` (or ``finish()`` when allowed). ``exclude`` maps a parameter kind (marker, phenotype, region,
        scale, feature, int) to values no parameter of that kind may take, and ``drop`` names optional
        parameters that may not be written (what a verifier ruled out)."""
        exclude, drop = exclude or {}, drop or set()
        options = [(self.ids(f" {name}("), self._params_of(SKILLS[name], 0, True, exclude, drop)) for name in tools]
        if finish:
            options.append((self.ids(" finish()"), lambda: DONE))
        body = Choice(tuple(options))
        if reasoning > 0:
            return Free(reasoning, lambda: Forced(self.ids(lead), lambda: body))
        return Forced(self.ids(lead), lambda: body)

    def _params_of(self, skill: Skill, i: int, first: bool, exclude: dict, drop: set) -> Next:
        def node() -> Node:
            if i == len(skill.params):
                return Forced(self.ids(")"), lambda: DONE)
            param = skill.params[i]
            skip = self._params_of(skill, i + 1, first, exclude, drop)
            if not param.required and param.name in drop:
                return skip()
            sep = "" if first else ", "
            after = self._params_of(skill, i + 1, False, exclude, drop)
            banned = exclude.get(param.kind, set())
            if param.kind == "int":
                value = lambda: self._number("", after, {str(v) for v in banned})  # noqa: E731
            else:
                values = [v for v in self.domains[param.kind] if v not in banned] or self.domains[param.kind]
                value = lambda: Choice(tuple((self.ids(v), after) for v in values))  # noqa: E731
            written = Forced(self.ids(f"{sep}{param.name}="), value)
            return written if param.required else Alt((written, skip()))

        return node

    def _number(self, written: str, after: Next, banned: set[str]) -> Node:
        """Digits of a positive integer (no leading zero, at most ``digits``), never one of ``banned``."""
        first = range(1, 10) if not written else range(10)
        more = []
        for d in first:
            text = written + str(d)
            if len(text) == self.digits and text in banned:
                continue
            more.append((self.ids(str(d)), lambda text=text: self._number(text, after, banned)))
        if not written:
            return Choice(tuple(more))
        if len(written) == self.digits:
            return after()
        if written in banned:
            return Choice(tuple(more))
        return Alt((Choice(tuple(more)), after()))


def random_call(tools: list[str], domains: dict[str, list[str]], rng, digits: int = 3) -> dict:
    """The trivial agent's call: a tool drawn uniformly from ``tools``, each optional parameter written with
    probability 1/2, each value uniform over its domain (an integer: 1 to ``digits`` digits, uniform)."""
    name = tools[int(rng.integers(len(tools)))]
    params: dict = {}
    for param in SKILLS[name].params:
        if not param.required and rng.random() < 0.5:
            continue
        if param.kind == "int":
            length = int(rng.integers(1, digits + 1))
            params[param.name] = int(rng.integers(10 ** (length - 1), 10**length))
        else:
            values = domains[param.kind]
            params[param.name] = values[int(rng.integers(len(values)))]
    return {"skill": name, "params": params}
