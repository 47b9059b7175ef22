"""Stage: reconstruction RMSD against kept tokens, equal-bits comparison, probes, shrinking, claims.

Every metric is computed here with numpy from the decoded coordinates and tokens the train stage wrote
(read lazily from its array folder and processed ``inference.batch`` windows at a time, so memory stays
flat in the number of windows)
(C-alpha RMSD after Kabsch superposition: :func:`repro.metrics.protein_geometry.rmsd`; DSSP of decoded backbones:
:func:`repro.metrics.protein_geometry.dssp_of_backbone`), independently of the torch losses. Held-out = the
source's val and test chains (nothing is selected on them); per-window numbers are averaged per sequence
group first, the unit the claims' bootstrap resamples. The fold-class probes are the exception: they are
cross-fitted over every window (:func:`probe_folds`: folds of whole sequence groups, each scored by probes
fitted on the other folds), since the held-out chains alone are too few groups for their intervals.
The non-learned global baseline (top principal components of the C-alpha distance matrix, quantised to
the same bits, decoded by classical MDS) is reported beside the tokenizers; it is fitted incrementally
(scikit-learn's IncrementalPCA) on at most ``inference.pca_fit_windows`` training windows and applied
batch by batch. The learning checks' trivial
predictors are computed here too: the medoid training window (the structure that is closest on average to
the others, what a decoder that ignores its tokens could output at best) and each fold's class prior.
"""

from __future__ import annotations

import logging

import numpy as np
from sklearn.decomposition import IncrementalPCA
from sklearn.metrics import f1_score
from sklearn.model_selection import GroupKFold
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from repro.data.structures.dssp import dssp_of_backbone
from repro.metrics.protein_geometry import distance_matrix, rmsd
from repro.papers.protein_tokens.arrays import batches, open_arrays
from repro.papers.protein_tokens.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, write_json

log = logging.getLogger(__name__)
MEDOID_CANDIDATES = 200


def per_group(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Mean of ``values [..., N]`` over the windows of each group (sorted group ids) -> ``[..., G]``."""
    ids = np.unique(groups)
    return np.stack([values[..., groups == g].mean(axis=-1) for g in ids], axis=-1)


def window_rmsd(pred_ca: np.ndarray, true_ca: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """C-alpha RMSD per window ``[N]`` (valid residues only)."""
    return np.array([rmsd(pred_ca[i, mask[i] > 0], true_ca[i, mask[i] > 0]) for i in range(len(true_ca))])


def held_rmsd(ca, windows: dict, rows: np.ndarray, batch: int) -> np.ndarray:
    """C-alpha RMSD ``[K, N]`` of the decodes ``ca [K, N, W, 3]`` of the windows ``rows``, batch by batch."""
    out = np.empty((ca.shape[0], len(rows)))
    for part in batches(len(rows), batch):
        true = np.asarray(windows["backbone"][rows[part]])[..., 1, :]
        mask = np.asarray(windows["mask"][rows[part]])
        block = np.asarray(ca[:, part])
        for k in range(len(block)):
            out[k, part] = window_rmsd(block[k], true, mask)
    return out


def medoid_rmsd(windows: dict, rows: np.ndarray, batch: int) -> np.ndarray:
    """RMSD of every window ``rows`` to the medoid of (up to MEDOID_CANDIDATES) full training windows: the
    trivial reconstruction, a structure that ignores the tokens."""
    split, mask = np.asarray(windows["split"]), windows["mask"]
    train = np.flatnonzero(split == 0)
    full = train[np.asarray(mask[train]).min(axis=1) > 0]
    pick = np.sort(np.random.default_rng(0).permutation(full)[:MEDOID_CANDIDATES])
    ca = np.asarray(windows["backbone"][pick])[..., 1, :]
    pairwise = np.array([[rmsd(a, b) for b in ca] for a in ca])
    medoid = ca[int(np.argmin(pairwise.mean(axis=1)))]
    out = np.empty(len(rows))
    for part in batches(len(rows), batch):
        true, m = np.asarray(windows["backbone"][rows[part]])[..., 1, :], np.asarray(mask[rows[part]])
        out[part] = [rmsd(medoid[mi > 0], t[mi > 0]) for t, mi in zip(true, m)]
    return out


def probe_folds(groups: np.ndarray, folds: int) -> np.ndarray:
    """Fold of every window for cross-fitting the probes: whole sequence groups (every window of a protein,
    every model of an NMR ensemble) are dealt into ``folds`` folds (scikit-learn's GroupKFold, deterministic),
    so no window of a protein is ever both in a probe's fit and in its evaluation. Why cross-fitting: the
    held-out chains alone are too few sequence groups for the probes' intervals to resolve their skill."""
    n = min(int(folds), int(np.unique(groups).size))
    if n < 2:
        raise ValueError(f"cross-fitting the probes needs at least two sequence groups, got {n}")
    out = np.empty(len(groups), np.int64)
    for f, (_, scored) in enumerate(GroupKFold(n).split(groups, groups=groups)):
        out[scored] = f
    return out


def fit_rows(folds: np.ndarray, limit: int, seed: int) -> list[np.ndarray]:
    """Per fold, the windows its probes (and its class prior) are fitted on: every window of the other folds,
    at most ``limit`` of them (a seeded subset, so the fit's cost is bounded at any scale)."""
    out = []
    for f in range(int(folds.max()) + 1):
        rows = np.flatnonzero(folds != f)
        if len(rows) > limit:
            rows = np.sort(np.random.default_rng([seed, 3, f]).choice(rows, limit, replace=False))
        out.append(rows)
    return out


def fit_probe(features: np.ndarray, labels: np.ndarray, settings: dict, seed: int):
    """Non-linear probe (standardised MLP) fitted on one fold's fit windows."""
    model = make_pipeline(
        StandardScaler(),
        MLPClassifier(
            hidden_layer_sizes=(settings["hidden"],),
            alpha=settings["alpha"],
            max_iter=settings["max_iter"],
            random_state=seed,
        ),
    )
    return model.fit(features, labels)


def cross_fitted(codes, labels, folds, fits, settings: dict, seed: int, batch: int) -> np.ndarray:
    """The probe's prediction for every window, each window predicted by the probe fitted on ``fits[f]`` (the
    other folds) for its fold f; the scored windows are featurised and predicted ``batch`` at a time."""
    predicted = np.empty(len(labels), labels.dtype)
    for f, rows in enumerate(fits):
        model = fit_probe(probe_features(codes, rows, batch), labels[rows], settings, seed)
        scored = np.flatnonzero(folds == f)
        for part in batches(len(scored), batch):
            predicted[scored[part]] = model.predict(probe_features(codes, scored[part], batch))
    return predicted


def prior_predictions(labels: np.ndarray, folds: np.ndarray, fits: list[np.ndarray]) -> np.ndarray:
    """The class prior's prediction for every window: the majority class of its fold's fit windows."""
    predicted = np.empty_like(labels)
    for f, rows in enumerate(fits):
        predicted[folds == f] = np.argmax(np.bincount(labels[rows]))
    return predicted


def scores(predicted: np.ndarray, labels: np.ndarray) -> dict:
    correct = (predicted == labels).astype(float)
    return {
        "correct": correct,
        "accuracy": float(np.mean(correct)),
        "macro_f1": float(f1_score(labels, predicted, average="macro")),
    }


def classical_mds(d: np.ndarray) -> np.ndarray:
    """3-D coordinates whose distances best match ``d`` (Torgerson); defined up to a reflection."""
    n = len(d)
    j = np.eye(n) - 1.0 / n
    b = -0.5 * j @ (d**2) @ j
    values, vectors = np.linalg.eigh(b)
    top = np.argsort(values)[::-1][:3]
    return vectors[:, top] * np.sqrt(np.clip(values[top], 0, None))


def _distances(windows: dict, rows: np.ndarray) -> np.ndarray:
    """Upper-triangle C-alpha distance vectors of the windows ``rows`` (one batch)."""
    ca = np.asarray(windows["backbone"][rows])[..., 1, :]
    iu = np.triu_indices(ca.shape[1], 1)
    return np.stack([distance_matrix(x)[iu] for x in ca]) if len(ca) else np.empty((0, len(iu[0])))


def _chunks(rows: np.ndarray, size: int) -> list[np.ndarray]:
    """``rows`` in chunks of at least ``size`` (the last short one joins the previous)."""
    parts = [rows[p] for p in batches(len(rows), size)]
    if len(parts) > 1 and len(parts[-1]) < size:
        parts[-2:] = [np.concatenate(parts[-2:])]
    return parts


def full_rows(windows: dict, rows: np.ndarray, batch: int) -> np.ndarray:
    """The windows of ``rows`` without padding (the PCA baseline needs equal-length distance vectors)."""
    keep = [rows[p][np.asarray(windows["mask"][rows[p]]).min(axis=1) > 0] for p in batches(len(rows), batch)]
    return np.concatenate(keep) if keep else rows[:0]


def pca_baseline(windows: dict, held: np.ndarray, levels: list[int], tokens: int, settings: dict) -> dict:
    """Top K * len(levels) PCs of the upper-triangle C-alpha distances, each coefficient uniformly quantised to
    its FSQ level count over +-3 training SDs (same bits as the tokens); decoded by MDS. Full windows only.

    Streamed: the components are fitted incrementally on at most ``pca_fit_windows`` training windows, then
    every held-out window is encoded, quantised and decoded a batch at a time, so memory holds one batch of
    distance vectors (W (W - 1) / 2 each: 32,640 at W = 256) plus the components, whatever the number of
    windows. The better of the two mirror images is scored (MDS cannot tell them apart), which favours the
    baseline."""
    batch = int(settings["batch"])
    split = np.asarray(windows["split"])
    train = full_rows(windows, np.flatnonzero(split == 0), batch)
    if len(train) > settings["pca_fit_windows"]:  # fit the components on a fixed subset of training windows
        train = np.sort(np.random.default_rng(0).choice(train, settings["pca_fit_windows"], replace=False))
    n_pc = min(tokens * len(levels), len(train) - 1)
    pca = IncrementalPCA(n_components=n_pc)
    for part in _chunks(train, max(batch, n_pc)):
        pca.partial_fit(_distances(windows, part))
    total, square = np.zeros(n_pc), np.zeros(n_pc)
    for part in _chunks(train, batch):
        coef = pca.transform(_distances(windows, part))
        total, square = total + coef.sum(axis=0), square + (coef**2).sum(axis=0)
    sd = np.sqrt(np.maximum(square / len(train) - (total / len(train)) ** 2, 0.0))
    grid = np.resize(np.asarray(levels), n_pc)
    step = 6 * sd / (grid - 1)
    rows = full_rows(windows, held, batch)
    out = []
    for part in batches(len(rows), batch):
        quantised = np.clip(
            np.round(pca.transform(_distances(windows, rows[part])) / step), -(grid - 1) / 2, (grid - 1) / 2
        )
        recon = pca.inverse_transform(quantised * step)
        true_ca = np.asarray(windows["backbone"][rows[part]])[..., 1, :]
        iu = np.triu_indices(true_ca.shape[1], 1)
        for row, true in zip(recon, true_ca):
            d = np.zeros((len(true), len(true)))
            d[iu] = np.clip(row, 0, None)
            x = classical_mds(d + d.T)
            out.append(min(rmsd(x, true), rmsd(x * np.array([-1.0, 1.0, 1.0]), true)))
    return {"rmsd": np.asarray(out), "windows": int(len(rows)), "components": int(n_pc)}


def composition(dssp: str) -> np.ndarray:
    return np.array([dssp.count("H") / len(dssp), dssp.count("E") / len(dssp)])


def shrink_metrics(windows, shrunk_bb, shrunk_mask, held, groups, seed: int, batch: int) -> dict:
    """Helix/strand fractions of the shrunk decodes against their own windows and a random other window."""
    true, shrunk = [], []
    for part in batches(len(held), batch):
        dssp, mask = np.asarray(windows["dssp"][held[part]]), np.asarray(windows["mask"][held[part]])
        true += [composition("".join("HEC"[c] for c in d[m > 0])) for d, m in zip(dssp, mask)]
        bb, small = np.asarray(shrunk_bb[part]), np.asarray(shrunk_mask[part])
        shrunk += [composition(dssp_of_backbone(b[m > 0])) for b, m in zip(bb, small)]
    rng = np.random.default_rng([seed, 5])
    other = np.array([rng.choice(np.flatnonzero(groups != g)) for g in groups])
    own = np.array([np.abs(s - t).sum() for s, t in zip(shrunk, true)])
    to_other = np.array([np.abs(shrunk[i] - true[j]).sum() for i, j in enumerate(other)])
    return {
        "gap_to_own_per_group": per_group(own, groups),
        "gap_to_other_per_group": per_group(to_other, groups),
        "gap_to_own_mean": float(np.mean(own)),
        "gap_to_other_mean": float(np.mean(to_other)),
        "true_fractions_mean": np.mean(true, axis=0),
        "shrunk_fractions_mean": np.mean(shrunk, axis=0),
    }


def probe_features(codes, rows: np.ndarray, batch: int) -> np.ndarray:
    """Probe inputs of the windows ``rows``: their K tokens concatenated (K x c features)."""
    parts = []
    for part in batches(len(rows), batch):
        block = np.asarray(codes[rows[part]], dtype=np.float32)
        parts.append(block.reshape(len(block), -1))
    return np.concatenate(parts)


def seed_metrics(windows: dict, outputs: dict, settings: dict, run_seed: int) -> dict:
    """The per-group numbers of one training seed (the claims average them over seeds)."""
    batch = int(settings["inference"]["batch"])
    split, labels = np.asarray(windows["split"]), np.asarray(windows["label"])
    held = np.flatnonzero(split > 0)
    groups = np.asarray(windows["group"])[held]
    tokens = settings["model"]["tokens"]
    prefix_k = max(1, tokens // 4)
    out: dict = {"rmsd_by_k": {}, "at_k": {}, "prefix": {}}
    for variant in settings["variants"]:
        per_k = held_rmsd(outputs[f"ca/{variant}/{run_seed}"], windows, held, batch)
        out["rmsd_by_k"][variant] = per_k.mean(axis=1)
        out["at_k"][variant] = per_group(per_k[-1], groups)
        if len(per_k) == tokens:
            out["prefix"][variant] = per_group(per_k[prefix_k - 1], groups)
        if variant == "apt":
            out["apt_by_k"] = per_group(per_k, groups)
    features = {"apt_global": outputs[f"codes/apt/{run_seed}"]}
    if "local" in settings["variants"]:
        features["local_concatenated"] = outputs[f"codes/local/{run_seed}"]
    folds = probe_folds(np.asarray(windows["group"]), settings["probe"]["folds"])
    fits = fit_rows(folds, settings["inference"]["probe_train_windows"], run_seed)
    out["probe"] = {
        name: scores(cross_fitted(codes, labels, folds, fits, settings["probe"], run_seed, batch), labels)
        for name, codes in features.items()
    }
    out["probe"]["class_prior"] = scores(prior_predictions(labels, folds, fits), labels)
    out["probe_folds"] = int(folds.max()) + 1
    out["probe_dimensions"] = {name: int(np.prod(codes.shape[1:])) for name, codes in features.items()}
    out["shrink"] = shrink_metrics(
        windows, outputs[f"shrunk/apt/{run_seed}"], outputs["shrunk_mask"], held, groups, run_seed, batch
    )
    return out


def _mean(items: list) -> np.ndarray:
    return np.mean(np.stack([np.asarray(i, dtype=float) for i in items]), axis=0)


def compute_metrics(windows: dict, outputs: dict, training: dict, settings: dict) -> dict:
    """Seed-averaged metrics: per-group values are averaged over training seeds before the claims resample
    the groups; per-seed summaries are kept for the spread over seeds."""
    batch = int(settings["inference"]["batch"])
    held = np.flatnonzero(np.asarray(windows["split"]) > 0)
    groups = np.asarray(windows["group"])[held]
    seeds = training["seeds"]
    runs = [seed_metrics(windows, outputs, settings, s) for s in seeds]
    variants = settings["variants"]
    metrics: dict = {"checks": training["checks"], "bits_per_window": training["bits_per_window"], "seeds": seeds}
    metrics["parameters"] = training["parameters"]
    metrics["heldout_windows"], metrics["heldout_groups"] = int(held.size), int(np.unique(groups).size)
    metrics["rmsd_by_k"] = {v: _mean([r["rmsd_by_k"][v] for r in runs]) for v in variants}
    metrics["apt_rmsd_by_k_per_group"] = _mean([r["apt_by_k"] for r in runs])
    metrics["rmsd_at_k_per_group"] = {v: _mean([r["at_k"][v] for r in runs]) for v in variants}
    metrics["medoid_rmsd_per_group"] = per_group(medoid_rmsd(windows, held, batch), groups)
    metrics["prefix_k"] = max(1, settings["model"]["tokens"] // 4)
    metrics["prefix_rmsd_per_group"] = {v: _mean([r["prefix"][v] for r in runs]) for v in runs[0]["prefix"]}
    metrics["mean_rmsd_at_k"] = {v: float(np.mean(r)) for v, r in metrics["rmsd_at_k_per_group"].items()}
    metrics["mean_rmsd_at_k_per_seed"] = {v: [float(np.mean(r["at_k"][v])) for r in runs] for v in variants}
    baseline = pca_baseline(
        windows, held, list(settings["model"]["levels"]), settings["model"]["tokens"], settings["inference"]
    )
    metrics["pca_baseline"] = {k: v for k, v in baseline.items() if k != "rmsd"} | {
        "mean_rmsd": float(np.mean(baseline["rmsd"]))
    }
    names = list(runs[0]["probe"])
    labels, all_groups = np.asarray(windows["label"]), np.asarray(windows["group"])
    tokenizer_held = np.asarray(windows["split"]) > 0
    metrics["probe"] = {
        "accuracy": {n: float(np.mean([r["probe"][n]["accuracy"] for r in runs])) for n in names},
        "macro_f1": {n: float(np.mean([r["probe"][n]["macro_f1"] for r in runs])) for n in names},
        "accuracy_per_seed": {n: [r["probe"][n]["accuracy"] for r in runs] for n in names},
        # the tokenizers trained on the training chains: accuracy on those and on the held-out ones, apart
        "accuracy_by_tokenizer_split": {
            part: {n: float(np.mean([np.mean(r["probe"][n]["correct"][rows]) for r in runs])) for n in names}
            for part, rows in (("training_chains", ~tokenizer_held), ("heldout_chains", tokenizer_held))
        },
        "correct_per_group": {n: _mean([per_group(r["probe"][n]["correct"], all_groups) for r in runs]) for n in names},
        "dimensions": runs[0]["probe_dimensions"],
        "folds": runs[0]["probe_folds"],
        "scored_windows": int(labels.size),
        "scored_groups": int(np.unique(all_groups).size),
        "class_counts": np.bincount(labels, minlength=3),
    }
    shrink = [r["shrink"] for r in runs]
    metrics["shrink"] = {key: _mean([s[key] for s in shrink]) for key in shrink[0]} | {"factor": settings["shrink"]}
    return metrics


def main(job) -> None:
    settings = job.params.settings
    windows = open_arrays(job.input.windows)
    outputs = open_arrays(job.input.outputs)
    training = read_json(job.input.training)
    metrics = compute_metrics(windows, outputs, training, settings)
    log.info(
        "held-out RMSD at K tokens %s; PCA baseline %.2f Å",
        metrics["mean_rmsd_at_k"],
        metrics["pca_baseline"]["mean_rmsd"],
    )
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "protein-tokens", claims)
