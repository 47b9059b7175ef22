"""The STEM2Mat reader on the fixture writer's folder (the benchmark card's tier*/img, tier*/cif_file layout):
ground truths of any composition from the CIFs, images resampled to the pipeline's pixel, doses from file names,
samples without a CIF counted and named, bad input named."""

import numpy as np
import pytest

from repro.fixtures.stem2mat import SAMPLES, png16, write
from repro.papers.automat.chemistry import FAMILIES
from repro.papers.automat.stem2mat import read_stem2mat
from repro.workflow.io import InputError

IMAGING = {"shape": 32, "pixel": 0.2, "sigma": 0.5, "background": 0.002, "cross_section": 6.0e-4}
SOURCE = {"kind": "stem2mat", "tiers": ["tier1", "tier2", "tier3"], "sampling": 0.1, "peak_fraction": 0.1}


def test_reads_every_composition_at_its_own_dose_and_counts_samples_without_a_cif(tmp_path):
    write(tmp_path)
    arrays, summary = read_stem2mat(tmp_path, SOURCE, IMAGING)
    assert summary["samples"] == len(SAMPLES) and summary["skipped"]["no_cif"] == 1
    assert summary["skipped_first"] == ["tier3/MoS2_2H_b_dose3000_sampling0.1.png"]
    assert len(summary["files"]) == 2 * len(SAMPLES)  # every image and CIF read, with size and sha256
    png = "tier1/img/NbSe2_2H_dose30000_sampling0.1.png"
    assert summary["files"][png]["bytes"] == (tmp_path / png).stat().st_size
    assert len(summary["files"][png]["sha256"]) == 64
    # no template library: compositions the embedded generator never makes are kept
    library = {f.split("-")[0] for f in FAMILIES}
    assert {"PtSe2", "NbSe2", "TiS2"} <= set(summary["compositions"])
    assert "PtSe2" not in library
    assert list(arrays["doses"]) == [3000.0, 10000.0, 30000.0]
    recorded = np.isfinite(arrays["noisy"]).all(axis=(2, 3))
    assert recorded.sum(axis=1).tolist() == [1] * len(SAMPLES)
    assert arrays["clean"].shape == (len(SAMPLES), 32, 32) and np.isnan(arrays["theta"]).all()
    # counts: dose * pixel area * (background + peak_fraction * peak-normalised image)
    first = arrays["noisy"][0][recorded[0]][0]
    assert first.max() == pytest.approx(30000 * 0.2**2 * (0.002 + 0.1), rel=1e-6)
    assert arrays["a"] == pytest.approx([s[2] for s in sorted(SAMPLES, key=lambda s: (s[1], s[0]))], abs=1e-4)


def test_bad_inputs_name_the_file(tmp_path):
    with pytest.raises(InputError, match="benchmark folder not found"):
        read_stem2mat(tmp_path / "missing", SOURCE, IMAGING)
    write(tmp_path)
    with pytest.raises(InputError, match="tier4"):
        read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier4"]}, IMAGING)
    png16(tmp_path / "tier1" / "img" / "NbSe2_nodose.png", np.ones((64, 64), np.uint16))
    (tmp_path / "tier1" / "cif_file" / "NbSe2_nodose.cif").write_text("data_x\n")
    with pytest.raises(InputError, match="no dose"):
        read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier1"]}, IMAGING)
    (tmp_path / "tier1" / "img" / "NbSe2_nodose.png").unlink()
    (tmp_path / "tier1" / "img" / "NbSe2_dose50.png").write_bytes(b"not a png")
    (tmp_path / "tier1" / "cif_file" / "NbSe2_dose50.cif").write_text(
        (tmp_path / "tier1" / "cif_file").glob("*.cif").__next__().read_text()
    )
    with pytest.raises(InputError, match="NbSe2_dose50"):
        read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier1"]}, IMAGING)


def test_data_stage_writes_the_benchmark_and_evaluate_checks_the_forward_model_on_simulated_truths(tmp_path):
    from types import SimpleNamespace as NS

    from test_automat_methods import CONTROLLER, VERIFY

    from repro.papers.automat import data
    from repro.papers.automat.evaluate import forward_checks

    write(tmp_path / "bench")
    out = {"images": str(tmp_path / "images.npz"), "manifest": str(tmp_path / "manifest.json")}
    settings = {
        "source": SOURCE | {"tiers": ["tier2"], "path": str(tmp_path / "bench")},
        "imaging": IMAGING | {"shape": 64},
        "generate": {"seed": 0, "families": ["MoS2-2H"], "images_per_dose": 1, "strain": 0.03, "doses": [100]},
        "checks": {"images": 2, "bootstrap_resamples": 100},
    }
    data.main(NS(params=NS(settings=settings), output=NS(**out)))
    with np.load(out["images"]) as z:
        assert z["noisy"].shape == (2, 1, 64, 64) and list(z["doses"]) == [10000.0]
        assert sorted(map(str, z["family"])) == ["PtSe2", "WSe2"]
        checks = forward_checks(z, IMAGING | {"shape": 64}, CONTROLLER, VERIFY)
    assert checks["rerender_min_ncc"] > 0.999 and checks["peak_fit_max_error"] < 0.05
