"""AutoMat's pieces against independent computations: the forward model, noise, lattice fit, peak fitting,
the StructureMatcher-based metrics and the controllers on easy images."""

import numpy as np
import pytest
from pymatgen.analysis.structure_matcher import StructureMatcher

from repro.papers.automat import analysis
from repro.papers.automat.controller import EnergyModel, closed_loop, feed_forward
from repro.papers.automat.forward import column_positions, ncc, noisy, render_template
from repro.papers.automat.templates import LIBRARY, structure

IMAGING = {"shape": 64, "pixel": 0.2, "sigma": 0.5, "background": 0.05}
DENOISE = {"gate_doses": [3000, 600], "sigma_light": 0.8, "sigma_strong": 1.5, "bragg_keep": 0.12}
CONTROLLER = {
    "a_range": [2.0, 4.0],
    "ncc_accept": 0.9,
    "energy_window": 0.1,
    "max_retries": 6,
    "ratio_scale": 0.15,
    "a_scale": 0.04,
}


def test_column_weights_are_z_to_the_1_7_summed_along_the_beam():
    _, w = LIBRARY["MoS2"].columns()
    assert sorted(w) == pytest.approx(sorted([42**1.7, 2 * 16**1.7]))
    _, w = LIBRARY["graphene"].columns()
    assert w == pytest.approx([6**1.7, 6**1.7])


def test_render_peaks_at_the_columns_and_ncc_is_one_for_identical_images():
    img = render_template("WS2", 3.18, 0.2, np.array([1.0, 1.5]), IMAGING)
    pos, w = column_positions("WS2", 3.18, 0.2, np.array([1.0, 1.5]), 12.8)
    brightest = pos[np.argmax(w * np.all((pos > 2) & (pos < 10), axis=1))]
    iy, ix = (brightest[::-1] / IMAGING["pixel"] - 0.5).round().astype(int)
    assert img[iy, ix] > 0.9
    assert ncc(img, img) == pytest.approx(1.0, abs=1e-12)
    assert ncc(img, render_template("WS2", 3.18, 0.5, np.zeros(2), IMAGING)) < 0.9


def test_poisson_noise_has_the_dose_mean():
    img = np.full((64, 64), 0.5)
    counts = noisy(img, 1000.0, 0.2, 0.05, np.random.default_rng(0))
    assert counts.mean() == pytest.approx(1000 * 0.04 * 0.55, rel=0.02)
    assert counts.var() == pytest.approx(counts.mean(), rel=0.1)


@pytest.mark.parametrize("name", ["graphene", "MoS2", "WSe2"])
def test_lattice_fit_recovers_lattice_constant_and_rotation(name):
    a, theta = LIBRARY[name].a * 1.02, 0.4
    img = render_template(name, a, theta, np.array([0.3, 0.8]), IMAGING)
    fit_a, fit_theta, _ = analysis.lattice_hypotheses(img, IMAGING["pixel"], (2.0, 4.0))[0]
    assert fit_a == pytest.approx(a, rel=0.005)
    assert abs((fit_theta - theta + np.pi / 6) % (np.pi / 3) - np.pi / 6) < 0.01


def test_peak_fit_on_a_noiseless_image_is_within_0_05_angstrom():
    shift = np.array([0.37, 0.91])
    img = render_template("hBN", 2.5, 0.1, shift, IMAGING)
    fitted = analysis.fit_peaks(img, IMAGING["pixel"], IMAGING["sigma"], threshold=0.05)
    pos, _ = column_positions("hBN", 2.5, 0.1, shift, 12.8)
    interior = pos[np.all((pos > 1.2) & (pos < 11.6), axis=1)]
    assert np.linalg.norm(interior[:, None] - fitted[None], axis=-1).min(axis=1).max() < 0.05


def test_structure_matcher_metric_separates_templates_and_tolerates_strain():
    matcher = StructureMatcher(ltol=0.2, stol=0.3, angle_tol=5)
    truth = structure("MoS2", 3.18)
    assert matcher.fit(truth, structure("MoS2", 3.22))
    assert not matcher.fit(truth, structure("WS2", 3.18))
    assert not matcher.fit(truth, structure("MoSe2", 3.32))
    rms = matcher.get_rms_dist(truth, structure("MoS2", 3.18))
    assert rms[0] == pytest.approx(0.0, abs=1e-8)


def test_energy_model_interpolates_and_refuses_lattices_off_the_grid():
    table = {
        "MoS2": {"a": [2.0, 3.0, 4.0], "energy_per_atom": [-5.0, -7.0, -6.0], "formation_per_atom": [1.0, 0.0, 0.5]}
    }
    model = EnergyModel(table)
    assert model.strain_energy("MoS2", 3.5) == pytest.approx(0.5)
    assert model.formation("MoS2", 2.5) == pytest.approx(0.5)
    assert model.strain_energy("MoS2", 5.0) == float("inf")


def test_both_controllers_recover_an_easy_high_dose_image():
    names = list(LIBRARY)
    rng = np.random.default_rng(2)
    cfg = IMAGING | DENOISE
    counts = noisy(render_template("WS2", 3.2, 0.25, np.array([0.5, 0.2]), IMAGING), 1e4, 0.2, 0.05, rng)
    grid = np.linspace(0.55, 1.8, 12)
    table = {n: {"a": (LIBRARY[n].a * grid).tolist(), "energy_per_atom": ((grid - 1) ** 2).tolist(),
                 "formation_per_atom": ((grid - 1) ** 2).tolist()} for n in names}  # fmt: skip
    ff = feed_forward(counts, names, cfg, CONTROLLER)
    loop = closed_loop(counts, names, cfg, CONTROLLER, EnergyModel(table))
    for result in (ff, loop):
        assert result["template"] == "WS2" and result["a"] == pytest.approx(3.2, rel=0.01)
    assert loop["verified"]


def test_gate_picks_stronger_denoising_at_lower_dose():
    assert [analysis.gate(d, [3000, 600]) for d in (1e4, 1e3, 1e2)] == [0, 1, 2]
