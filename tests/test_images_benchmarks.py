"""Full-scale benchmark readers on tiny files written in each benchmark's real layout; bad input named."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from repro.data.images import benchmarks as bm
from repro.workflow.io import InputError


def png(path, value: int, size=(6, 5)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((*size, 3), value, np.uint8)).save(path)


def test_class_folders_index_and_pixels(tmp_path):
    for split in ("train", "test"):
        for k, cls in enumerate(("cat", "airplane")):
            png(tmp_path / split / cls / f"{split}_{k}.png", 50 * k)
    index = bm.read_class_folders(tmp_path)
    assert index.classes == ["airplane", "cat"]
    assert index.labels.tolist() == [0, 1, 0, 1] and index.split.tolist() == ["train", "train", "test", "test"]
    pixels = bm.load_images(index.subset("test"), size=(4, 4))
    assert pixels.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(pixels[0], 50 / 255, atol=1e-6)  # airplane was written with value 50
    (tmp_path / "test" / "dog").mkdir()
    with pytest.raises(InputError, match="differ from train"):
        bm.read_class_folders(tmp_path)
    with pytest.raises(InputError, match="no split folder"):
        bm.read_class_folders(tmp_path / "missing")


def test_an_image_unreadable_after_indexing_is_named(tmp_path):
    png(tmp_path / "train" / "a" / "x.png", 10)
    png(tmp_path / "train" / "a" / "y.png", 20)
    index = bm.read_class_folders(tmp_path)
    (tmp_path / "train" / "a" / "x.png").write_bytes(b"not a png")  # replaced between indexing and loading
    with pytest.raises(InputError, match="x.png: cannot read the image"):
        bm.load_images(index, size=(2, 2))


def corrupt(path) -> None:
    """A PNG cut in the middle (a transfer that stopped), as a bad copy of a published image would be."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_class_folders_refuse_a_corrupt_image_and_count_it(tmp_path, caplog):
    from repro.fixtures import cifar10_folders

    total = len(cifar10_folders.write(tmp_path))
    corrupt(tmp_path / "train" / "cat" / "0003.png")
    (tmp_path / "test" / "ship" / "0001.png").write_bytes(b"not a png")
    with caplog.at_level("WARNING", logger="repro.data.refusals"):
        index = bm.read_class_folders(tmp_path, max_bad_fraction=0.05)
    assert f"2 of {total} images refused" in caplog.text and "test/ship/0001.png" in caplog.text
    assert index.refused == {
        "read": total,
        "refused": 2,
        "refused_fraction": 2 / total,
        "first_refused": ["train/cat/0003.png", "test/ship/0001.png"],
        "reasons": {"corrupt or truncated image": 1, "not an image Pillow identifies": 1},
    }
    assert len(index.paths) == total - 2 and "train/cat/0003.png" not in set(index.paths)
    per_class = cifar10_folders.PER_SPLIT["train"]
    assert np.bincount(index.subset("train").labels).tolist() == [per_class - (c == "cat") for c in index.classes]
    assert index.subset("test").refused == index.refused
    pixels = bm.load_images(index, size=(32, 32))  # every image kept decodes
    assert pixels.shape == (total - 2, 3, 32, 32) and np.isfinite(pixels).all()


def test_class_folders_with_more_refused_than_the_fraction_name_the_folder(tmp_path):
    from repro.fixtures import cifar10_folders

    total = len(cifar10_folders.write(tmp_path))
    for name in ("0000.png", "0001.png", "0002.png"):
        corrupt(tmp_path / "val" / "dog" / name)
    bm.read_class_folders(tmp_path, max_bad_fraction=3 / total)  # at the bound: read
    with pytest.raises(InputError, match=rf"^{tmp_path}: 3 of {total} images refused: .*more than the allowed"):
        bm.read_class_folders(tmp_path, max_bad_fraction=2 / total)
    with pytest.raises(InputError, match="val/dog/0000.png"):
        bm.read_class_folders(tmp_path)


def test_waterbirds_groups(tmp_path):
    (tmp_path / "metadata.csv").write_text(
        "img_id,img_filename,y,split,place,place_filename\n"
        "1,001.Black_footed_Albatross/a.jpg,1,0,1,/o/ocean/x.jpg\n"
        "2,002.Laysan_Albatross/b.jpg,1,2,0,/f/forest/y.jpg\n"
        "3,003.Sooty_Albatross/c.jpg,0,1,0,/f/forest/z.jpg\n"
    )
    index = bm.read_waterbirds(tmp_path)
    assert index.attributes["group"].tolist() == [3, 2, 0]
    assert index.split.tolist() == ["train", "test", "val"]
    (tmp_path / "metadata.csv").write_text("img_id,img_filename,y,split,place\n1,a.jpg,1,3,1\n")
    with pytest.raises(InputError, match="metadata.csv: split codes"):
        bm.read_waterbirds(tmp_path)


def test_celeba_target_and_spurious(tmp_path):
    (tmp_path / "list_attr_celeba.csv").write_text(
        "image_id,Blond_Hair,Male,Smiling\n000001.jpg,1,-1,1\n000002.jpg,-1,1,1\n000003.jpg,1,1,-1\n"
    )
    (tmp_path / "list_eval_partition.csv").write_text("image_id,partition\n000001.jpg,0\n000002.jpg,1\n000003.jpg,2\n")
    index = bm.read_celeba(tmp_path)
    assert index.labels.tolist() == [1, 0, 1] and index.attributes["group"].tolist() == [2, 1, 3]
    assert index.paths[0] == "img_align_celeba/000001.jpg"
    (tmp_path / "list_eval_partition.csv").write_text("image_id,partition\n000001.jpg,0\n")
    with pytest.raises(InputError, match="list_eval_partition.csv: no partition for image 000002.jpg"):
        bm.read_celeba(tmp_path)
    with pytest.raises(InputError, match="lacks columns"):
        bm.read_celeba(tmp_path, target="Bald")


def test_domainnet_lists(tmp_path):
    for domain in ("clipart", "sketch"):
        for split in ("train", "test"):
            (tmp_path / f"{domain}_{split}.txt").write_text(
                f"{domain}/aircraft_carrier/{domain}_001.jpg 0\n{domain}/zebra/{domain}_002.jpg 1\n"
            )
    index = bm.read_domainnet(tmp_path, ["clipart", "sketch"])
    assert index.classes == ["aircraft_carrier", "zebra"]
    assert index.attributes["domain"].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    (tmp_path / "sketch_test.txt").write_text("sketch/zebra/x.jpg zebra\n")
    with pytest.raises(InputError, match="sketch_test.txt: line 1"):
        bm.read_domainnet(tmp_path, ["clipart", "sketch"])
    with pytest.raises(InputError, match="real_train.txt"):
        bm.read_domainnet(tmp_path, ["real"])
