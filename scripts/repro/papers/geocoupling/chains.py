"""The real-chains variant: short backbone windows with their sequences from the structures source.

Structure tokens are the window's CA geometry: token j is the codebook entry (k-means on
(theta, cos tau, sin tau), fitted on training windows) of the CA virtual angle theta at CA_{j+2} and the
CA virtual dihedral tau of CA_j..CA_{j+3}; the two together place CA_{j+3}, so tokens rebuild a CA trace.
Scores of generated pairs (no exact ground state here):
- consistency: mean pointwise mutual information, in nats per token, between each structure token and the
  four residues it spans, under an independent sequence -> structure classifier (multinomial logistic
  regression fitted on training windows) against the tokens' marginal frequencies;
- validity: the rebuilt CA trace (3.8 A virtual bonds) has no pair |i - j| >= 3 closer than the clash distance.
"""

from __future__ import annotations

import numpy as np

from repro.metrics.protein_geometry import dihedral, place_atom
from repro.papers.geocoupling.metrics import mean_pairwise_hamming

AMINO = "ACDEFGHIKLMNPQRSTVWY"
CA_BOND = 3.8
SPAN = 4  # residues a structure token spans


def ca_angles(ca: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """theta (L,) virtual bond angle at each CA (NaN at the ends) and tau (L - 3,) virtual dihedrals."""
    theta = np.full(len(ca), np.nan)
    u, v = ca[:-2] - ca[1:-1], ca[2:] - ca[1:-1]
    cos = np.sum(u * v, -1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    theta[1:-1] = np.arccos(np.clip(cos, -1.0, 1.0))
    return theta, dihedral(ca[:-3], ca[1:-2], ca[2:-1], ca[3:])


def windows(chains, width: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """(sequence indices (n, width), features (n, width - 3, 2) of (theta, tau)) of every standard window."""
    seqs, feats = [], []
    for chain in chains:
        ca = np.asarray(chain.backbone, dtype=np.float64)[:, 1]
        theta, tau = ca_angles(ca)
        for start in range(0, len(ca) - width + 1, stride):
            residues = chain.sequence[start : start + width]
            if any(r not in AMINO for r in residues):
                continue
            j = np.arange(width - 3)
            f = np.stack([theta[start + j + 2], tau[start + j]], -1)
            if np.all(np.isfinite(f)):
                seqs.append([AMINO.index(r) for r in residues])
                feats.append(f)
    return np.array(seqs, dtype=np.int8).reshape(-1, width), np.array(feats).reshape(-1, width - 3, 2)


def embed(features: np.ndarray) -> np.ndarray:
    """(theta, tau) -> (theta, cos tau, sin tau): the k-means space (tau is periodic)."""
    return np.stack([features[..., 0], np.cos(features[..., 1]), np.sin(features[..., 1])], -1)


def span_features(seq: np.ndarray) -> np.ndarray:
    """(n, W) residue indices -> (n, W - 3, 4 * 20) one-hot of the four residues each structure token spans."""
    onehot = np.eye(len(AMINO))[seq]
    return np.concatenate([onehot[:, k : seq.shape[1] - SPAN + 1 + k] for k in range(SPAN)], -1)


def rebuild(tokens: np.ndarray, centroids: np.ndarray, first_angle: float) -> np.ndarray:
    """CA traces (n, W, 3) from structure tokens (n, W - 3) and the codebook's (theta, tau) centroids."""
    n, k = tokens.shape
    ca = np.zeros((n, k + 3, 3))
    ca[:, 1, 0] = CA_BOND
    ca[:, 2] = ca[:, 1] + CA_BOND * np.array([-np.cos(first_angle), np.sin(first_angle), 0.0])
    for j in range(k):
        theta, tau = centroids[tokens[:, j], 0], centroids[tokens[:, j], 1]
        ca[:, j + 3] = [
            place_atom(a, b, c, CA_BOND, t, d)
            for a, b, c, t, d in zip(ca[:, j], ca[:, j + 1], ca[:, j + 2], theta, tau)
        ]
    return ca


class ChainScorer:
    """Scores generated windows with the classifier, codebook and training pairs stored by the data stage."""

    def __init__(self, data: dict[str, np.ndarray]):
        self.coef, self.intercept = data["classifier_coef"], data["classifier_intercept"]
        self.log_marginal = data["log_marginal"]
        self.centroids, self.first_angle = data["centroids"], float(data["first_angle"])
        self.clash = float(data["clash_distance"])
        self.train_keys = set(map(bytes, np.concatenate([data["train_seq"], data["train_struct"]], 1).astype(np.int8)))

    def log_probs(self, seq: np.ndarray) -> np.ndarray:
        logits = span_features(seq) @ self.coef.T + self.intercept
        logits -= logits.max(-1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(-1, keepdims=True))

    def __call__(self, seq: np.ndarray, struct: np.ndarray) -> dict[str, float]:
        seq, struct = np.asarray(seq, dtype=np.int64), np.asarray(struct, dtype=np.int64)
        lp = np.take_along_axis(self.log_probs(seq), struct[..., None], -1)[..., 0]
        pmi = lp - self.log_marginal[struct]
        ca = rebuild(struct, self.centroids, self.first_angle)
        dist = np.linalg.norm(ca[:, :, None] - ca[:, None], axis=-1)
        i, j = np.triu_indices(ca.shape[1], k=3)
        valid = dist[:, i, j].min(-1) >= self.clash
        keys = [bytes(k) for k in np.concatenate([seq, struct], 1).astype(np.int8)]
        onehot = np.eye(len(AMINO))[seq].reshape(len(seq), -1)
        return {
            "validity": float(np.mean(valid)),
            "consistency": float(np.mean(pmi)),
            "unique_pairs": float(len(set(k for k, v in zip(keys, valid) if v)) / len(seq)),
            "unique_sequences": float(len({bytes(s) for s in seq.astype(np.int8)}) / len(seq)),
            "unique_conformations": float(len({bytes(s) for s in struct.astype(np.int8)}) / len(seq)),
            "sequence_hamming": mean_pairwise_hamming(onehot) * len(AMINO) / 2,
            "novelty": float(np.mean([v and k not in self.train_keys for k, v in zip(keys, valid)])),
        }


def build(chains, cfg: dict, seed: int) -> dict[str, np.ndarray]:
    """The arrays the data stage stores for the chains variant (training/validation windows, codebook, scorer)."""
    from sklearn.cluster import KMeans
    from sklearn.linear_model import LogisticRegression

    width, stride, k = int(cfg["window"]), int(cfg["stride"]), int(cfg["codebook"])
    parts = {s: windows([c for c in chains if c.split == s], width, stride) for s in ("train", "val")}
    if len(parts["train"][0]) < k or len(parts["val"][0]) == 0:
        raise ValueError(
            f"too few windows of {width} standard residues (train {len(parts['train'][0])}, val "
            f"{len(parts['val'][0])}) for a codebook of {k}"
        )
    kmeans = KMeans(k, n_init=4, random_state=seed).fit(embed(parts["train"][1]).reshape(-1, 3))
    centre = kmeans.cluster_centers_
    centroids = np.stack([centre[:, 0], np.arctan2(centre[:, 2], centre[:, 1])], -1)
    out = {}
    for split, (seq, feats) in parts.items():
        out[f"{split}_seq"] = seq
        out[f"{split}_struct"] = kmeans.predict(embed(feats).reshape(-1, 3)).reshape(len(seq), -1).astype(np.int8)
    x = span_features(out["train_seq"]).reshape(-1, SPAN * len(AMINO))
    y = out["train_struct"].reshape(-1)
    clf = LogisticRegression(C=float(cfg["classifier_c"]), max_iter=500).fit(x, y)
    coef = np.zeros((k, x.shape[1]))
    intercept = np.full(k, -30.0)  # a codebook entry never seen in training gets (almost) no probability
    coef[clf.classes_], intercept[clf.classes_] = clf.coef_, clf.intercept_
    counts = np.bincount(y, minlength=k) + 1.0
    return out | {
        "centroids": centroids,
        "first_angle": np.float64(np.nanmedian(parts["train"][1][..., 0])),
        "classifier_coef": coef,
        "classifier_intercept": intercept,
        "log_marginal": np.log(counts / counts.sum()),
        "clash_distance": np.float64(cfg["clash_distance"]),
        "seq_vocab": np.int64(len(AMINO)),
        "struct_vocab": np.int64(k),
    }
