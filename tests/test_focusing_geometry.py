"""Focusing's ray caster against an analytic sphere, OBJ reading, carving safety and adaptive zooming."""

import numpy as np
import pytest

from repro.papers.focusing import carving, geometry
from repro.workflow.io import InputError


def uv_sphere(radius: float, rings: int = 24, segments: int = 48) -> tuple[np.ndarray, np.ndarray]:
    theta = np.linspace(0, np.pi, rings + 1)
    phi = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    verts = radius * np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    faces = []
    for i in range(rings):
        for j in range(segments):
            a, b = i * segments + j, i * segments + (j + 1) % segments
            c, d = a + segments, b + segments
            faces += [[a, c, d], [a, d, b]]
    return verts, np.array(faces)


@pytest.fixture(scope="module")
def sphere_views():
    verts, faces = uv_sphere(0.6)
    cams = geometry.sphere_cameras(6, 3.0)
    K = geometry.intrinsics(16, 45)
    hits = [geometry.ray_cast(*geometry.camera_rays(c, K, 16), verts, faces) for c in cams]
    return verts, faces, cams, K, hits


def test_ray_cast_depth_matches_the_analytic_sphere(sphere_views):
    _, _, cams, K, hits = sphere_views
    o, d = geometry.camera_rays(cams[0], K, 16)
    b = np.sum(o * d, axis=1)
    disc = b**2 - (np.sum(o**2, axis=1) - 0.6**2)
    exact = np.where(disc > 0, -b - np.sqrt(np.maximum(disc, 0)), np.inf)
    depth, normal = hits[0]
    both = np.isfinite(exact) & np.isfinite(depth)
    assert both.sum() > 20
    assert np.max(np.abs(depth[both] - exact[both])) < 0.01  # facetted sphere: within the chord error
    assert np.all(np.sum(normal[both] * d[both], axis=1) < 0)  # normals face the camera


def test_carving_keeps_every_surface_cell_and_carves_free_space(sphere_views):
    verts, faces, cams, K, hits = sphere_views
    depth = np.stack([h[0] for h in hits]).reshape(len(cams), 16, 16)
    points = geometry.sample_surface(verts, faces, 2000, np.random.default_rng(0))
    lo, size, n = np.full(3, -1.0), 2.0, 16
    active = carving.carve(depth, cams, K, lo, size, n, band=0.125, margin=0.0625)
    surface = carving.surface_cells(points, lo, size, n)
    assert np.all(active[surface])
    assert active.sum() < 0.3 * n**3
    assert not active[0, 0, 0] and not active[n // 2, n // 2, n // 2]  # corner: free space; centre: deep inside


def test_adaptive_resolution_picks_the_finest_within_the_cap():
    assert carving.adaptive_resolution({6: 50, 8: 90, 10: 150, 12: 230}, 200) == 10
    assert carving.adaptive_resolution({6: 300, 8: 500}, 200) == 6


def test_dilate_grows_by_one_cell():
    mask = np.zeros((5, 5, 5), bool)
    mask[2, 2, 2] = True
    assert carving.dilate(mask).sum() == 27


def test_obj_reader_triangulates_and_names_bad_files(tmp_path):
    good = tmp_path / "quad.obj"
    good.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1 2/2 3/3 4/4\n")
    verts, faces = geometry.read_obj(good)
    assert verts.shape == (4, 3) and faces.tolist() == [[0, 1, 2], [0, 2, 3]]
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nf 1 2 3\n")
    with pytest.raises(InputError, match="missing vertex"):
        geometry.read_obj(bad)
    with pytest.raises(InputError, match="no vertices"):
        (tmp_path / "empty.obj").write_text("# nothing\n")
        geometry.read_obj(tmp_path / "empty.obj")
