"""Replacing one user file of a finished paper-scale run reschedules exactly the jobs it feeds (issue 28): the
VERDE release (lwe), the dSprites file (sfda-regression) and CIFAR-10 class folders (nmnc), each in the
published layout from the rehearsal's fixture writers, at user paths outside the fixture folders."""

from __future__ import annotations

import pytest
from user_file_reruns import finished
from workflow_tools import copy_workflow, scheduled_rules

from repro.fixtures import cifar10_folders, dsprites, verde

OVERLAY = """papers:
  lwe:
    source: verde
    verde_dir: data/external/verde/n256_logq20_binary
  sfda-regression:
    dsprites: {path: data/external/dsprites/dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz}
    transfers:
      dsprites_color_noisy_scale: {dataset: dsprites, source_domain: color, target_domain: noisy, factor: scale}
  nmnc:
    source: {folders: data/external/cifar10, size: [32, 32], channels: 3}
"""
TARGETS = ("lwe", "sfda_regression", "nmnc")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("reruns"))
    verde.write(work / "data/external/verde")
    dsprites.write(work / "data/external/dsprites")
    cifar10_folders.write(work / "data/external/cifar10")
    (work / "overlay.yaml").write_text(OVERLAY)
    args = (*TARGETS, "--configfile", "overlay.yaml")
    finished(work, *args)
    assert scheduled_rules(work, *args) == {}
    return work, args


def test_a_replaced_verde_file_reruns_lwe_only(run):
    work, args = run
    prefix = work / "data/external/verde/n256_logq20_binary/train.prefix"
    lines = prefix.read_text().splitlines()
    prefix.write_text("\n".join([lines[1], *lines[1:]]) + "\n")  # a corrected release: first line replaced
    assert scheduled_rules(work, *args) == {
        "lwe_data": 1,
        "lwe_train": 1,
        "lwe_evaluate": 1,
        "lwe_figures": 1,
        "provenance": 1,
        "lwe": 1,
    }
    finished(work, *args)


def test_a_replaced_dsprites_file_reruns_sfda_regression_only(run):
    import numpy as np

    work, args = run
    path = work / "data/external/dsprites" / dsprites.FILE
    with np.load(path, allow_pickle=True) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["imgs"][0] = 1 - arrays["imgs"][0]
    np.savez(path, **arrays)
    assert scheduled_rules(work, *args) == {
        "sfda_regression_train": 1,
        "sfda_regression_evaluate": 1,
        "sfda_regression_figures": 1,
        "provenance": 1,
        "sfda_regression": 1,
    }
    finished(work, *args)


def test_a_replaced_image_in_a_class_folder_reruns_nmnc_only(run):
    from PIL import Image

    work, args = run
    member = work / "data/external/cifar10/train/cat/0000.png"
    Image.new("RGB", (32, 32), (10, 20, 30)).save(member)
    assert scheduled_rules(work, *args) == {
        "nmnc_train": 1,
        "nmnc_evaluate": 1,
        "nmnc_figures": 1,
        "provenance": 1,
        "nmnc": 1,
    }
