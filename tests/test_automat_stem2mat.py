"""The STEM2Mat reader on a tiny folder laid out as the benchmark's card describes (tier*/img, tier*/cif_file):
ground truths from the CIFs, images resampled to the pipeline's pixel, doses from file names, bad input named."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from repro.papers.automat.forward import render_template
from repro.papers.automat.stem2mat import read_stem2mat
from repro.papers.automat.templates import structure
from repro.workflow.io import InputError

IMAGING = {"shape": 32, "pixel": 0.2, "sigma": 0.5, "background": 0.05}
NAMES = ["graphene", "MoS2"]
SOURCE = {"kind": "stem2mat", "tiers": ["tier1", "tier2"], "sampling": 0.1}


def write_sample(root: Path, tier: str, stem: str, name: str, a: float, cif: bool = True) -> np.ndarray:
    """A 64 x 64 image at 0.1 Å/px (the simulator's, as a 16-bit PNG) and the template's CIF."""
    (root / tier / "img").mkdir(parents=True, exist_ok=True)
    (root / tier / "cif_file").mkdir(parents=True, exist_ok=True)
    image = render_template(name, a, 0.3, np.zeros(2), {**IMAGING, "shape": 64, "pixel": 0.1})
    Image.fromarray((image * 60000).astype(np.uint16)).save(root / tier / "img" / f"{stem}.png")
    if cif:
        structure(name, a).to(filename=str(root / tier / "cif_file" / f"{stem}.cif"))
    return image


def test_reads_ground_truths_and_images_at_their_own_dose(tmp_path):
    write_sample(tmp_path, "tier1", "MoS2_12x12_dose30000_sampling0.1", "MoS2", 3.18)
    write_sample(tmp_path, "tier2", "C_dose1000_sampling0.1", "graphene", 2.46)
    write_sample(tmp_path, "tier2", "C_dose2000", "graphene", 2.50, cif=False)
    arrays, summary = read_stem2mat(tmp_path, SOURCE, IMAGING, NAMES)
    assert summary["samples"] == 2 and summary["skipped"]["no_cif"] == 1
    assert list(arrays["doses"]) == [1000.0, 30000.0]
    assert [NAMES[t] for t in arrays["template"]] == ["MoS2", "graphene"]
    assert arrays["a"] == pytest.approx([3.18, 2.46], abs=1e-6)
    recorded = np.isfinite(arrays["noisy"]).all(axis=(2, 3))
    assert recorded.tolist() == [[False, True], [True, False]]
    assert arrays["clean"].shape == (2, 32, 32) and np.isnan(arrays["theta"]).all()
    # counts: dose * pixel area * (background + peak-normalised image), the simulator's mean
    expected_peak = 30000 * 0.2**2 * (0.05 + 1.0)
    assert np.nanmax(arrays["noisy"][0]) == pytest.approx(expected_peak, rel=1e-6)
    # resampling 0.1 -> 0.2 Å/px halves the 64 px image to the same 6.4 Å field the simulator renders at 0.2
    direct = render_template("MoS2", 3.18, 0.3, np.zeros(2), IMAGING)
    assert np.corrcoef(arrays["clean"][0].ravel(), (direct / direct.max()).ravel())[0, 1] > 0.8


def test_compositions_outside_the_library_are_skipped_and_counted(tmp_path):
    write_sample(tmp_path, "tier1", "MoS2_dose100", "MoS2", 3.18)
    write_sample(tmp_path, "tier1", "WS2_dose100", "WS2", 3.18)
    arrays, summary = read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier1"]}, IMAGING, NAMES)
    assert summary["samples"] == 1 and summary["skipped"]["composition_not_in_library"] == 1


def test_bad_inputs_name_the_file(tmp_path):
    with pytest.raises(InputError, match="benchmark folder not found"):
        read_stem2mat(tmp_path / "missing", SOURCE, IMAGING, NAMES)
    write_sample(tmp_path, "tier1", "MoS2_sampling0.1", "MoS2", 3.18)
    with pytest.raises(InputError, match="no dose"):
        read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier1"]}, IMAGING, NAMES)
    (tmp_path / "tier1" / "img" / "MoS2_sampling0.1.png").unlink()
    (tmp_path / "tier1" / "img" / "MoS2_dose50.png").write_bytes(b"not a png")
    (tmp_path / "tier1" / "cif_file" / "MoS2_dose50.cif").write_text("data_x\n")
    with pytest.raises(InputError, match="MoS2_dose50"):
        read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier1"]}, IMAGING, NAMES)
    with pytest.raises(InputError, match="tier3"):
        read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier3"]}, IMAGING, NAMES)


def test_data_stage_writes_the_benchmark_and_evaluate_checks_the_forward_model_on_simulated_truths(tmp_path):
    from types import SimpleNamespace as NS

    from repro.papers.automat import data
    from repro.papers.automat.evaluate import forward_checks

    write_sample(tmp_path / "bench", "tier1", "MoS2_dose300_sampling0.1", "MoS2", 3.18)
    out = {"images": str(tmp_path / "images.npz"), "manifest": str(tmp_path / "manifest.json")}
    settings = {
        "source": SOURCE | {"tiers": ["tier1"], "path": str(tmp_path / "bench")},
        "imaging": IMAGING,
        "generate": {"seed": 0, "templates": NAMES, "images_per_dose": 1, "strain": 0.03, "doses": [100, 300]},
    }
    data.main(NS(params=NS(settings=settings), output=NS(**out)))
    with np.load(out["images"]) as z:
        assert z["noisy"].shape == (1, 1, 32, 32) and list(z["doses"]) == [300.0]
        checks = forward_checks(z, IMAGING, 2)
    assert checks["rerender_min_ncc"] > 0.99 and np.isfinite(checks["peak_fit_max_error"])
