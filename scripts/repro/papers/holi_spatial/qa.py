"""Template captions and two-view spatial QA (the paper's `qa_generation/templates_*` families), generation from
ground truth and answering from any set of 3D annotations.

Generation reads the simulator's objects, poses and segmentation (an object must be visible in the frame a
question is about) and keeps only objects whose class occurs once in the scene (the paper's ambiguity filter).
Answering is a separate path that looks objects up by class in an annotation set (highest-confidence instance),
so answering with the ground-truth annotations must reproduce every generated answer.
"""

from __future__ import annotations

import numpy as np

from repro.papers.holi_spatial.geometry import project

COLOURS = {
    "white": (235, 235, 235),
    "grey": (128, 128, 128),
    "black": (30, 30, 30),
    "red": (200, 40, 40),
    "yellow": (220, 200, 40),
    "green": (50, 160, 60),
    "blue": (50, 80, 200),
    "brown": (140, 90, 50),
    "orange": (230, 130, 40),
}
NUMERIC = ("camera_translation", "camera_rotation", "object_distance", "object_height")


def colour_name(rgb: np.ndarray) -> str:
    names = list(COLOURS)
    ref = np.array([COLOURS[n] for n in names], dtype=float)
    return names[int(np.argmin(np.linalg.norm(ref - np.asarray(rgb, dtype=float), axis=1)))]


def caption(cls: str, lo: np.ndarray, hi: np.ndarray, rgb: np.ndarray, table_top: float) -> str:
    """One instance caption: colour, class, support surface and height."""
    support = "table" if abs(lo[2] - table_top) < 0.05 and cls != "table" else "floor"
    height = round(float(hi[2] - lo[2]) * 100)
    return f"a {colour_name(rgb)} {cls} on the {support}, about {height} cm tall"


def _centre(ann: dict, cls: str) -> np.ndarray | None:
    idx = [i for i, c in enumerate(ann["cls"]) if c == cls]
    if not idx:
        return None
    best = max(idx, key=lambda i: ann["score"][i])
    return (np.asarray(ann["lo"][best]) + np.asarray(ann["hi"][best])) / 2


def _height(ann: dict, cls: str) -> float | None:
    idx = [i for i, c in enumerate(ann["cls"]) if c == cls]
    if not idx:
        return None
    best = max(idx, key=lambda i: ann["score"][i])
    return float(ann["hi"][best][2] - ann["lo"][best][2])


def rotation_deg(a: np.ndarray, b: np.ndarray) -> float:
    r = a[:3, :3].T @ b[:3, :3]
    return float(np.degrees(np.arccos(np.clip((np.trace(r) - 1) / 2, -1, 1))))


def answer(q: dict, ann: dict, poses: np.ndarray, K: np.ndarray) -> str | float | None:
    """The answer to question ``q`` from annotations ``ann`` (column dict) and the camera poses; None when an
    object the question names is missing from the annotations."""
    t, fa, fb = q["template"], q["frame_a"], q["frame_b"]
    if t == "camera_translation":
        return float(np.linalg.norm(poses[fb][:3, 3] - poses[fa][:3, 3]))
    if t == "camera_rotation":
        return rotation_deg(poses[fa], poses[fb])
    if t == "object_height":
        return _height(ann, q["a"])
    ca, cb = _centre(ann, q["a"]), _centre(ann, q["b"])
    if ca is None or cb is None:
        return None
    if t == "object_distance":
        return float(np.linalg.norm(ca - cb))
    if t == "relative_position":
        u, _, _ = project(np.stack([ca, cb]), K, poses[fa])
        return "left" if u[0] < u[1] else "right"
    if t == "closer_to_camera":
        _, _, z = project(np.stack([ca, cb]), K, poses[fb])
        return q["a"] if z[0] < z[1] else q["b"]
    raise ValueError(f"unknown QA template {t!r}")


QUESTIONS = {
    "camera_translation": "How far did the camera move between frame {fa} and frame {fb}, in metres?",
    "camera_rotation": "By how many degrees did the camera turn between frame {fa} and frame {fb}?",
    "object_height": "How tall is the {a}, in metres?",
    "object_distance": "Seen in frames {fa} and {fb}: how far apart are the {a} and the {b}, in metres?",
    "relative_position": "In frame {fa}, is the {a} to the left or to the right of the {b}?",
    "closer_to_camera": "In frame {fb}, which is closer to the camera: the {a} or the {b}?",
}


def generate(scene, rng: np.random.Generator, per_template: int, min_pixels: int) -> list[dict]:
    """Two-view QA pairs from the simulator ground truth (answers computed directly from it)."""
    counts = {c: scene.obj_class.count(c) for c in scene.obj_class}
    unique = [k for k, c in enumerate(scene.obj_class) if counts[c] == 1]
    visible = np.array(
        [[np.sum(seg == scene.obj_id[k]) >= min_pixels for k in range(len(scene.obj_id))] for seg in scene.instance]
    )
    centre = (scene.box_lo + scene.box_hi) / 2
    frames = len(scene.instance)
    out = []
    for template in QUESTIONS:
        for _ in range(per_template):
            fa, fb = (int(x) for x in rng.choice(frames, 2, replace=False))
            both = [k for k in unique if visible[fa, k] and visible[fb, k]]
            if template not in ("camera_translation", "camera_rotation") and len(both) < 2:
                continue
            a, b = (int(x) for x in rng.choice(both, 2, replace=False)) if len(both) >= 2 else (0, 0)
            pa, pb = scene.cam2world[fa], scene.cam2world[fb]
            if template == "camera_translation":
                ans: str | float = float(np.linalg.norm(pb[:3, 3] - pa[:3, 3]))
            elif template == "camera_rotation":
                ans = rotation_deg(pa, pb)
            elif template == "object_height":
                ans = float(scene.box_hi[a, 2] - scene.box_lo[a, 2])
            elif template == "object_distance":
                ans = float(np.linalg.norm(centre[a] - centre[b]))
            elif template == "relative_position":
                cam = np.linalg.inv(pa)
                xa, xb = (cam[:3, :3] @ centre[k] + cam[:3, 3] for k in (a, b))
                ans = "left" if xa[0] / xa[2] < xb[0] / xb[2] else "right"
            else:
                cam = np.linalg.inv(pb)
                za, zb = ((cam[:3, :3] @ centre[k] + cam[:3, 3])[2] for k in (a, b))
                ans = scene.obj_class[a] if za < zb else scene.obj_class[b]
            names = {"a": scene.obj_class[a], "b": scene.obj_class[b]}
            out.append(
                {
                    "template": template,
                    "frame_a": fa,
                    "frame_b": fb,
                    **names,
                    "answer": ans,
                    "question": QUESTIONS[template].format(fa=fa, fb=fb, **names),
                }
            )
    return out


def correct(q: dict, predicted: str | float | None, tolerance: float) -> bool:
    """Exact match for choices; relative error within ``tolerance`` for numbers."""
    if predicted is None:
        return False
    if q["template"] in NUMERIC:
        return bool(abs(float(predicted) - q["answer"]) <= tolerance * abs(q["answer"]) + 1e-9)
    return predicted == q["answer"]


def load_questions(path) -> list[dict]:
    """The QA pairs written by the data stage; a pair missing a field raises an InputError naming the file."""
    import json

    from repro.workflow.io import InputError

    try:
        pairs = json.loads(open(path).read())
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a JSON list of QA pairs ({err})") from err
    need = {"scene", "template", "frame_a", "frame_b", "a", "b", "answer", "question"}
    bad = [i for i, q in enumerate(pairs) if not need <= set(q)]
    if not isinstance(pairs, list) or bad:
        raise InputError(path, f"QA pairs {bad[:5]} lack fields of {sorted(need)}")
    return pairs
