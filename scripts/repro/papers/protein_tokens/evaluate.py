"""Stage: reconstruction RMSD against kept tokens, equal-bits comparison, probes, shrinking, claims.

Every metric is computed here with numpy from the decoded coordinates and tokens the train stage wrote
(C-alpha RMSD after Kabsch superposition: :func:`repro.metrics.protein_geometry.rmsd`; DSSP of decoded backbones:
:func:`repro.metrics.protein_geometry.dssp_of_backbone`), independently of the torch losses. Held-out = the
source's val and test chains (nothing is selected on them); per-window numbers are averaged per sequence
group first, the unit the claims' bootstrap resamples. The non-learned global baseline (top principal
components of the C-alpha distance matrix, quantised to the same bits, decoded by classical MDS) is
reported beside the tokenizers.
"""

from __future__ import annotations

import logging

import numpy as np
from sklearn.decomposition import PCA
from sklearn.metrics import f1_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from repro.data.structures.dssp import dssp_of_backbone
from repro.metrics.protein_geometry import distance_matrix, rmsd
from repro.papers.protein_tokens.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, read_npz, write_json

log = logging.getLogger(__name__)
PCA_FIT_WINDOWS = 5000


def per_group(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Mean of ``values [..., N]`` over the windows of each group (sorted group ids) -> ``[..., G]``."""
    ids = np.unique(groups)
    return np.stack([values[..., groups == g].mean(axis=-1) for g in ids], axis=-1)


def window_rmsd(pred_ca: np.ndarray, true_ca: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """C-alpha RMSD per window ``[N]`` (valid residues only)."""
    return np.array([rmsd(pred_ca[i, mask[i] > 0], true_ca[i, mask[i] > 0]) for i in range(len(true_ca))])


def probe(features_train, y_train, features_test, y_test, settings: dict, seed: int) -> dict:
    """Non-linear probe (standardised MLP) trained on training windows, scored on held-out windows."""
    model = make_pipeline(
        StandardScaler(),
        MLPClassifier(
            hidden_layer_sizes=(settings["hidden"],),
            alpha=settings["alpha"],
            max_iter=settings["max_iter"],
            random_state=seed,
        ),
    )
    model.fit(features_train, y_train)
    predicted = model.predict(features_test)
    return {
        "correct": (predicted == y_test).astype(float),
        "accuracy": float(np.mean(predicted == y_test)),
        "macro_f1": float(f1_score(y_test, predicted, average="macro")),
    }


def classical_mds(d: np.ndarray) -> np.ndarray:
    """3-D coordinates whose distances best match ``d`` (Torgerson); defined up to a reflection."""
    n = len(d)
    j = np.eye(n) - 1.0 / n
    b = -0.5 * j @ (d**2) @ j
    values, vectors = np.linalg.eigh(b)
    top = np.argsort(values)[::-1][:3]
    return vectors[:, top] * np.sqrt(np.clip(values[top], 0, None))


def pca_baseline(windows: dict, held: np.ndarray, levels: list[int], tokens: int) -> dict:
    """Top K * len(levels) PCs of the upper-triangle C-alpha distances, each coefficient uniformly quantised to
    its FSQ level count over +-3 training SDs (same bits as the tokens); decoded by MDS. Full windows only (the
    components are fitted on at most PCA_FIT_WINDOWS training windows);
    the better of the two mirror images is scored (MDS cannot tell them apart), which favours the baseline."""
    full = windows["mask"].min(axis=1) > 0
    train = (windows["split"] == 0) & full
    if train.sum() > PCA_FIT_WINDOWS:  # full scale: fit the components on a fixed subset of training windows
        keep = np.random.default_rng(0).choice(np.flatnonzero(train), PCA_FIT_WINDOWS, replace=False)
        train = np.isin(np.arange(len(train)), keep)
    ca = windows["backbone"][..., 1, :]
    iu = np.triu_indices(ca.shape[1], 1)
    flat = np.stack([distance_matrix(x)[iu] for x in ca])
    n_pc = tokens * len(levels)
    pca = PCA(n_components=min(n_pc, int(train.sum()) - 1)).fit(flat[train])
    coef = pca.transform(flat[held & full])
    sd = pca.transform(flat[train]).std(axis=0)
    grid = np.resize(np.asarray(levels), coef.shape[1])
    step = 6 * sd / (grid - 1)
    quantised = np.clip(np.round(coef / step), -(grid - 1) / 2, (grid - 1) / 2) * step
    recon = pca.inverse_transform(quantised)
    out = []
    for row, true in zip(recon, ca[held & full]):
        d = np.zeros((len(true), len(true)))
        d[iu] = np.clip(row, 0, None)
        x = classical_mds(d + d.T)
        out.append(min(rmsd(x, true), rmsd(x * np.array([-1.0, 1.0, 1.0]), true)))
    return {"rmsd": np.asarray(out), "windows": int((held & full).sum()), "components": int(pca.n_components_)}


def composition(dssp: str) -> np.ndarray:
    return np.array([dssp.count("H") / len(dssp), dssp.count("E") / len(dssp)])


def shrink_metrics(windows, shrunk_bb, shrunk_mask, held, groups, seed: int) -> dict:
    """Helix/strand fractions of the shrunk decodes against their own windows and a random other window."""
    true = [
        composition("".join("HEC"[c] for c in dssp[m > 0]))
        for dssp, m in zip(windows["dssp"][held], windows["mask"][held])
    ]
    shrunk = [composition(dssp_of_backbone(bb[m > 0])) for bb, m in zip(shrunk_bb, shrunk_mask)]
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


def seed_metrics(windows: dict, outputs: dict, settings: dict, run_seed: int) -> dict:
    """The per-group numbers of one training seed (the claims average them over seeds)."""
    held = windows["split"] > 0
    groups = windows["group"][held]
    mask = windows["mask"][held]
    true_ca = windows["backbone"][held][..., 1, :]
    tokens = settings["model"]["tokens"]
    prefix_k = max(1, tokens // 4)
    out: dict = {"rmsd_by_k": {}, "at_k": {}, "prefix": {}}
    for variant in settings["variants"]:
        per_k = np.stack([window_rmsd(c, true_ca, mask) for c in outputs[f"ca/{variant}/{run_seed}"]])
        out["rmsd_by_k"][variant] = per_k.mean(axis=1)
        out["at_k"][variant] = per_group(per_k[-1], groups)
        if len(per_k) == tokens:
            out["prefix"][variant] = per_group(per_k[prefix_k - 1], groups)
        if variant == "apt":
            out["apt_by_k"] = per_group(per_k, groups)
    train, labels = windows["split"] == 0, windows["label"]
    features = {"apt_global": outputs[f"codes/apt/{run_seed}"].reshape(len(labels), -1)}
    if "local" in settings["variants"]:
        local = outputs[f"codes/local/{run_seed}"]
        features["local_mean_pooled"] = local.mean(axis=1)
        features["local_concatenated"] = local.reshape(len(labels), -1)
    out["probe"] = {
        name: probe(x[train], labels[train], x[held], labels[held], settings["probe"], run_seed)
        for name, x in features.items()
    }
    out["shrink"] = shrink_metrics(
        windows,
        outputs[f"shrunk/apt/{run_seed}"],
        outputs["shrunk_mask"],
        held,
        groups,
        run_seed,
    )
    return out


def _mean(items: list) -> np.ndarray:
    return np.mean(np.stack([np.asarray(i, dtype=float) for i in items]), axis=0)


def compute_metrics(windows: dict, outputs: dict, training: dict, settings: dict) -> dict:
    """Seed-averaged metrics: per-group values are averaged over training seeds before the claims resample
    the groups; per-seed summaries are kept for the spread over seeds."""
    held = windows["split"] > 0
    groups = windows["group"][held]
    seeds = training["seeds"]
    runs = [seed_metrics(windows, outputs, settings, s) for s in seeds]
    variants = settings["variants"]
    metrics: dict = {"checks": training["checks"], "bits_per_window": training["bits_per_window"], "seeds": seeds}
    metrics["parameters"] = training["parameters"]
    metrics["heldout_windows"], metrics["heldout_groups"] = int(held.sum()), int(np.unique(groups).size)
    metrics["rmsd_by_k"] = {v: _mean([r["rmsd_by_k"][v] for r in runs]) for v in variants}
    metrics["apt_rmsd_by_k_per_group"] = _mean([r["apt_by_k"] for r in runs])
    metrics["rmsd_at_k_per_group"] = {v: _mean([r["at_k"][v] for r in runs]) for v in variants}
    metrics["prefix_k"] = max(1, settings["model"]["tokens"] // 4)
    metrics["prefix_rmsd_per_group"] = {v: _mean([r["prefix"][v] for r in runs]) for v in runs[0]["prefix"]}
    metrics["mean_rmsd_at_k"] = {v: float(np.mean(r)) for v, r in metrics["rmsd_at_k_per_group"].items()}
    metrics["mean_rmsd_at_k_per_seed"] = {v: [float(np.mean(r["at_k"][v])) for r in runs] for v in variants}
    baseline = pca_baseline(windows, held, list(settings["model"]["levels"]), settings["model"]["tokens"])
    metrics["pca_baseline"] = {k: v for k, v in baseline.items() if k != "rmsd"} | {
        "mean_rmsd": float(np.mean(baseline["rmsd"]))
    }
    names = list(runs[0]["probe"])
    metrics["probe"] = {
        "accuracy": {n: float(np.mean([r["probe"][n]["accuracy"] for r in runs])) for n in names},
        "macro_f1": {n: float(np.mean([r["probe"][n]["macro_f1"] for r in runs])) for n in names},
        "accuracy_per_seed": {n: [r["probe"][n]["accuracy"] for r in runs] for n in names},
        "correct_per_group": {n: _mean([per_group(r["probe"][n]["correct"], groups) for r in runs]) for n in names},
        "class_counts_heldout": np.bincount(windows["label"][held], minlength=3),
    }
    shrink = [r["shrink"] for r in runs]
    metrics["shrink"] = {key: _mean([s[key] for s in shrink]) for key in shrink[0]} | {"factor": settings["shrink"]}
    return metrics


def main(job) -> None:
    settings = job.params.settings
    windows = read_npz(job.input.windows)
    outputs = read_npz(job.input.outputs)
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
