"""The STEM2Mat reader on the fixture writer's folder (the benchmark card's tier*/img, tier*/cif_file layout):
ground truths of any composition from the CIFs, images resampled to the pipeline's pixel, doses from file names,
samples without a CIF counted and named, unreadable samples refused (counted in the manifest, bounded by
source.max_bad_fraction), bad input named; a replaced benchmark file reruns exactly the automat jobs it feeds."""

import numpy as np
import pytest
from PIL import Image

from repro.fixtures.stem2mat import SAMPLES, png16, write
from repro.papers.automat.chemistry import FAMILIES
from repro.papers.automat.stem2mat import read_stem2mat
from repro.workflow.io import InputError

IMAGING = {"shape": 32, "pixel": 0.2, "sigma": 0.5, "background": 0.002, "cross_section": 6.0e-4}
SOURCE = {
    "kind": "stem2mat",
    "tiers": ["tier1", "tier2", "tier3"],
    "sampling": 0.1,
    "peak_fraction": 0.1,
    "max_bad_fraction": 0.05,
}


def test_reads_every_composition_at_its_own_dose_and_counts_samples_without_a_cif(tmp_path):
    write(tmp_path)
    arrays, summary = read_stem2mat(tmp_path, SOURCE, IMAGING)
    assert summary["samples"] == len(SAMPLES) and summary["skipped"]["no_cif"] == 1
    assert summary["skipped_first"] == ["tier3/img/MoS2_2H_b_dose3000_sampling0.1.png"]
    assert summary["refused"] == {
        "read": len(SAMPLES),
        "refused": 0,
        "refused_fraction": 0.0,
        "first_refused": [],
        "reasons": {},
    }
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
    with pytest.raises(InputError, match="tier1/img/NbSe2_dose50.png"):
        read_stem2mat(tmp_path, SOURCE | {"tiers": ["tier1"]}, IMAGING)


def stem(name: str) -> str:
    sample = next(s for s in SAMPLES if s[0] == name)
    return f"{sample[1]}/img/{name}_dose{sample[4]}_sampling0.1"


def test_a_corrupt_image_among_the_samples_is_refused_and_counted_in_the_manifest(tmp_path, caplog):
    from types import SimpleNamespace as NS

    from repro.papers.automat import data
    from repro.workflow.io import read_json

    write(tmp_path / "bench")
    png = tmp_path / "bench" / f"{stem('PtSe2_1T')}.png"
    png.write_bytes(png.read_bytes()[:100])  # a download cut short
    out = {"images": str(tmp_path / "images.npz"), "manifest": str(tmp_path / "manifest.json")}
    settings = {
        "source": SOURCE | {"path": str(tmp_path / "bench"), "max_bad_fraction": 0.2},
        "imaging": IMAGING,
        "generate": {"seed": 0, "families": ["MoS2-2H"], "images_per_dose": 1, "strain": 0.03, "doses": [100]},
        "checks": {"images": 1, "bootstrap_resamples": 100},
    }
    with caplog.at_level("WARNING", logger="repro.data.refusals"):
        data.main(NS(params=NS(settings=settings), output=NS(**out)))
    assert f"1 of {len(SAMPLES)} samples refused" in caplog.text and f"{stem('PtSe2_1T')}.png" in caplog.text
    read = read_json(out["manifest"])["read"]
    assert read["samples"] == len(SAMPLES) - 1
    assert read["refused"] == {
        "read": len(SAMPLES),
        "refused": 1,
        "refused_fraction": 1 / len(SAMPLES),
        "first_refused": [f"{stem('PtSe2_1T')}.png"],
        "reasons": {"not a readable image": 1},
    }
    assert f"{stem('PtSe2_1T')}.png" not in read["files"] and f"{stem('WSe2_2H')}.png" in read["files"]
    with np.load(out["images"]) as z:
        assert "PtSe2" not in set(map(str, z["family"])) and len(z["family"]) == len(SAMPLES) - 1


def test_more_refused_samples_than_the_fraction_stop_the_reader_naming_the_folder(tmp_path):
    write(tmp_path)
    (tmp_path / f"{stem('WSe2_2H')}.png").write_bytes(b"not a png")
    cif = tmp_path / f"{stem('BN_hex').replace('/img/', '/cif_file/')}.cif"
    cif.write_text("data_broken\n_cell_length_a 2.5\n")
    arrays, summary = read_stem2mat(tmp_path, SOURCE | {"max_bad_fraction": 2 / len(SAMPLES)}, IMAGING)
    assert summary["refused"]["refused"] == 2 and len(arrays["files"]) == len(SAMPLES) - 2
    assert summary["refused"]["reasons"] == {"not a readable CIF": 1, "not a readable image": 1}
    with pytest.raises(InputError, match=rf"^{tmp_path}: 2 of {len(SAMPLES)} samples refused.*more than the allowed"):
        read_stem2mat(tmp_path, SOURCE | {"max_bad_fraction": 0.2}, IMAGING)


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


@pytest.mark.e2e
def test_a_replaced_benchmark_image_reruns_exactly_the_automat_jobs_it_feeds(tmp_path):
    """The STEM2Mat folder at a user path (overlay after config/full.yaml) is an input of automat_data through
    its listing: in a finished run, a corrected image put in place schedules automat's jobs and nothing else."""
    import yaml
    from user_file_reruns import finished
    from workflow_tools import copy_workflow, scheduled_rules

    work = copy_workflow(tmp_path / "wf")
    bench = work / "user" / "stem2mat" / "benchmark"
    write(bench)
    overlay = {"papers": {"automat": {"source": {"path": "user/stem2mat/benchmark"}}}}
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    args = ("automat", "--configfile", "config/full.yaml", "overlay.yaml")  # --configfile takes every name after it
    finished(work, *args)
    assert scheduled_rules(work, *args) == {}
    png = bench / f"{stem('WSe2_2H')}.png"
    png16(png, np.rot90(np.asarray(Image.open(png))).astype(np.uint16))  # a corrected image: new content
    assert scheduled_rules(work, *args) == {
        "automat_data": 1,
        "automat_reconstruct": 1,
        "automat_evaluate": 1,
        "automat_figures": 1,
        "provenance": 1,
        "automat": 1,
    }
