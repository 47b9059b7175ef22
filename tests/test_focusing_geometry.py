"""Focusing's renderers against an analytic sphere and each other, zoomed intrinsics, per-view carving safety,
the frustum of a window, OBJ reading."""

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
def sphere():
    verts, faces = uv_sphere(0.6)
    cams = geometry.sphere_cameras(6, 3.0)
    K = geometry.intrinsics(16, 45)
    return verts, faces, cams, K


def test_rasterized_depth_matches_the_analytic_sphere_and_the_ray_caster(sphere):
    verts, faces, cams, K = sphere
    o, d = geometry.camera_rays(cams[0], K, 16)
    b = np.sum(o * d, axis=1)
    disc = b**2 - (np.sum(o**2, axis=1) - 0.6**2)
    exact = np.where(disc > 0, -b - np.sqrt(np.maximum(disc, 0)), np.inf)
    raster = geometry.rasterize_depth(verts, faces, cams[0], K, 16).reshape(-1)
    cast, normal = geometry.ray_cast(o, d, verts, faces)
    both = np.isfinite(exact) & np.isfinite(raster)
    assert both.sum() > 20
    assert np.max(np.abs(raster[both] - exact[both])) < 0.01  # facetted sphere: within the chord error
    assert np.array_equal(np.isfinite(raster), np.isfinite(cast))
    assert np.allclose(raster[np.isfinite(raster)], cast[np.isfinite(cast)], atol=1e-9)
    assert np.all(np.sum(normal[np.isfinite(cast)] * d[np.isfinite(cast)], axis=1) < 0)  # normals face the camera


def test_zoomed_view_fits_the_silhouette_and_equals_the_cast_rays(sphere):
    verts, faces, cams, K = sphere
    window = geometry.silhouette_window(verts, cams[1], K, pad=0.05)
    Kz = geometry.zoom_intrinsics(K, window, 16)
    uv, _ = geometry.project_vertices(verts, cams[1], Kz)
    assert uv.min() >= 0 and uv.max() <= 16  # every vertex inside the zoomed image
    zoomed = geometry.rasterize_depth(verts, faces, cams[1], Kz, 16)
    base = geometry.rasterize_depth(verts, faces, cams[1], K, 16)
    assert np.isfinite(zoomed).mean() > 2 * np.isfinite(base).mean()  # pixels concentrate on the object
    o, d = geometry.camera_rays(cams[1], Kz, 16)
    cast = geometry.ray_cast(o, d, verts, faces)[0].reshape(16, 16)
    assert np.array_equal(np.isfinite(zoomed), np.isfinite(cast))
    assert np.allclose(zoomed[np.isfinite(zoomed)], cast[np.isfinite(cast)], atol=1e-9)


def test_per_view_carving_keeps_every_visible_surface_cell_and_drops_free_and_occluded_space(sphere):
    verts, faces, cams, K = sphere
    points = geometry.sample_surface(verts, faces, 4000, np.random.default_rng(0))
    n = 16
    probes = carving.probes(n)
    for cam in cams:
        Kz = geometry.zoom_intrinsics(K, geometry.silhouette_window(verts, cam, K, 0.05), 16)
        depth = geometry.rasterize_depth(verts, faces, cam, Kz, 16)
        carved = carving.carve_view(probes, depth, cam, Kz, band=2 / n, margin=1 / n)
        seen = carving.visible_points(points, depth, cam, Kz, tol=0.01)
        assert seen.sum() > 100
        assert np.all(carved[tuple(carving.cells_of(points[seen], n).T)])
        frustum = carving.frustum(probes, cam, Kz, 16)
        assert np.all(carved <= frustum) and carved.sum() < 0.5 * frustum.sum()
        far_side = carving.cells_of((-0.6 * cam[:3, 3] / np.linalg.norm(cam[:3, 3]))[None], n)[0]
        assert not carved[tuple(far_side)]  # the back of the sphere is occluded in this view
        assert not carved[n // 2, n // 2, n // 2]  # deep inside


def test_window_frustum_equals_the_frustum_of_the_zoomed_camera(sphere):
    verts, _, cams, K = sphere
    probes = carving.probes(8)
    window = geometry.silhouette_window(verts, cams[2], K, 0.05)
    uv, z = geometry.project_vertices(probes.reshape(-1, 3), cams[2], K)
    uv, z = uv.reshape(*probes.shape[:-1], 2), z.reshape(probes.shape[:-1])
    for sub in [window, *geometry.sub_windows(window, 2)]:
        expected = carving.frustum(probes, cams[2], geometry.zoom_intrinsics(K, sub, 16), 16)
        assert np.array_equal(carving.window_frustum(uv, z, sub), expected)
    sections = [carving.window_frustum(uv, z, w) for w in geometry.sub_windows(window, 2)]
    assert np.array_equal(np.any(sections, axis=0), carving.window_frustum(uv, z, window))


def test_closest_split_and_dilate():
    assert carving.closest_split({1: 400, 2: 150, 3: 90}, 120) == 2
    assert carving.closest_split({1: 400, 2: 150, 3: 90}, 100) == 3
    mask = np.zeros((5, 5, 5), bool)
    mask[2, 2, 2] = True
    assert carving.dilate(mask).sum() == 27


def test_obj_reader_triangulates_and_names_bad_files(tmp_path):
    good = tmp_path / "quad.obj"
    good.write_text("mtllib quad.mtl\no q\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nusemtl m\nf 1/1 2/2 3/3 4/4\n")
    verts, faces = geometry.read_obj(good)
    assert verts.shape == (4, 3) and faces.tolist() == [[0, 1, 2], [0, 2, 3]]
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nf 1 2 3\n")
    with pytest.raises(InputError, match="missing vertex"):
        geometry.read_obj(bad)
    (tmp_path / "empty.obj").write_text("# nothing\n")
    with pytest.raises(InputError, match="no vertices"):
        geometry.read_obj(tmp_path / "empty.obj")
    (tmp_path / "garbled.obj").write_text("v 0 0 0\nv 1 zero 0\n")
    with pytest.raises(InputError, match="line 2"):
        geometry.read_obj(tmp_path / "garbled.obj")
