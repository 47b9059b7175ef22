"""The scoreboard on small synthetic claims files: kinds counted apart, NaN shown as n/a and failing,
intervals shown, text rendered as written in Markdown, HTML and the report's reStructuredText."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import pytest
from docutils.core import publish_parts

from repro.reporting.claims import (
    ClaimSpec,
    Interval,
    Measured,
    Test,
    evaluate_claims,
    learning_check,
    skill_over_trivial,
    write_claims,
)
from repro.reporting.scoreboard import (
    NOT_BUILT,
    NOT_RUN,
    claims_html,
    claims_markdown,
    gather,
    headline_figures,
    landing_page,
    rst_text,
    summarise,
    summary_csv,
    to_csv,
)
from repro.workflow.io import InputError

PAPERS = {
    "alpha": {"short": "Alpha", "title": "Alpha: a method"},
    "beta-x": {"short": "Beta*", "title": "Beta: |x| things"},
    "gamma": {"short": "Gamma", "title": "Gamma"},
}


def spec(claim_id, kind, test, value):
    return ClaimSpec(claim_id, kind, f"statement of {claim_id}", test, lambda m, v=value: v)


def write_alpha(tmp_path):
    specs = [
        spec("a_effect", "paper", Test(">", 1.0), 2.0),
        spec("a_small", "paper", Test(">", 0.0), Measured(0.5, Interval(-0.1, 1.1, "t 95% over seeds", 5))),
        spec("a_nan", "paper", Test("<", 1.0), float("nan")),
        spec("a_identity", "check", Test("within", 1.0, abs_tol=0.1), 1.0),
    ]
    path = tmp_path / "alpha.json"
    write_claims(path, "alpha", evaluate_claims(specs, {}, "smoke"))
    return path


def test_kinds_are_counted_apart(tmp_path):
    rows = gather([write_alpha(tmp_path)])
    summary = summarise(rows, ["alpha"])["alpha"]
    assert (summary.paper_passed, summary.paper_failed, summary.paper_inconclusive) == (1, 2, 0)
    assert (summary.checks_passed, summary.checks_total) == (1, 1)
    assert summary.status == "paper claims 1 pass · 2 fail · 0 inconclusive · checks 1/1"


def test_nan_is_shown_as_na_and_fails(tmp_path):
    rows = {r["claim"]: r for r in gather([write_alpha(tmp_path)])}
    assert rows["a_nan"]["ours"] == "n/a" and rows["a_nan"]["verdict"] == "fails"


def test_a_nan_recorded_as_pass_still_fails(tmp_path):
    """A hand-edited or foreign claims.json cannot turn a missing value into a pass."""
    doc = json.loads(write_alpha(tmp_path).read_text())
    doc["claims"][0]["ours"] = math.nan
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    row = gather([path])[0]
    assert row["ours"] == "n/a" and row["verdict"] == "fails"


def test_interval_is_in_csv_and_blocks_a_pass(tmp_path):
    rows = gather([write_alpha(tmp_path)])
    parsed = {r["claim"]: r for r in csv.DictReader(io.StringIO(to_csv(rows)))}
    small = parsed["a_small"]
    assert (small["interval_low"], small["interval_high"], small["interval_method"], small["interval_n"]) == (
        "-0.1",
        "1.1",
        "t 95% over seeds",
        "5",
    )
    assert small["kind"] == "paper" and small["verdict"] == "fails"
    assert parsed["a_effect"]["interval_method"] == ""
    assert r"\[-0.1, 1.1\] (t 95% over seeds, n=5)" in claims_markdown(rows)


def test_papers_without_claims_are_not_run_or_not_built(tmp_path):
    rows = gather([write_alpha(tmp_path)])
    summaries = summarise(rows, list(PAPERS), built=["alpha", "beta-x"])
    assert summaries["beta-x"].status == NOT_RUN and summaries["gamma"].status == NOT_BUILT
    table = list(csv.DictReader(io.StringIO(summary_csv(summaries, PAPERS))))
    assert [r["status"] for r in table] == [
        "paper claims 1 pass · 2 fail · 0 inconclusive · checks 1/1",
        NOT_RUN,
        NOT_BUILT,
    ]
    assert table[0]["paper_claims_total"] == "3" and table[2]["paper_claims_total"] == ""


def test_claim_without_kind_is_an_input_error(tmp_path):
    doc = json.loads(write_alpha(tmp_path).read_text())
    del doc["claims"][1]["kind"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="old.json.*a_small.*kind"):
        gather([path])


def test_text_renders_as_written_in_markdown_and_html(tmp_path):
    specs = [spec("b_close", "paper", Test("within", 1.0, abs_tol=0.1), 1.02)]
    path = tmp_path / "beta.json"
    write_claims(path, "beta-x", evaluate_claims(specs, {}, "smoke"))
    rows = gather([path])
    assert rows[0]["test"] == "|ours - 1| <= ±0.1"
    assert r"\|ours - 1\| \<= ±0.1" in claims_markdown(rows)
    page = claims_html(PAPERS["beta-x"], summarise(rows, ["beta-x"])["beta-x"], rows)
    assert "|ours - 1| &lt;= ±0.1" in page and "Beta: |x| things" in page


@pytest.mark.parametrize("text", ["|ours - 1| <= ±0.1", "a*b*c", "`x`_ and y_", "[1] <tag>: z"])
def test_rst_text_survives_docutils(text):
    body = publish_parts(f"{rst_text(text)}\n", writer_name="html")["body"]
    rendered = body.replace("&lt;", "<").replace("&gt;", ">")
    assert f"<p>{text}</p>" in rendered


def test_landing_page_starts_with_one_row_per_paper(tmp_path):
    import numpy as np
    from matplotlib import image

    figure = tmp_path / "fig_a.png"
    image.imsave(figure, np.linspace(0, 1, 2000 * 3).reshape(30, 200))
    rows = gather([write_alpha(tmp_path)])
    page = landing_page(summarise(rows, ["alpha"]), PAPERS, {"alpha": figure})
    assert page.startswith("{% raw %}\n") and page.rstrip().endswith("{% endraw %}")
    targets = "".join(f"\n.. _{c}: javascript:app.showCategory('{c}')" for c in ("alpha", "Scoreboard"))
    html = publish_parts(page.replace("{% raw %}", "").replace("{% endraw %}", "") + targets, writer_name="html")[
        "html_body"
    ]
    assert "system-message" not in html
    first_table = html.split("<table", 1)[1].split("</table>", 1)[0]
    before_table = re.sub(r"<[^>]+>", "", html.split("<table", 1)[0].split("<style", 1)[0])
    assert len(before_table.strip()) < 400, before_table  # the title and one line pointing at the site
    assert html.index("<table") < html.index("<img")
    cells = [c.split(">", 1)[1] for c in first_table.split("<td")[1:]]
    assert cells[:4] == ["Alpha</td>\n", "1 pass · 2 fail · 0 inconclusive</td>\n", "1/1</td>\n", "smoke</td>\n"]
    assert "javascript:app.showCategory('alpha')" in first_table
    assert 'alt="alpha figure fig_a" src="data:image/png;base64,' in html


class FakeRules:
    """Snakemake's ``rules`` namespace: ``has(name)`` and attribute access to a rule with ``output``."""

    def __init__(self, **outputs):
        self._rules = {name: type("Rule", (), {"output": files}) for name, files in outputs.items()}

    def has(self, name):
        return name in self._rules

    def __getattr__(self, name):
        return self._rules[name]


def test_headline_figure_is_the_first_png_of_the_figures_rule():
    rules = FakeRules(beta_x_figures=["results/beta-x/figures/table.md", "results/beta-x/figures/a.png", "b.png"])
    assert headline_figures(["alpha", "beta-x"], rules) == {"beta-x": "results/beta-x/figures/a.png"}


def write_learned(tmp_path, skill):
    """A paper whose two paper claims rest on a learning check with the given skill (margin 0.2)."""
    specs = [
        learning_check("learn_net", "the net", "the mean predictor", lambda m, v=skill: v),
        ClaimSpec(
            "beats_baseline", "paper", "net beats baseline", Test(">", 1.0), lambda m: 2.0, rests_on=("learn_net",)
        ),
        ClaimSpec("denied", "paper", "denied", Test(">", 1.0), lambda m: 0.5, rests_on=("learn_net",)),
        ClaimSpec("no_model", "paper", "needs no model", Test(">", 1.0), lambda m: 2.0, rests_on=()),
    ]
    path = tmp_path / f"learned_{skill}.json"
    write_claims(path, "alpha", evaluate_claims(specs, {}, "smoke"))
    return path


def test_a_model_that_did_not_learn_makes_its_claims_inconclusive(tmp_path):
    rows = {r["claim"]: r for r in gather([write_learned(tmp_path, 0.05)])}
    assert rows["learn_net"]["verdict"] == "fails" and rows["learn_net"]["learning"] == "true"
    assert rows["beats_baseline"]["verdict"] == rows["denied"]["verdict"] == "inconclusive"
    assert rows["beats_baseline"]["inconclusive_because"] == "learn_net"
    assert rows["no_model"]["verdict"] == "pass"
    summary = summarise(list(rows.values()), ["alpha"])["alpha"]
    assert summary.status == "paper claims 1 pass · 0 fail · 2 inconclusive · checks 0/1"
    assert "inconclusive (learn\\_net)" in claims_markdown(list(rows.values()))


def test_a_model_that_learned_lets_its_claims_pass_or_fail(tmp_path):
    rows = {r["claim"]: r for r in gather([write_learned(tmp_path, 0.5)])}
    assert [rows[c]["verdict"] for c in ("learn_net", "beats_baseline", "denied")] == ["pass", "pass", "fails"]


def test_rests_on_must_name_a_learning_check():
    specs = [
        spec("plain_check", "check", Test(">", 0.0), 1.0),
        ClaimSpec("c", "paper", "s", Test(">", 0.0), lambda m: 1.0, rests_on=("plain_check",)),
    ]
    with pytest.raises(ValueError, match="not a learning check"):
        evaluate_claims(specs, {}, "smoke")


def test_skill_over_trivial_is_the_paired_relative_error_reduction():
    rng = np.random.default_rng(0)
    trivial = rng.uniform(1.0, 2.0, 400)
    model = 0.5 * trivial + rng.normal(0, 0.01, 400)
    measured = skill_over_trivial(model, trivial)
    assert measured.value == pytest.approx(1 - model.mean() / trivial.mean())
    assert measured.interval.low < measured.value < measured.interval.high
    assert measured.interval.high - measured.interval.low < 0.02  # paired: the shared noise cancels
    assert learning_check("l", "m", "t", lambda m: measured).test.passes(measured.value, measured.interval)
