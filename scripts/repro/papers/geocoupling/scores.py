"""Scores of generated (sequence, backbone) windows by measures that do not come from the generator.

- validity, against the real training windows' distributions: every bond length and bond angle lies within
  the real central range of its type (N-CA, CA-C, C-N; N-CA-C, CA-C-N, C-N-CA; quantiles ``geometry_quantile``
  and 1 - that; met by construction when the generator builds with ideal geometry), every peptide bond's
  omega is no further from planar (trans or cis) than the real (1 - geometry_quantile) quantile, every interior
  residue's (phi, psi) falls in the real Ramachandran region (the 10-degree bins holding ``rama_mass`` of the
  real residues' density, smoothed by one bin, densest first), and no two atoms four or more bonds apart come
  closer than the real clash
  distance (the ``clash_quantile`` quantile of each real window's closest such pair);
- realism: the nearest-real-fragment RMSD (Å, all backbone atoms, Kabsch superposition) to the real windows of
  a held-out split; the nearest is searched among the ``prefilter`` real windows closest in CA
  distance-matrix RMS (a superposition-free distance), which keeps the cost linear in the reference count;
- consistency: the generated backbone's DSSP (mdtraj, the project's DSSP) against an independent
  sequence-to-secondary-structure predictor (multinomial logistic regression on the residues around each
  position, fitted on the real training windows with their own window DSSP as labels): the pointwise mutual
  information, in nats per residue, log p(DSSP class of the generated backbone | generated sequence) - log p(class)
  (p(class): the training windows' class frequencies), so that agreeing with the prior alone scores 0;
- diversity: mean pairwise CA distance-matrix RMS (Å) between generated backbones and mean pairwise Hamming
  distance (fraction of positions) between generated sequences.
"""

from __future__ import annotations

import numpy as np

from repro.data.structures.dssp import dssp_of_backbones
from repro.papers.geocoupling.windows import AMINO, internal

CLASSES = "HEC"
CONTEXT = 4  # residues on each side the predictor sees
MIN_BOND_GAP = 4  # atom pairs at least this many bonds apart can clash


def predictor_features(seq: np.ndarray) -> np.ndarray:
    """(n * W, (2K + 1) * 21 + W): one-hot residues at offsets -K..K (21st symbol: outside the window) and the
    position in the window, per residue."""
    seq = np.asarray(seq, dtype=np.int64)
    n, width = seq.shape
    padded = np.full((n, width + 2 * CONTEXT), len(AMINO))
    padded[:, CONTEXT : CONTEXT + width] = seq
    onehot = np.eye(len(AMINO) + 1)[padded]
    around = np.concatenate([onehot[:, k : k + width] for k in range(2 * CONTEXT + 1)], axis=-1)
    position = np.broadcast_to(np.eye(width), (n, width, width))
    return np.concatenate([around, position], axis=-1).reshape(n * width, -1)


def dssp_classes(backbones: np.ndarray) -> np.ndarray:
    """(n, W) class indices into ``CLASSES`` of the backbones' DSSP."""
    codes = dssp_of_backbones(backbones)
    return sum(k * (codes == c) for k, c in enumerate(CLASSES)).astype(np.int64)


def fit_predictor(seq: np.ndarray, labels: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """(coef (3, F), intercept (3,)) of the sequence -> secondary-structure classifier; a class never seen in
    training gets (almost) no probability."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    x, y = sparse.csr_matrix(predictor_features(seq)), np.asarray(labels).reshape(-1)  # one-hot: sparse is fast
    clf = LogisticRegression(C=c, max_iter=1000).fit(x, y)
    coef, intercept = np.zeros((len(CLASSES), x.shape[1])), np.full(len(CLASSES), -30.0)
    if len(clf.classes_) == 2:  # sklearn stores one row for a binary problem: the second class's log-odds
        coef[clf.classes_[1]], intercept[clf.classes_[1]] = clf.coef_[0], clf.intercept_[0]
        intercept[clf.classes_[0]] = 0.0
    else:
        coef[clf.classes_], intercept[clf.classes_] = clf.coef_, clf.intercept_
    return coef, intercept


RAMA_BINS = 36
PRECISION = 1e-4  # Å or rad added on both sides of a real range: coordinates are stored as float32


def phi_psi(torsions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(phi, psi) of the interior residues (n, W - 2) from the torsions (psi0, omega0, phi1, psi1, ...)."""
    return torsions[:, 2:-1:3], torsions[:, 3::3]


def rama_bin(phi: np.ndarray, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    edge = lambda a: np.clip(((a + np.pi) / (2 * np.pi) * RAMA_BINS).astype(int), 0, RAMA_BINS - 1)  # noqa: E731
    return edge(phi), edge(psi)


def planarity(torsions: np.ndarray) -> np.ndarray:
    """(n, W - 1) angular distance (rad) of each omega from the nearest planar value (trans pi or cis 0)."""
    return np.abs(np.angle(np.exp(2j * torsions[:, 1::3]))) / 2


def geometry_reference(backbones: np.ndarray, quantile: float, clash_quantile: float, rama_mass: float) -> dict:
    """Per-type ranges of bond lengths (3, 2) and angles (3, 2), the largest omega deviation from trans, the
    allowed Ramachandran bins (36, 36) and the clash distance, of real windows."""
    lengths, angles, torsions = internal(backbones)
    from scipy.ndimage import gaussian_filter

    counts = np.zeros((RAMA_BINS, RAMA_BINS))
    np.add.at(counts, rama_bin(*phi_psi(torsions)), 1.0)
    counts = gaussian_filter(counts, 1.0, mode="wrap")  # the torus is periodic in phi and psi
    order = np.argsort(counts.ravel())[::-1]
    kept = np.cumsum(counts.ravel()[order]) <= rama_mass * counts.sum()
    kept[: int(np.argmin(kept)) + 1] = True  # the bin that crosses the mass is kept too
    allowed = np.zeros(counts.size, dtype=bool)
    allowed[order[kept]] = True
    return {
        "bond_range": np.array([np.quantile(lengths[:, k::3], [quantile, 1 - quantile]) for k in range(3)])
        + [-PRECISION, PRECISION],
        "angle_range": np.array([np.quantile(angles[:, k::3], [quantile, 1 - quantile]) for k in range(3)])
        + [-PRECISION, PRECISION],
        "omega_deviation": np.float64(np.quantile(planarity(torsions), 1 - quantile)),
        "rama_allowed": allowed.reshape(RAMA_BINS, RAMA_BINS),
        "clash_distance": np.float64(np.quantile(closest_nonbonded(backbones), clash_quantile)),
    }


def closest_nonbonded(backbones: np.ndarray) -> np.ndarray:
    """(n,) distance (Å) of each backbone's closest pair of atoms at least MIN_BOND_GAP bonds apart."""
    atoms = np.asarray(backbones, dtype=np.float64).reshape(len(backbones), -1, 3)
    i, j = np.triu_indices(atoms.shape[1], k=MIN_BOND_GAP)
    return np.linalg.norm(atoms[:, i] - atoms[:, j], axis=-1).min(axis=1)


def ca_distances(backbones: np.ndarray) -> np.ndarray:
    """(n, P) CA-CA distances of every residue pair (upper triangle)."""
    ca = np.asarray(backbones, dtype=np.float64)[:, :, 1]
    i, j = np.triu_indices(ca.shape[1], k=1)
    return np.linalg.norm(ca[:, i] - ca[:, j], axis=-1)


def nearest_rmsd(generated: np.ndarray, reference: np.ndarray, prefilter: int) -> np.ndarray:
    """(n,) backbone RMSD (Å) after superposition (Kabsch) to the nearest reference window among the
    ``prefilter`` nearest in CA distance-matrix RMS."""
    dg, dr = ca_distances(generated), ca_distances(reference)
    drms = (dg**2).sum(1)[:, None] + (dr**2).sum(1)[None] - 2 * dg @ dr.T
    k = min(prefilter, len(reference))
    candidates = np.argpartition(drms, k - 1, axis=1)[:, :k]  # (n, k)
    gen = np.asarray(generated, np.float64).reshape(len(generated), -1, 3)
    ref = np.asarray(reference, np.float64).reshape(len(reference), -1, 3)
    gen = gen - gen.mean(1, keepdims=True)
    ref = ref - ref.mean(1, keepdims=True)
    pairs = ref[candidates]  # (n, k, A, 3)
    h = np.einsum("gai,gkaj->gkij", gen, pairs)
    u, sigma, vt = np.linalg.svd(h)
    flip = np.sign(np.linalg.det(u) * np.linalg.det(vt))
    sigma[..., 2] *= flip
    squared = (gen**2).sum((1, 2))[:, None] + (pairs**2).sum((2, 3)) - 2 * sigma.sum(-1)
    return np.sqrt(np.maximum(squared, 0.0) / gen.shape[1]).min(axis=1)


def mean_pairwise(values: np.ndarray, metric: str) -> float:
    """Mean over distinct pairs of rows: 'hamming' (fraction of positions) or 'euclid_rms' (RMS over columns)."""
    n = len(values)
    if n < 2:
        return float("nan")
    x = np.asarray(values, dtype=np.float64)
    if metric == "hamming":
        onehot = np.eye(int(x.max()) + 1)[x.astype(np.int64)].reshape(n, -1)
        same = onehot @ onehot.T
        dist = 1.0 - same / x.shape[1]
    else:
        sq = (x**2).sum(1)
        dist = np.sqrt(np.maximum(sq[:, None] + sq[None] - 2 * x @ x.T, 0.0) / x.shape[1])
    return float(dist[np.triu_indices(n, k=1)].mean())


class Scorer:
    """Per-sample scores of generated windows against what the data stage stored."""

    def __init__(self, data: dict[str, np.ndarray], prefilter: int):
        self.coef, self.intercept = data["predictor_coef"], data["predictor_intercept"]
        self.bond_range, self.angle_range = data["bond_range"], data["angle_range"]
        self.omega, self.rama = float(data["omega_deviation"]), data["rama_allowed"]
        self.clash = float(data["clash_distance"])
        counts = np.asarray(data["train_class_counts"], np.float64) + 1.0
        self.log_prior = np.log(counts / counts.sum())
        self.references = {s: data[f"{s}_backbone"] for s in ("val", "test") if f"{s}_backbone" in data}
        self.prefilter = prefilter

    def class_probabilities(self, seq: np.ndarray) -> np.ndarray:
        """(n, W, 3) predictor probabilities of H, E, C."""
        logits = predictor_features(seq) @ self.coef.T + self.intercept
        logits -= logits.max(-1, keepdims=True)
        p = np.exp(logits)
        return (p / p.sum(-1, keepdims=True)).reshape(*np.shape(seq), len(CLASSES))

    def consistency(self, seq: np.ndarray, classes: np.ndarray) -> np.ndarray:
        """(n,) mean over residues of log p(backbone's DSSP class | sequence) - log p(class), nats."""
        p = self.class_probabilities(seq)
        chosen = np.take_along_axis(p, np.asarray(classes)[..., None], -1)[..., 0]
        return (np.log(np.maximum(chosen, 1e-300)) - self.log_prior[classes]).mean(-1)

    def validity(self, backbones: np.ndarray) -> np.ndarray:
        lengths, angles, torsions = internal(backbones)
        ok = np.ones(len(backbones), dtype=bool)
        for k in range(3):
            ok &= np.all((lengths[:, k::3] >= self.bond_range[k, 0]) & (lengths[:, k::3] <= self.bond_range[k, 1]), 1)
            ok &= np.all((angles[:, k::3] >= self.angle_range[k, 0]) & (angles[:, k::3] <= self.angle_range[k, 1]), 1)
        ok &= np.all(planarity(torsions) <= self.omega, 1)
        ok &= np.all(self.rama[rama_bin(*phi_psi(torsions))], 1)
        return ok & (closest_nonbonded(backbones) >= self.clash)

    def per_sample(self, seq: np.ndarray, backbones: np.ndarray, reference: str) -> dict[str, np.ndarray]:
        """Per generated window: validity, nearest-real RMSD, DSSP classes, consistency and its value with the
        sequences re-paired at random among the samples (the independent-sampling baseline)."""
        classes = dssp_classes(backbones)
        shuffled = seq[np.random.default_rng(0).permutation(len(seq))]
        return {
            "valid": self.validity(backbones),
            "nearest_rmsd": nearest_rmsd(backbones, self.references[reference], self.prefilter),
            "classes": classes,
            "consistency": self.consistency(seq, classes),
            "consistency_shuffled": self.consistency(shuffled, classes),
        }

    def summary(
        self, seq: np.ndarray, backbones: np.ndarray, reference: str, detail: dict | None = None
    ) -> dict[str, float]:
        """Means of :meth:`per_sample` (``detail``, when already computed) and the diversities."""
        s = self.per_sample(seq, backbones, reference) if detail is None else detail
        return {
            "validity": float(np.mean(s["valid"])),
            "consistency": float(np.mean(s["consistency"])),
            "consistency_shuffled": float(np.mean(s["consistency_shuffled"])),
            "quality": float(np.mean(s["valid"] * s["consistency"])),
            "nearest_rmsd": float(np.mean(s["nearest_rmsd"])),
            "helix_fraction": float(np.mean(s["classes"] == CLASSES.index("H"))),
            "strand_fraction": float(np.mean(s["classes"] == CLASSES.index("E"))),
            "structure_diversity": mean_pairwise(ca_distances(backbones), "euclid_rms"),
            "sequence_diversity": mean_pairwise(seq, "hamming"),
        }
