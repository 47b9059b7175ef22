"""ImgCoT's pieces: the problems' arithmetic, the font-fit rule, method sequences, step selection, GPU probe."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from repro.papers.imgcot import data as imgcot_data
from repro.papers.imgcot import gpu_probe
from repro.papers.imgcot.models import ImageVQ, TinyLM, VectorQuantizer
from repro.papers.imgcot.problems import make_problem, make_templates, vocabulary
from repro.papers.imgcot.render import font, layout, render
from repro.papers.imgcot.sequences import Encoder, select_steps, step_loglik

SMALL = {
    "data_seed": 0,
    "templates": 8,
    "min_steps": 3,
    "max_steps": 5,
    "earlier_operand_share": 0.3,
    "heldout_share": 0.25,
    "modulus": 5,
    "n_train": 40,
    "n_test": 12,
    "n_heldout": 12,
    "image": {"height": 64, "width": 256, "max_font": 24},
}


def evaluate_program(question: tuple[str, ...], modulus: int) -> int:
    """Independent evaluation of the question's program with Python's own arithmetic."""
    env: dict[str, int] = {}
    for statement in " ".join(question).split(";"):
        if statement.strip():
            name, expr = statement.split("=")
            env[name.strip()] = eval(expr.replace(" ", ""), {}, dict(env)) % modulus  # noqa: S307 - generated digits and names only
    return env[name.strip()]


def test_answers_and_steps_follow_the_program():
    rng = np.random.default_rng(0)
    for template in make_templates(12, 3, 6, seed=1, earlier_share=0.5):
        problem = make_problem(template, rng, 7)
        assert int(problem.answer) == evaluate_program(problem.question, 7)
        assert len(problem.steps) == len(template.steps) and problem.steps[-1][-1] == problem.answer


def test_font_rule_picks_the_largest_size_that_fits():
    lines = ["b = a + 3 = 4", "c = b * 2 = 1", "d = c - 1 = 0", "e = d + b = 1"]
    size, boxes = layout(lines, 64, 256, 40)
    assert all(b[2] <= 256 - 2 and b[3] <= 64 - 2 for b in boxes)
    bigger = font(size + 1)
    heights = sum(bigger.getbbox(line)[3] + 1 for line in lines)
    assert heights + 2 > 64 - 2 or max(bigger.getbbox(line)[2] for line in lines) + 2 > 256 - 2
    image, used, fits = render(lines, 64, 256, 40)
    assert used == size and fits and image.shape == (64, 256) and image.max() == 255


def test_data_stage_writes_table_and_matching_images(tmp_path):
    out = NS(problems=str(tmp_path / "p.parquet"), images=str(tmp_path / "i.zarr"), manifest=str(tmp_path / "m.json"))
    imgcot_data.main(NS(params=NS(settings=SMALL), output=out))
    table = pd.read_parquet(out.problems)
    assert set(table["split"]) == {"train", "test", "heldout"} and table["fits"].all()
    held = set(table.loc[table.split == "heldout", "template_id"])
    assert held.isdisjoint(set(table.loc[table.split != "heldout", "template_id"]))


def encoder() -> tuple[Encoder, dict]:
    table, _ = imgcot_data.generate(SMALL)
    enc = Encoder(vocabulary(8), table)
    codes = {"imgcot": np.zeros((len(table), 3), int), "text_ae": np.ones((len(table), 3), int)}
    return enc, codes


def test_method_sequences_hold_the_right_reasoning():
    enc, codes = encoder()
    kept = [[0] for _ in enc.answers]
    lengths = {m: enc.reasoning_lengths(m, codes, kept) for m in ("no_cot", "full_cot", "imgcot", "l_imgcot_k1")}
    assert (lengths["no_cot"] == 0).all() and (lengths["imgcot"] == 3).all()
    assert (lengths["l_imgcot_k1"] == 3 + 8).all()  # one step: 7 tokens and its ';'
    ids, weight = enc.sequences("l_imgcot_k1", codes, kept)
    row = ids[0, weight[0] > 0].tolist()
    assert enc.vocab[row[0]] == "z0" and enc.vocab[row[-1]] == "<eos>" and enc.vocab[row[-3]] == "<ans>"
    assert ids.shape[1] <= enc.max_len(codes)


def test_lowest_likelihood_selection_keeps_the_argmin_step():
    enc, codes = encoder()
    torch.manual_seed(0)
    model = TinyLM(len(enc.vocab), 16, 1, 2, enc.max_len(codes))
    scores = step_loglik(model, enc)
    kept = select_steps(model, enc, 1, "lowest_loglik", seed=0)
    assert all(k == [int(np.argmin(s))] for k, s in zip(kept, scores))
    assert select_steps(model, enc, 1, "random", seed=0) == select_steps(model, enc, 1, "random", seed=0)
    assert select_steps(model, enc, 2, "first", seed=0) == [list(range(min(2, len(s)))) for s in scores]


def test_vector_quantiser_passes_gradients_straight_through():
    vq = VectorQuantizer(8, 4)
    z = torch.randn(5, 2, 4, requires_grad=True)
    q, index, loss = vq(z)
    torch.testing.assert_close(q, vq.codes(index))
    (q.sum() + loss).backward()
    assert z.grad is not None and torch.all(z.grad != 0)


def test_gpu_probe_builds_on_the_cpu_with_the_default_section(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["imgcot"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    value = loss(model, make_batch(2))
    value.backward()
    assert torch.isfinite(value) and isinstance(model["vq"], ImageVQ)


def test_gpu_probe_sizes_the_lm_and_the_text_autoencoder_as_train_does_from_the_data(repo):
    """The probe's LM positions and chain width are train.py's (``Encoder.max_len`` over the data stage's whole
    table with ``n_latent`` codes, ``cot_tensors``' width), from problems drawn without the rendering."""
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["imgcot"]
    table, _ = imgcot_data.generate(section)
    enc = Encoder(vocabulary(section["latent"]["codebook"]), table)
    codes = {"imgcot": np.zeros((len(table), section["latent"]["n_latent"]))}
    assert gpu_probe.sequence_lengths(section) == (enc.max_len(codes), enc.cot_tensors()[0].shape[1])
    longer = section | {"max_steps": section["max_steps"] + 2}
    assert gpu_probe.sequence_lengths(longer)[0] > gpu_probe.sequence_lengths(section)[0]


@pytest.mark.parametrize("rule", ["last", "highest"])
def test_unknown_selection_rule_is_refused(rule):
    enc, codes = encoder()
    model = TinyLM(len(enc.vocab), 16, 1, 2, enc.max_len(codes))
    with pytest.raises(ValueError, match="unknown step-selection rule"):
        select_steps(model, enc, 1, rule, seed=0)


def test_text_autoencoder_decodes_from_the_codes_alone():
    """The text decoder sees positions, not the previous tokens: its logits depend on the codes and not on the
    chain it is asked to reconstruct (beyond its length), so the codes must carry the chain."""
    from repro.papers.imgcot.models import TextAE
    from repro.papers.imgcot.train import text_errors

    torch.manual_seed(0)
    tae = TextAE(12, 2, 8, 4, 16).eval()
    ids = torch.randint(1, 12, (3, 7))
    q = torch.randn(3, 2, 4)  # three different codes' vectors
    other = torch.randint(1, 12, (3, 7))
    torch.testing.assert_close(tae.decode(q, ids), tae.decode(q, other))
    assert not torch.allclose(tae.decode(q, ids), tae.decode(torch.roll(q, 1, 0), ids))
    own, shuffled = text_errors(tae, ids, torch.ones(3, 7))
    assert own.shape == shuffled.shape == (3,) and np.all(np.isfinite(own))


def test_vector_quantiser_starts_its_codebook_from_the_first_batch():
    torch.manual_seed(0)
    vq = VectorQuantizer(4, 2)
    z = torch.randn(10, 2) * 5
    vq.train()
    _, index, _ = vq(z)
    assert bool(vq.initialised) and len(torch.unique(index)) > 1
    assert torch.cdist(vq.codes.weight, z).min(1).values.max() < 0.1  # every entry is one of the batch's vectors
