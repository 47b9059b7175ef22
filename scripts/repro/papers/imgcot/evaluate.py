"""Stage: accuracy, reasoning tokens, latency and tokenizer quality per method; metrics.json and claims.json."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.imgcot.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

NEEDED = ("method", "row", "split", "steps", "correct", "target_tokens", "generated_tokens", "decode_seconds")


def read_predictions(path: str) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read predictions ({err})") from err
    missing = [c for c in NEEDED if c not in frame]
    if missing:
        raise InputError(path, f"predictions lack columns {missing}")
    return frame


def metrics_of(pred: pd.DataFrame, problems: pd.DataFrame, tokenizers: dict, min_steps: int) -> dict:
    out: dict = {
        "accuracy": {},
        "correct": {},
        "tokens": {},
        "generated_tokens": {},
        "latency_s": {},
        "target_tokens": {},
    }
    for method, g in pred.groupby("method", sort=False):
        g = g.sort_values("row")
        out["accuracy"][method] = {s: float(h["correct"].mean()) for s, h in g.groupby("split")}
        long = g[(g.split == "test") & (g.steps >= min_steps)]
        out["accuracy"][method]["test_long"] = float(long["correct"].mean()) if len(long) else float("nan")
        out["correct"][method] = {s: h["correct"].astype(float).tolist() for s, h in g.groupby("split")}
        out["correct"][method]["test_long"] = long["correct"].astype(float).tolist()
        short = g[(g.split == "test") & (g.steps == g.steps.min())]
        out["correct"][method]["test_short"] = short["correct"].astype(float).tolist()
        deep = g[(g.split == "test") & (g.steps >= 3)]
        out["correct"][method]["test_deep"] = deep["correct"].astype(float).tolist()
        out["tokens"][method] = float(g["target_tokens"].mean())
        out["target_tokens"][method] = g["target_tokens"].astype(float).tolist()
        out["generated_tokens"][method] = float(g["generated_tokens"].mean())
        out["latency_s"][method] = float(g["decode_seconds"].mean())
    full = out["tokens"].get("full_cot", float("nan"))
    out["compression_vs_full_cot"] = {m: (full / t if t > 0 else float("inf")) for m, t in out["tokens"].items()}
    # the class prior: the most frequent training answer, scored on the same problems (row order) as the methods
    train_answers = problems.loc[problems["split"] == "train", "answer"].astype(str)
    prior = train_answers.value_counts().sort_index().idxmax()
    rows = problems.sort_index()
    out["prior_answer"] = str(prior)
    out["prior_correct"] = {
        s: (h["answer"].astype(str) == prior).astype(float).tolist() for s, h in rows.groupby("split") if s != "train"
    }
    steps = rows["cot_steps"].map(len)
    short = rows[(rows["split"] == "test") & (steps == steps.min())]
    out["prior_correct"]["test_short"] = (short["answer"].astype(str) == prior).astype(float).tolist()
    full = pred[pred.method == "full_cot"].sort_values("row")
    out["cot_lines"] = full["steps"].astype(int).tolist()  # per evaluated problem, in the target_tokens order
    out["render_fit_share"] = float(problems["fits"].mean())
    out["font_sizes"] = sorted(int(s) for s in problems["font_size"].unique())
    out["tokenizers"] = tokenizers
    return out


def main(job) -> None:
    cfg = job.params.settings
    pred = read_predictions(job.input.predictions)
    problems = pd.read_parquet(job.input.problems)
    metrics = metrics_of(pred, problems, read_json(job.input.tokenizers), cfg["long_min_steps"])
    metrics["n_latent"] = int(np.asarray(metrics["tokenizers"]["n_latent"]))
    for path in getattr(job.input, "smollm2", []) or []:
        metrics["smollm2"] = read_json(path)
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims,
        "imgcot",
        evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported)),
    )
