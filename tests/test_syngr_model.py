"""SynGR's pieces: semantic IDs, trie-constrained beam search, dominant-modality masking, metrics, generator."""

import itertools

import numpy as np
import pytest
import torch
from sklearn.metrics import ndcg_score

from repro.papers.syngr import gpu_probe
from repro.papers.syngr.codes import cca_fusion, collisions, disambiguate, residual_codes, standardise
from repro.papers.syngr.metrics import hit_rate, ndcg, target_ranks
from repro.papers.syngr.model import Seq2Seq, beam_search
from repro.papers.syngr.sequences import BOS, PAD, build_trie, decoder_io, encode_history, leave_one_out, tokenise
from repro.papers.syngr.synergy import dominant_modality, mask_dominant, syngr_loss, unimodal
from repro.papers.syngr.synthetic import generate

SYNTHETIC = {
    "items": 40,
    "dim": 8,
    "noise": 0.2,
    "clusters": 3,
    "users": 30,
    "min_length": 4,
    "max_length": 6,
    "beta": 1.5,
    "weights": {"shared": 1.0, "text": 1.0, "image": 0.5, "transition": 0.3},
}
SECTION = {"model": {"d": 16, "heads": 2, "layers": 1, "ff": 32}}


def codes_of(n: int = 40) -> dict:
    rng = np.random.default_rng(0)
    return {k: rng.integers(3, size=(n, 2)) for k in ("text", "image", "fused")}


def test_residual_codes_refine_and_disambiguation_makes_ids_unique():
    x = np.random.default_rng(1).normal(size=(200, 6))
    codes = residual_codes(x, levels=3, codebook=4, seed=0)
    assert codes.shape == (200, 3) and codes.max() < 4
    z = standardise(x)

    def error(levels: int) -> float:
        recon = np.zeros_like(z)
        for lv in range(levels):
            resid = z - recon
            for c in range(4):
                members = codes[:, lv] == c
                recon[members] += resid[members].mean(0)
        return float(np.mean((z - recon) ** 2))

    assert error(1) > error(2) > error(3)
    assert collisions(codes[:, :1]) > 0
    assert collisions(disambiguate(codes[:, :1])) == 0


def test_cca_fusion_keeps_the_shared_signal():
    rng = np.random.default_rng(2)
    shared = rng.normal(size=(500, 1))
    a = np.hstack([shared, rng.normal(size=(500, 3))])
    b = np.hstack([rng.normal(size=(500, 3)), -shared])
    fused = cca_fusion(a, b, dims=1)
    assert abs(np.corrcoef(fused[:, 0], shared[:, 0])[0, 1]) > 0.95


def test_trie_beam_search_generates_valid_items_and_matches_exhaustive_ranking():
    tokens = tokenise(codes_of(), "concat")
    trie = build_trie(tokens.target_tokens, tokens.vocab)
    torch.manual_seed(0)
    model = Seq2Seq(tokens.vocab, 16, 2, 1, 32, 8, tokens.target_tokens.shape[1]).eval()
    src = torch.as_tensor(encode_history(np.array([[0, 1], [2, -1]]), tokens)[0])
    n_items = len(tokens.target_tokens)
    ranked = beam_search(model, src, trie, beams=n_items, length=tokens.target_tokens.shape[1])
    assert set(ranked[0].tolist()) == set(range(n_items))  # every beam an existing item, each once
    tgt_in, tgt_out = decoder_io(np.arange(n_items), tokens)
    with torch.no_grad():
        logits, _ = model(src[:1].repeat(n_items, 1), torch.as_tensor(tgt_in))
    logp = torch.log_softmax(logits, -1).gather(-1, torch.as_tensor(tgt_out).unsqueeze(-1)).sum((1, 2))
    np.testing.assert_array_equal(ranked[0].numpy(), torch.argsort(logp, descending=True).numpy())


def test_masking_pads_floor_ratio_of_the_dominant_block_most_important_first():
    src = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 12], [5, PAD, 7, 8, 9, PAD, 11, 12]])
    modality = torch.tensor([0, 0, 1, 1, 0, 0, 1, 1])
    imp = torch.tensor([[0.3, 0.2, 0.01, 0.02, 0.25, 0.2, 0.01, 0.01], [0.0, 0.0, 0.3, 0.3, 0.0, 0.0, 0.2, 0.2]])
    dom = dominant_modality(imp, src, modality, 2)
    assert dom.tolist() == [0, 1]
    masked, count = mask_dominant(src, imp, modality, dom, ratio=0.5)
    assert count.tolist() == [2, 2]
    assert masked[0].tolist() == [PAD, 6, 7, 8, PAD, 10, 11, 12]  # the two most important text tokens
    assert masked[1].tolist() == [5, PAD, PAD, PAD, 9, PAD, 11, 12]
    _, count = mask_dominant(src, imp, modality, dom, ratio=0.3)
    assert count.tolist() == [1, 1]  # floor(0.3 * 4)
    assert unimodal(src, modality, dom)[0].tolist() == [5, 6, PAD, PAD, 9, 10, PAD, PAD]


def test_syngr_loss_is_finite_and_differentiable():
    tokens = tokenise(codes_of(), "syngr")
    splits = leave_one_out([np.arange(6), np.arange(5, 10)], history=2)
    src, modality = (torch.as_tensor(a) for a in encode_history(splits["train"].history, tokens))
    tgt_in, tgt_out = (torch.as_tensor(a) for a in decoder_io(splits["train"].target, tokens))
    model = Seq2Seq(tokens.vocab, 16, 2, 1, 32, src.shape[1], tgt_in.shape[1])
    loss = syngr_loss(model, (src, tgt_in, tgt_out), modality, 2, 0.3, 0.1, 0.07)
    loss.backward()
    assert torch.isfinite(loss) and model.head.weight.grad.abs().sum() > 0


def test_leave_one_out_splits_and_decoder_io():
    splits = leave_one_out([np.array([3, 4, 5, 6, 7]), np.array([1, 2])], history=2)
    assert splits["test"].target.tolist() == [7] and splits["test"].history.tolist() == [[5, 6]]
    assert splits["valid"].target.tolist() == [6]
    assert splits["train"].history.tolist() == [[-1, 3], [3, 4]] and splits["train"].target.tolist() == [4, 5]
    tokens = tokenise(codes_of(), "text")
    tgt_in, tgt_out = decoder_io(np.array([0]), tokens)
    assert tgt_in[0, 0] == BOS and np.array_equal(tgt_in[0, 1:], tgt_out[0, :-1])


def test_metrics_match_hand_computed_rankings_and_sklearn():
    ranked = np.array([[4, 2, 9], [1, 3, 5], [7, 8, 6]])
    rank = target_ranks(ranked, np.array([2, 1, 0]))
    assert rank.tolist() == [1, 0, -1]
    assert hit_rate(rank, 1) == pytest.approx(1 / 3) and hit_rate(rank, 3) == pytest.approx(2 / 3)
    assert ndcg(rank, 3) == pytest.approx((1 / np.log2(3) + 1.0) / 3)
    scores = np.array([[3.0, 2.0, 1.0]] * 3)
    truth = (ranked == np.array([2, 1, 0])[:, None]).astype(float)
    per_user = [ndcg_score(truth[i : i + 1], scores[i : i + 1], k=3) if truth[i].any() else 0.0 for i in range(3)]
    assert ndcg(rank, 3) == pytest.approx(np.mean(per_user))


def test_synergy_bit_is_invisible_to_each_modality_alone_and_switch_only_changes_sequences():
    on = generate(SYNTHETIC | {"items": 4000, "users": 2}, 0, 3.0)
    for x in (on.text, on.image):
        assert abs(np.corrcoef(np.sign(x[:, 4]), on.synergy)[0, 1]) < 0.05
    assert np.array_equal(np.sign(on.text[:, 4]) * np.sign(on.image[:, 4]), on.synergy)
    on, off = generate(SYNTHETIC, 0, 3.0), generate(SYNTHETIC, 0, 0.0)
    assert np.array_equal(on.text, off.text) and np.array_equal(on.synergy, off.synergy)
    agree = [np.mean(on.synergy[s] == np.sign(np.mean(on.synergy[s]) + 1e-9)) for s in on.sequences]
    agree_off = [np.mean(off.synergy[s] == np.sign(np.mean(off.synergy[s]) + 1e-9)) for s in off.sequences]
    assert np.mean(agree) > np.mean(agree_off)


def test_gpu_probe_builds_and_backpropagates_on_cpu(repo):
    import yaml

    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["syngr"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    loss(model, make_batch(2)).backward()
    assert isinstance(gpu_probe.BATCH_SIZE, int)
    assert all(p.grad is not None for p in itertools.islice(model.parameters(), 3))
