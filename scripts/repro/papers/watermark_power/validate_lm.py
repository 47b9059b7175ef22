"""Stage: the power prediction validated on the real SmolLM2-135M-Instruct (language source, memoised).

Prompts are the first words of lines of the held-out plays. Per distinct gamma, unwatermarked generations
(T tokens, sampled at temperature 1) record p(G) and entropy at every step: they are the calibration set of
the prediction (made before any watermarked text exists) and the negatives of the detector. Per (gamma,
delta) cell, watermarked generations from the same prompts give the empirical detection rate with its
Clopper-Pearson interval; the power formula is evaluated on the calibration p(G) (the real LM's entropy
enters through them), along the watermarked path, and in its high-entropy closed form.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.data.language.corpora import shakespeare_text
from repro.data.language.generate import GenerationSettings, generate
from repro.data.language.model import LanguageModel, smollm2
from repro.papers.watermark_power.detection import detected, detected_exact, rate
from repro.papers.watermark_power.hook import GreenListHook, records_to_arrays
from repro.papers.watermark_power.lm import first_occurrences, is_green
from repro.papers.watermark_power.theory import green_prob, kl_per_step, power, power_formula
from repro.workflow.io import write_json


def prompts_from_plays(root: str, plays: list[str], count: int, words: int, seed: int) -> list[str]:
    """``count`` distinct line openings (``words`` words, speaker names and stage directions skipped)."""
    lines = []
    for play in plays:
        for line in shakespeare_text(root, play).splitlines():
            parts = line.strip().split()
            if len(parts) >= words and not line.strip().isupper() and not parts[0].startswith(("[", "<")):
                lines.append(" ".join(parts[:words]))
    unique = sorted(set(lines))
    rng = np.random.default_rng(seed)
    return [unique[i] for i in rng.choice(len(unique), size=count, replace=False)]


def generations(lm: LanguageModel, prompts: list[str], hook: GreenListHook, rl: dict, seed: int) -> dict:
    settings = GenerationSettings(
        max_new_tokens=rl["length"], temperature=1.0, top_p=1.0, seed=seed, batch_size=rl["batch_size"]
    )
    records = generate(lm, prompts, settings, cache=rl.get("cache"), hook=hook)
    last = [lm.tokenizer(p, add_special_tokens=False).input_ids[-1] for p in prompts]
    arrays = records_to_arrays(records, last, rl["length"])
    v = lm.model.config.vocab_size
    arrays["green"] = is_green(hook.key, arrays["prev"], arrays["tokens"], v, hook.gamma)
    arrays["scored"] = first_occurrences(arrays["prev"], arrays["tokens"], v)
    arrays["cached"] = np.array([r["cached"] for r in records])
    return arrays


def summarise(plain: dict[float, dict], marked: dict[tuple[float, float], dict], alpha: float, length: int) -> dict:
    """Per cell: empirical detection rate and interval, predicted power, entropy, KL; per gamma: the FPR."""
    cells = []
    for (gamma, delta), wm in marked.items():
        cal = plain[gamma]
        cells.append(
            {
                "gamma": gamma,
                "delta": delta,
                "T": length,
                "empirical": rate(detected(wm["green"], wm["scored"], gamma, alpha)),
                "empirical_exact_test": rate(detected_exact(wm["green"], wm["scored"], gamma, alpha)),
                "predicted": float(np.mean(power(green_prob(cal["p_green"], delta), cal["scored"], gamma, alpha))),
                "predicted_path": float(np.mean(power(green_prob(wm["p_green"], delta), wm["scored"], gamma, alpha))),
                "predicted_high_entropy": power_formula(gamma, delta, length, alpha),
                "entropy_calibration": float(np.mean(cal["entropy"])),
                "entropy_watermarked": float(np.mean(wm["entropy"])),
                "p_green_calibration": float(np.mean(cal["p_green"])),
                "kl_empirical": float(np.mean(kl_per_step(wm["p_green"], delta))),
            }
        )
    negatives = [
        {"gamma": gamma, "alpha": alpha} | rate(detected(cal["green"], cal["scored"], gamma, alpha))
        for gamma, cal in plain.items()
    ]
    return {"cells": cells, "false_positive": negatives}


def main(job) -> None:
    cfg = job.params.settings
    rl = cfg["real_lm"]
    torch.set_num_threads(int(getattr(job, "threads", 1) or 1))
    lm = smollm2(job.input.model)
    prompts = prompts_from_plays(
        job.input.text, cfg["heldout_plays"], rl["sequences"], rl["prompt_words"], job.params.seed
    )
    suppress = list(lm.tokenizer.all_special_ids)
    cells = [(float(g), float(d)) for g, d in rl["cells"]]
    plain = {
        g: generations(lm, prompts, GreenListHook(cfg["key"], g, 0.0, suppress), rl, job.params.seed) for g, _ in cells
    }
    marked = {
        (g, d): generations(lm, prompts, GreenListHook(cfg["key"], g, d, suppress), rl, job.params.seed)
        for g, d in cells
    }
    summary = summarise(plain, marked, cfg["alpha"], rl["length"])
    every = [a["cached"] for a in [*plain.values(), *marked.values()]]
    write_json(
        job.output.real_lm,
        summary
        | {
            "model": lm.name,
            "model_sha256": lm.sha256,
            "sequences": rl["sequences"],
            "length": rl["length"],
            "memo_hits": float(np.mean(np.concatenate(every))),
            "examples": [{"prompt": p, "watermarked": r} for p, r in zip(prompts[:2], marked_texts(lm, marked))],
        },
    )


def marked_texts(lm: LanguageModel, marked: dict) -> list[str]:
    """The first watermarked generations of the first cell, decoded (for the reader of the metrics)."""
    first = next(iter(marked.values()))
    return [lm.tokenizer.decode(row) for row in first["tokens"][:2].tolist()]
