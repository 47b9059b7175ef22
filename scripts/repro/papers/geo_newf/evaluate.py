"""Stage: errors in and out of distribution, exactness properties of Geo-NeW, metrics.json and claims.json.

Per model and seed: mean relative L2 error on the in-distribution and out-of-distribution test meshes and
their ratio. For Geo-NeW on every test mesh: partition-of-unity error, Newton iterations and convergence,
coarse conservation recomputed from the Whitney edge fluxes (local: largest |sum_j F_ji - b_i| per coarse
cell; global: |sum_i (sum_j F_ji - b_i)| = net flux into the Dirichlet boundary minus the total load), and
the smallest eigenvalue of the learned flux Jacobian at random gradients. For both models: the FE residual
of the true constitutive law at their predicted fields (what a regression's prediction leaves unbalanced).

The trivial predictor of the learning checks is the best constant field of the training meshes (zero on the
Dirichlet nodes): c (1 - dirichlet) with c the least-squares constant of the training set's relative L2 errors;
its relative L2 error on every test mesh is written beside the models'.
"""

from __future__ import annotations

import pickle

import numpy as np
import torch

from repro.papers.geo_newf import fem
from repro.papers.geo_newf.claims import CLAIMS
from repro.papers.geo_newf.model import GeoNeW, edge_fluxes, make_batch, relative_l2
from repro.papers.geo_newf.store import by_family, read_split
from repro.papers.geo_newf.train import build
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, atomic_path, write_json

SPLITS = ("test_id", "test_ood")


def load_runs(path: str, name: str, cfg: dict) -> dict[int, torch.nn.Module]:
    """The trained models of every seed, read as tensors and plain data only (``weights_only``)."""
    try:
        saved = torch.load(path, weights_only=True)
        runs = saved["runs"]
    except (OSError, RuntimeError, KeyError, TypeError, pickle.UnpicklingError) as err:
        raise InputError(path, f"cannot read trained weights ({err})") from err
    models = {}
    for seed, run in runs.items():
        model = build(name, cfg)
        model.load_state_dict(run["state"])
        models[int(seed)] = model.eval()
    return models


def constant_field(samples: list[dict]) -> float:
    """The constant c minimising the summed squared relative L2 error of c (1 - dirichlet) over ``samples``."""
    num, den = 0.0, 0.0
    for idx in by_family(samples).values():
        batch = make_batch([samples[i] for i in idx])
        phi = 1.0 - batch.dirichlet
        norm = torch.einsum("bn,bnm,bm->b", batch.u, batch.mass, batch.u)
        num += float((torch.einsum("bn,bnm,bm->b", phi, batch.mass, batch.u) / norm).sum())
        den += float((torch.einsum("bn,bnm,bm->b", phi, batch.mass, phi) / norm).sum())
    return num / den


def constant_errors(samples: list[dict], c: float) -> list[float]:
    """Relative L2 error of the constant field c (1 - dirichlet) on every sample, in sample order."""
    errors = [0.0] * len(samples)
    for idx in by_family(samples).values():
        batch = make_batch([samples[i] for i in idx])
        for i, e in zip(idx, relative_l2(c * (1.0 - batch.dirichlet), batch.u, batch.mass).tolist()):
            errors[i] = e
    return errors


def true_residual(u: np.ndarray, sample: dict, beta: float) -> tuple[float, float]:
    """(largest |r_a| over free nodes, |sum of r_a over free nodes|), both relative to the load."""
    r = fem.residual(u, sample["nodes"], sample["cells"], sample["load"], beta)[~sample["dirichlet"]]
    scale = float(np.sum(np.abs(sample["load"])))
    return float(np.max(np.abs(r)) / np.max(np.abs(sample["load"]))), float(abs(np.sum(r)) / scale)


def geonew_exactness(model: GeoNeW, batch, sol, probes: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    with torch.no_grad():
        fluxes = edge_fluxes(model, batch, sol)  # (B, K + 1, K + 1)
        whitney = fluxes.sum(1)[:, 1:] - sol.load  # R_i = sum_j F_ji - b_i for the free coarse cells
        scale = sol.load.abs().amax(-1)
        _, latent = model.weights(batch)
        p = model.flux.params(latent)
        g = torch.as_tensor(rng.normal(scale=3.0, size=(len(latent), probes, 2)))
        eig = torch.linalg.eigvalsh(model.flux.jacobian(g, p)).amin((-1, -2))
    return {
        "pou_error": (sol.weights.sum(1) - 1.0).abs().amax(-1).numpy(),
        "local_residual": (whitney.abs().amax(-1) / scale).numpy(),
        "global_balance": (whitney.sum(-1).abs() / sol.load.abs().sum(-1)).numpy(),
        "whitney_vs_galerkin": ((whitney - sol.residual).abs().amax(-1) / scale).numpy(),
        "iterations": sol.iterations.numpy(),
        "converged": sol.converged.numpy(),
        "min_jacobian_eigenvalue": eig.numpy(),
    }


def evaluate_model(name, model, splits, settings, rng) -> tuple[dict, dict]:
    """Per split: errors, true-law residuals and (Geo-NeW) exactness per mesh; predictions per split."""
    out, predictions = {}, {}
    for split, samples in splits.items():
        rows: dict[str, list] = {}
        pred = [None] * len(samples)
        errors = [float("nan")] * len(samples)
        for idx in by_family(samples).values():
            batch = make_batch([samples[i] for i in idx])
            with torch.no_grad():
                result = model(batch)
            u = result.u if name == "geonew" else result
            for i, e in zip(idx, relative_l2(u, batch.u, batch.mass).tolist()):
                errors[i] = e
            if name == "geonew":
                for key, value in geonew_exactness(model, batch, result, settings["jacobian_probes"], rng).items():
                    rows.setdefault(key, []).extend(value.tolist())
            for j, i in enumerate(idx):
                pred[i] = u[j].numpy()
                local, glob = true_residual(pred[i], samples[i], settings["beta"])
                rows.setdefault("true_law_local_residual", []).append(local)
                rows.setdefault("true_law_global_imbalance", []).append(glob)
        out[split] = {"error": errors} | rows
        predictions[split] = pred
    return out, predictions


def summarise(per_seed: dict, trivial: dict | None = None) -> dict:
    metrics: dict = {"models": {}, "trivial": trivial or {}}
    for name, seeds in per_seed.items():
        id_err = [float(np.mean(s["test_id"]["error"])) for s in seeds.values()]
        ood_err = [float(np.mean(s["test_ood"]["error"])) for s in seeds.values()]
        entry = {
            "seeds": list(seeds),
            "id_error": id_err,
            "ood_error": ood_err,
            "ood_id_ratio": [o / i for o, i in zip(ood_err, id_err)],
            "id_error_per_mesh": [s["test_id"]["error"] for s in seeds.values()],
            "true_law_global_imbalance_median": float(
                np.median([v for s in seeds.values() for sp in SPLITS for v in s[sp]["true_law_global_imbalance"]])
            ),
            "per_seed": seeds,
        }
        if name == "geonew":

            def every(key):
                return np.array([v for s in seeds.values() for sp in SPLITS for v in s[sp][key]], dtype=float)

            entry |= {
                "pou_max_error": float(np.max(every("pou_error"))),
                "local_residual_max": float(np.max(every("local_residual"))),
                "global_balance_max": float(np.max(every("global_balance"))),
                "whitney_vs_galerkin_max": float(np.max(every("whitney_vs_galerkin"))),
                "newton_converged_fraction": float(np.mean(every("converged"))),
                "newton_iterations_max": float(np.max(every("iterations"))),
                "min_jacobian_eigenvalue": float(np.min(every("min_jacobian_eigenvalue"))),
            }
        metrics["models"][name] = entry
    return metrics


def main(job) -> None:
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(job.threads)
    settings = job.params.settings
    splits = {split: read_split(job.input.meshes, split) for split in SPLITS}
    rng = np.random.default_rng(int(job.params.seed))
    per_seed: dict = {}
    figure_data = {}
    for name, path in (("geonew", job.input.geonew), ("regression", job.input.regression)):
        per_seed[name] = {}
        for seed, model in load_runs(path, name, settings["model"][name]).items():
            per_seed[name][seed], predictions = evaluate_model(name, model, splits, settings, rng)
            if seed == min(settings["seeds"]):
                for split, preds in predictions.items():
                    figure_data |= {f"{name}/{split}/{i}": u for i, u in enumerate(preds)}
                if name == "geonew":
                    ood = splits["test_ood"]
                    show = by_family(ood)
                    for family, idx in show.items():
                        batch = make_batch([ood[idx[0]]])
                        with torch.no_grad():
                            figure_data[f"pou/{family}"] = model.weights(batch)[0][0].numpy()
                            figure_data[f"pou_index/{family}"] = np.array(idx[0])
    train = read_split(job.input.meshes, "train")
    c = constant_field(train)
    trivial = {"constant": c, "id_error_per_mesh": constant_errors(splits["test_id"], c)}
    metrics = summarise(per_seed, trivial)
    write_json(job.output.metrics, metrics)
    with atomic_path(job.output.predictions) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **figure_data)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "geo-newf", claims)
