"""AutoMat's pieces against independent computations: the generator's forward model and noise, the STEM2CIF-style
steps (two-pass Gaussian column fits, intensity clustering, lattice search, basis, column contents, structure
building), the second imaging model of the verification, and the closed loop's decisions."""

import numpy as np
import pytest
from pymatgen.analysis.structure_matcher import StructureMatcher

from repro.papers.automat import analysis, controller, verifier
from repro.papers.automat.chemistry import (
    FAMILIES,
    Content,
    assignments,
    columns,
    contents,
    in_plane_lattice,
    structure_from_columns,
    to_structure,
)
from repro.papers.automat.forward import ncc, noisy, render_structure, structure_columns, tile

IMAGING = {"shape": 64, "pixel": 0.2, "sigma": 0.5, "background": 0.002, "cross_section": 6.0e-4}
DENOISE = {"gate_doses": [3000, 600], "sigma_light": 0.8, "sigma_strong": 1.5, "bragg_keep": 0.12}
CONTROLLER = {
    "intensity": "absolute", "elements": ["B", "C", "N", "S", "Se", "Te", "Ti", "Nb", "Mo", "W"],
    "max_column_atoms": 2, "z_exponent": 1.7, "a_range": [2.0, 4.0], "peak_distance": 0.7, "peak_threshold": 0.1,
    "residual_threshold": 0.1, "max_species": 3, "min_silhouette": 0.6, "neighbours": 8, "tolerance": 0.35,
    "translation_score": 0.5, "candidates": 30, "lattices": 2, "max_sites": 4, "site_tolerance": 0.12,
    "min_site_peaks": 3, "contents_kept": 3, "ncc_accept": 0.8, "energy_window": 0.6, "max_retries": 3,
}  # fmt: skip
VERIFY = {"energy_kv": 300, "semiangle_mrad": 21.3, "defocus": 20.0, "cs_mm": 0.01, "source_sigma": 0.35,
          "thermal_sigma": 0.08, "z_exponent": 1.85}  # fmt: skip
MATCHER = StructureMatcher(ltol=0.2, stol=0.3, angle_tol=5)


def truth(name: str, strain: float = 0.0):
    family = FAMILIES[name]
    return to_structure(family.atoms(family.a * (1 + strain)))


def true_columns(structure, theta, shift):
    vectors, frac, weights, _ = structure_columns(structure, theta)
    return tile(vectors, frac, weights, np.asarray(shift, float), IMAGING["shape"] * IMAGING["pixel"])


def test_columns_group_atoms_along_the_beam_with_z_to_the_1_7():
    _, numbers = columns(truth("MoS2-2H"))
    assert sorted(numbers) == [(16, 16), (42,)]
    _, numbers = columns(truth("MoS2-1T"))
    assert sorted(numbers) == [(16,), (16,), (42,)]
    _, _, weights, _ = structure_columns(truth("MoS2-2H"), 0.0)
    assert sorted(weights) == pytest.approx(sorted([2 * 16**1.7, 42**1.7]))


def test_generator_integrates_to_the_cross_sections_and_noise_has_the_dose_mean():
    image = render_structure(truth("WS2-2H"), 0.3, np.array([1.0, 1.5]), IMAGING)
    assert ncc(image, image) == pytest.approx(1.0, abs=1e-12)
    assert ncc(image, render_structure(truth("WS2-2H"), 0.6, np.zeros(2), IMAGING)) < 0.9
    # one isolated column: its integrated image is its cross-section
    single = np.array([[6.4, 6.4]])
    from repro.papers.automat.forward import render

    one = render(single, np.array([2.0]), 64, 0.2, 0.5)
    assert one.sum() * 0.2**2 == pytest.approx(2.0, rel=1e-6)
    counts = noisy(np.full((64, 64), 0.5), 1000.0, 0.2, 0.05, np.random.default_rng(0))
    assert counts.mean() == pytest.approx(1000 * 0.04 * 0.55, rel=0.02)
    assert counts.var() == pytest.approx(counts.mean(), rel=0.1)


@pytest.mark.parametrize("name", ["BN-graphene", "MoS2-2H", "WSe2-1T"])
def test_two_pass_gaussian_fit_finds_every_interior_column_within_0_05_angstrom(name):
    shift, theta = np.array([0.37, 0.91]), 0.2
    clean = render_structure(truth(name), theta, shift, IMAGING)
    dose = 1e6
    found, _ = analysis.find_columns(dose * 0.04 * clean, dose, 0.2, 0.5, CONTROLLER, background=0.0)
    pos, _ = true_columns(truth(name), theta, shift)
    inner = np.all((pos > 2.0) & (pos < 10.8), axis=1)  # a nearest-neighbour spacing in from the edges
    dist = np.linalg.norm(pos[inner][:, None] - found[None], axis=-1)
    assert dist.min(axis=1).max() < 0.05


def test_intensity_clustering_separates_two_species_and_keeps_one_when_there_is_one():
    rng = np.random.default_rng(0)
    heights = np.r_[rng.normal(10, 0.3, 20), rng.normal(3, 0.1, 40)]
    labels = analysis.cluster_intensities(heights, 3, 0.6)
    assert set(labels[:20]) == {0} and set(labels[20:]) == {1}
    assert set(analysis.cluster_intensities(rng.uniform(4.9, 5.1, 30), 3, 0.6)) == {0}


def test_lattice_search_and_basis_fit_recover_the_primitive_cell_and_sites():
    a, theta, shift = 3.18 * 1.02, 0.4, np.array([0.3, 0.8])
    clean = render_structure(truth("MoS2-2H", 0.02), theta, shift, IMAGING)
    found, sections = analysis.find_columns(1e6 * 0.04 * clean, 1e6, 0.2, 0.5, CONTROLLER, background=0.0)
    labels = analysis.cluster_intensities(sections, 3, 0.6)
    cells = analysis.lattice_search(found, labels, 12.8, CONTROLLER)
    assert cells
    fit = analysis.fit_basis(found, labels, sections, cells[0], CONTROLLER)
    lengths = np.linalg.norm(fit["cell"], axis=1)
    assert lengths == pytest.approx([a, a], rel=0.01)
    assert len(fit["basis"]) == 2  # a metal column and a two-chalcogen column
    # the lattice-constrained joint Gaussian fit gives each site's cross-section (the contents are read from it)
    sites = analysis.site_cross_sections(
        1e6 * 0.04 * clean, fit["cell"], fit["origin"], fit["basis"], 1e6, 0.2, 0.5, 0.0
    )
    expected = 6e-4 * np.array([42**1.7, 2 * 16**1.7])
    assert sorted(sites) == pytest.approx(sorted(expected), rel=0.02)
    fourier_a, fourier_theta, _ = analysis.lattice_hypotheses(clean, 0.2, (2.0, 4.0))[0]
    assert fourier_a == pytest.approx(a, rel=0.005)
    assert abs((fourier_theta - theta + np.pi / 6) % (np.pi / 3) - np.pi / 6) < 0.01


def test_column_contents_from_calibrated_cross_sections_and_from_ratios_only():
    vocabulary = contents(["S", "Se", "Mo", "W"], 2)
    measured = 6e-4 * np.array([42**1.7, 2 * 16**1.7])
    best, _ = assignments(measured, vocabulary, 1.7, 3, 6e-4)[0]
    assert best == (Content(42, 1), Content(16, 2))
    ranked = assignments(measured * 7.0, vocabulary, 1.7, 50, None)  # uncalibrated: only the ratio counts
    assert (Content(42, 1), Content(16, 2)) in [combo for combo, _ in ranked[:5]]


@pytest.mark.parametrize("name", ["C2-graphene", "BN-graphene", "MoS2-2H", "WSe2-1T"])
def test_a_structure_built_from_the_truths_columns_matches_it(name):
    structure = truth(name)
    frac, numbers = columns(structure)
    built = structure_from_columns(np.asarray(structure.lattice.matrix)[:2, :2], frac,
                                   [Content(n[0], len(n)) for n in numbers])  # fmt: skip
    assert built.composition.reduced_formula == structure.composition.reduced_formula
    assert MATCHER.fit(structure, built)
    assert in_plane_lattice(built)[:2] == pytest.approx(in_plane_lattice(structure)[:2], rel=1e-6)


def test_verifier_is_another_physical_model_that_still_agrees_with_the_generator_on_a_truth():
    assert verifier.wavelength(300) == pytest.approx(0.01969, rel=1e-3)  # Å, relativistic, at 300 kV
    probe = verifier.probe_intensity(64, 0.2, VERIFY)
    assert probe.sum() == pytest.approx(1.0) and probe[0, 0] == probe.max()
    structure, theta, shift = truth("MoS2-2H"), 0.3, np.array([0.5, 0.7])
    vectors, frac, _, numbers = structure_columns(structure, theta)
    theirs = render_structure(structure, theta, shift, IMAGING)
    ours = verifier.render(vectors, frac, numbers, shift, 64, 0.2, VERIFY)
    assert 0.9 < ncc(ours, theirs) < 1 - 1e-6
    wrong = verifier.render(vectors * 1.1, frac, numbers, shift, 64, 0.2, VERIFY)
    assert ncc(wrong, theirs) < 0.5


def hyp(ncc_value: float, z: int, expert: int = 0) -> controller.Hypothesis:
    cell = np.array([[3.0, 0.0], [-1.5, 2.6]])
    h = controller.Hypothesis(0, "peaks", "sites", cell, np.zeros(2), np.zeros((1, 2)), (Content(z, 1),), 0.0, expert)
    h.ncc = ncc_value
    return h


def test_closed_loop_retries_rolls_back_and_falls_back_to_the_best_plausible():
    energies = {6: 0.1, 7: 2.0, 16: 0.2, 42: 0.0}

    def energy(h):
        return energies[h.site_contents[0].z]

    cfg = {"max_retries": 1, "ncc_accept": 0.8, "energy_window": 0.6}
    # first pass: image check fails, then the MLIP refuses; rollback's first hypothesis passes both
    attempts = controller.Attempts((None, 0, [hyp(0.5, 6), hyp(0.9, 7)]), (None, 2, [hyp(0.85, 16, 2)]))
    result = controller.closed_loop(attempts, cfg, energy)
    assert result["verified"] and result["retries"] == 2 and result["expert"] == 2
    assert result["hypothesis"].site_contents[0].z == 16
    assert controller.feed_forward(attempts)["hypothesis"].site_contents[0].z == 6
    # nothing passes: the best NCC among those the MLIP accepts (not the 0.9 one it refuses)
    attempts = controller.Attempts((None, 0, [hyp(0.5, 6), hyp(0.9, 7)]), (None, 2, [hyp(0.6, 42, 2)]))
    result = controller.closed_loop(attempts, cfg, energy)
    assert not result["verified"] and result["hypothesis"].site_contents[0].z == 42


def test_both_controllers_reconstruct_an_easy_high_dose_image():
    structure = truth("MoS2-2H", 0.01)
    clean = render_structure(structure, 0.25, np.array([0.5, 0.2]), IMAGING)
    dose = 1e4
    counts = noisy(clean, dose, 0.2, IMAGING["background"], np.random.default_rng(2))
    attempts = controller.prepare(counts, dose, IMAGING | DENOISE, CONTROLLER, VERIFY)
    first = controller.feed_forward(attempts)["hypothesis"]
    assert first is not None and MATCHER.fit(structure, first.structure())
    assert first.ncc >= CONTROLLER["ncc_accept"]
    loop = controller.closed_loop(attempts, CONTROLLER, lambda h: 0.0)
    assert loop["verified"] and MATCHER.fit(structure, loop["hypothesis"].structure())


def test_gate_picks_stronger_denoising_at_lower_dose():
    assert [analysis.gate(d, [3000, 600]) for d in (1e4, 1e3, 1e2)] == [0, 1, 2]


@pytest.mark.parametrize("scale", [None, 1.0])
def test_pruned_content_search_finds_the_exhaustive_best(monkeypatch, scale):
    from repro.papers.automat import chemistry

    vocabulary = contents(["B", "C", "N", "S", "Se", "Te", "Ti", "Nb", "Mo", "W", "Pt", "Pd"], 2)
    rng = np.random.default_rng(1)
    for _ in range(3):
        measured = np.exp(rng.normal(5, 1.5, 4))
        pruned = assignments(measured, vocabulary, 1.7, 3, scale)
        monkeypatch.setattr(chemistry, "EXHAUSTIVE", 10**9)
        exhaustive = assignments(measured, vocabulary, 1.7, 3, scale)
        monkeypatch.setattr(chemistry, "EXHAUSTIVE", 200_000)
        assert [c for c, _ in pruned] == [c for c, _ in exhaustive]
