"""Holi-Spatial's simulator, geometry, lifting, verifier, QA and metrics against independent computations."""

from collections import Counter

import numpy as np
import pytest

from repro.papers.holi_spatial import boxes, geometry, lifting, qa
from repro.papers.holi_spatial.perception import Mask
from repro.papers.holi_spatial.scene import ASSETS, look_at, render_scene
from repro.papers.holi_spatial.store import CLASSES, read_scene, write_scene

RENDER = dict(
    frames=4,
    width=64,
    height=48,
    fov_deg=60,
    near=0.05,
    far=8.0,
    radius=1.5,
    camera_height=1.2,
    arc_deg=180,
    on_table=[1, 2],
    on_floor=[1, 2],
    room_half_width=[1.0, 1.0],
    floor_tile=0.5,
    floor_half_width=3.0,
    min_gt_pixels=5,
)


@pytest.fixture(scope="module")
def scene():
    return render_scene(3, RENDER)


def test_classes_are_the_assets_plus_table():
    assert set(CLASSES) == {"table", *ASSETS}


def test_rendering_is_repeatable_and_floor_backprojects_to_z0(scene):
    again = render_scene(3, RENDER)
    assert np.array_equal(scene.rgb, again.rgb) and np.array_equal(scene.depth, again.depth)
    floor = (scene.instance[0] < 0) & (scene.depth[0] < 5)
    pts = geometry.backproject(scene.depth[0], scene.K, scene.cam2world[0], floor)
    distance = np.linalg.norm(pts - scene.cam2world[0][:3, 3], axis=1)
    # the floor is z = 0; TinyRenderer's screen-space depth interpolation is off by about 1% of the distance
    assert len(pts) > 100 and np.percentile(np.abs(pts[:, 2]) / distance, 95) < 0.012


def test_projection_inverts_backprojection(scene):
    pts = geometry.backproject(scene.depth[1], scene.K, scene.cam2world[1], scene.depth[1] < 5)
    u, v, z = geometry.project(pts, scene.K, scene.cam2world[1])
    h, w = scene.depth.shape[1:]
    assert np.allclose(scene.depth[1][v.astype(int), u.astype(int)], z, atol=1e-4)
    assert np.all((u >= 0) & (u < w) & (v >= 0) & (v < h))


def test_store_round_trip_and_bad_file(scene, tmp_path):
    write_scene(tmp_path / "scene_000.npz", scene)
    back = read_scene(tmp_path / "scene_000.npz")
    assert np.array_equal(back.instance, scene.instance) and back.obj_class == scene.obj_class
    np.savez(tmp_path / "bad.npz", rgb=scene.rgb)
    with pytest.raises(Exception, match="missing arrays"):
        read_scene(tmp_path / "bad.npz")


def test_iou_matches_hand_computation():
    iou = boxes.iou_matrix(
        np.array([[0, 0, 0.0]]), np.array([[2, 2, 2.0]]), np.array([[1, 1, 1.0]]), np.array([[3, 3, 3.0]])
    )
    assert iou[0, 0] == pytest.approx(1 / 15)


def test_average_precision_hand_example():
    # ranked TP, FP, TP with 3 ground-truth boxes: precision envelope 1 at recall 1/3, 2/3 at recall 2/3
    assert boxes.average_precision(np.array([True, False, True]), 3) == pytest.approx(1 / 3 + 2 / 9)
    gt = {"cls": ["a", "b"], "lo": [[0, 0, 0], [5, 5, 5]], "hi": [[1, 1, 1], [6, 6, 6]]}
    pred = {
        "cls": ["a", "a", "b"],
        "lo": [[0, 0, 0], [0, 0, 0], [5, 5, 5.5]],
        "hi": [[1, 1, 1], [1, 1, 1], [6, 6, 6]],
        "score": [0.9, 0.8, 0.7],
    }
    out = boxes.scene_detection([pred], [gt], 0.25)
    assert out["ap"] == pytest.approx(1.0) and out["precision"] == pytest.approx(2 / 3)
    assert boxes.scene_detection([pred], [gt], 0.75)["ap"] == pytest.approx(0.5)  # class b's box has IoU 0.5


def test_fusion_corrects_per_frame_scale_errors():
    K = np.array([[40.0, 0, 32], [0, 40, 24], [0, 0, 1]])
    poses = np.stack(
        [look_at(np.array([1.5 * np.cos(a), 1.5 * np.sin(a), 1.0]), np.zeros(3)) for a in np.linspace(0, np.pi, 8)]
    )
    # true depth of the floor plane z = 0 seen by each camera
    v, u = np.mgrid[0:48, 0:64]
    rays = np.stack([(u + 0.5 - 32) / 40, (v + 0.5 - 24) / 40, np.ones_like(u, dtype=float)], -1)
    true = np.stack([(-p[2, 3] / (rays @ p[:3, :3].T)[..., 2]) for p in poses])
    true[true < 0] = np.inf
    scales = 1 + 0.08 * np.array([1, -1, 1, -1, 1, -1, 1, -1])
    noisy = (true * scales[:, None, None]).astype(np.float32)
    cfg = dict(
        lo=[-1.2, -1.2, -0.3],
        hi=[1.2, 1.2, 0.3],
        voxel=0.05,
        trunc=0.15,
        min_weight=2,
        splat_radius=1,
        max_correction=0.5,
    )
    fused = geometry.fuse_depths(noisy, K, poses, cfg)
    ok = np.isfinite(true) & (true < 2.5)
    assert np.nanmean(np.abs(fused - true)[ok]) < 0.5 * np.mean(np.abs(noisy - true)[ok])


def _track(lo, hi, label, frame, n=200, seed=0):
    pts = np.random.default_rng(seed).uniform(lo, hi, (n, 3))
    return lifting.Track(pts, np.full(n, frame), Counter({label: 1.0}), [1.0], {frame})


LIFT = dict(
    box_quantile=0.0, merge_iou=0.3, contain=0.8, support_voxel=0.05, support_share=0.25, high_views=3, mid_views=2
)


def test_merging_joins_views_of_one_object_and_keeps_others_apart():
    tracks = [_track([0, 0, 0], [0.2, 0.2, 0.2], "duck", f, seed=f) for f in range(3)]
    tracks.append(_track([0, 0, 0], [0.2, 0.1, 0.2], "duck", 3, seed=9))  # a partial view, contained
    tracks.append(_track([1, 1, 0], [1.2, 1.2, 0.2], "mug", 0, seed=4))
    merged = lifting.merge_tracks(tracks, LIFT)
    assert sorted(len(t.views) for t in merged) == [1, 4]
    inst = lifting.instances(merged, LIFT)
    assert {i["tier"] for i in inst} == {"high", "low"}


def test_verifier_rules():
    priors = {"duck": {"min": [0.05, 0.08, 0.09], "max": [0.18, 0.26, 0.3]}}
    cfg = {"class_consistency": 0.6, "duplicate_overlap": 0.25}
    duck = {"cls": "duck", "lo": [0, 0, 0], "hi": [0.15, 0.2, 0.12], "views": 3, "consistency": 0.9}
    assert lifting.verify(duck, priors, cfg, [])
    assert not lifting.verify(duck | {"hi": [0.15, 0.2, 0.01]}, priors, cfg, [])  # flat: a spurious floor patch
    assert not lifting.verify(duck | {"views": 1}, priors, cfg, [])
    assert not lifting.verify(duck | {"consistency": 0.4}, priors, cfg, [])
    assert not lifting.verify(duck | {"cls": "unknown"}, priors, cfg, [])
    assert not lifting.verify(duck, priors, cfg, [duck])  # duplicate of an accepted instance


def test_single_frame_lifting_suppresses_duplicates(scene):
    masks = [
        Mask(f, scene.instance[f] == scene.obj_id[0], scene.obj_class[0], 0.9 - 0.1 * f, int(scene.obj_id[0]))
        for f in range(len(scene.depth))
        if (scene.instance[f] == scene.obj_id[0]).sum() > 20
    ]
    cfg = dict(max_depth_dev=0.5, min_points=5, box_quantile=0.0, nms_iou=0.25)
    out = lifting.single_frame(masks, scene.depth, scene.K, scene.cam2world, cfg)
    assert 1 <= len(out) < len(masks) or len(masks) == 1


def test_qa_answers_from_ground_truth_reproduce_generation(scene):
    pairs = qa.generate(scene, np.random.default_rng(0), 4, 5)
    gt = {
        "cls": scene.obj_class,
        "lo": scene.box_lo.tolist(),
        "hi": scene.box_hi.tolist(),
        "score": [1.0] * len(scene.obj_class),
    }
    assert pairs and all(qa.correct(q, qa.answer(q, gt, scene.cam2world, scene.K), 1e-6) for q in pairs)
    empty = {"cls": [], "lo": [], "hi": [], "score": []}
    obj = [q for q in pairs if not q["template"].startswith("camera_")]
    assert not any(qa.correct(q, qa.answer(q, empty, scene.cam2world, scene.K), 0.25) for q in obj)


def test_captions_name_class_support_and_colour():
    text = qa.caption("mug", np.array([0, 0, 0.4]), np.array([0.1, 0.1, 0.55]), np.array([200, 40, 40]), 0.4)
    assert text == "a red mug on the table, about 15 cm tall"


def test_missing_depth_stays_missing_and_masks_keep_their_measured_pixels():
    """ScanNet's holes (NaN): the depth stand-in's blur does not spread them, and a mask with a hole still
    lifts its measured pixels (a NaN median would drop them all)."""
    from repro.papers.holi_spatial.perception import noisy_depth

    depth = np.full((1, 20, 20), 2.0, dtype=np.float32)
    depth[0, 5, 5] = np.nan
    cfg = {"scale_sd": 0.0, "shift_sd": 0.0, "blur_px": 1.0, "pixel_sd": 0.0}
    out = noisy_depth(depth, np.random.default_rng(0), cfg)
    assert np.isnan(out[0, 5, 5]) and np.isfinite(np.delete(out.ravel(), 5 * 20 + 5)).all()
    np.testing.assert_allclose(out[0, 4, 4], 2.0, rtol=1e-6)
    pixels = np.zeros((20, 20), dtype=bool)
    pixels[3:8, 3:8] = True
    K = np.array([[20.0, 0, 10], [0, 20.0, 10], [0, 0, 1]])
    pts = lifting.view_points(Mask(0, pixels, "chair", 1.0, 1), depth[0], K, np.eye(4), 0.25)
    assert len(pts) == 24 and np.isfinite(pts).all()


def test_verifier_outcomes_flag_true_positives_by_verdict():
    from repro.papers.holi_spatial.evaluate import verifier_outcomes

    gt = {"cls": ["duck", "mug"], "lo": [[0, 0, 0], [1, 1, 0]], "hi": [[0.2, 0.2, 0.2], [1.2, 1.2, 0.2]]}
    fused = [
        {"cls": "duck", "lo": [0, 0, 0], "hi": [0.2, 0.2, 0.2], "score": 0.9, "verdict": "high_tier"},
        {"cls": "duck", "lo": [0, 0, 0], "hi": [0.2, 0.2, 0.2], "score": 0.5, "verdict": "rejected"},  # duplicate
        {"cls": "mug", "lo": [1, 1, 0], "hi": [1.2, 1.2, 0.2], "score": 0.4, "verdict": "admitted"},
        {"cls": "mug", "lo": [3, 3, 0], "hi": [3.2, 3.2, 0.2], "score": 0.3, "verdict": "rejected"},
    ]
    out = verifier_outcomes([{"instances": {"fused": fused}, "gt": gt}], 0.25)
    assert out == {"high_tier": [1], "admitted": [1], "rejected": [0, 0]}
