"""ATLAS acquisition against a local HTTP server serving ATLAS-shaped archives (no internet)."""

from __future__ import annotations

import hashlib
import http.server
import threading
import zipfile

import pytest

from repro.data.atlas.embedded import build_embedded
from repro.data.atlas.preprocess import process_protein
from repro.data.atlas.remote import archive_url, download, fetch_chain
from repro.workflow.io import InputError


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``files`` (path -> bytes) with HTTP Range support and records the Range headers seen."""

    files: dict[str, bytes] = {}
    ranges: list[str | None] = []

    def do_GET(self):  # noqa: N802
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        header = self.headers.get("Range")
        self.ranges.append(header)
        start = int(header.split("=")[1].split("-")[0]) if header else 0
        self.send_response(206 if header else 200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        self.wfile.write(body[start:])

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    build_embedded(root)
    files = {}
    # older naming, protein archive
    files["/ATLAS/cobrotoxin/cobrotoxin_protein.zip"] = _zip(
        {
            "cobrotoxin.pdb": (root / "cobrotoxin" / "cobrotoxin.pdb").read_bytes(),
            "cobrotoxin_prod_R1_fit.xtc": (root / "cobrotoxin" / "cobrotoxin_prod_R1_fit.xtc").read_bytes(),
            "README.txt": b"ATLAS-shaped test archive",
        }
    )
    # current naming in a sub-folder, analysis archive
    files["/ATLAS/cobro2/cobro2_analysis.zip"] = _zip(
        {
            "cobro2/cobro2.pdb": (root / "cobrotoxin" / "cobrotoxin.pdb").read_bytes(),
            "cobro2/cobro2_R1.xtc": (root / "cobrotoxin" / "cobrotoxin_prod_R1_fit.xtc").read_bytes(),
            "cobro2/cobro2_RMSF.tsv": b"res\trmsf\n",
        }
    )
    files["/ATLAS/norep/norep_protein.zip"] = _zip({"norep_R1.xtc": b"x"})
    good = files["/ATLAS/cobrotoxin/cobrotoxin_protein.zip"]
    files["/ATLAS/corrupt/corrupt_protein.zip"] = good[:200] + b"\0" * 500 + good[700:]
    RangeHandler.files = files
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/ATLAS", files
    httpd.shutdown()


def _zip(members: dict[str, bytes]) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_url_pattern():
    assert archive_url("https://x/ATLAS/", "6o2v_A", "protein") == "https://x/ATLAS/6o2v_A/6o2v_A_protein.zip"


def test_download_extract_and_preprocess(server, tmp_path):
    base, files = server
    record = fetch_chain(base, "cobrotoxin", "protein", tmp_path / "cache", tmp_path / "raw", [1], 10, 1, {})
    body = files["/ATLAS/cobrotoxin/cobrotoxin_protein.zip"]
    assert record["sha256"] == hashlib.sha256(body).hexdigest() and record["bytes"] == len(body)
    assert sorted(p.name for p in (tmp_path / "raw" / "cobrotoxin").iterdir()) == [
        "cobrotoxin.pdb",
        "cobrotoxin_prod_R1_fit.xtc",
    ]
    rows = process_protein(tmp_path / "raw", "cobrotoxin", tmp_path / "out", stride=1, replicates=[1])
    assert rows[0]["n_frames"] == 3 and rows[0]["n_res"] == 62


def test_current_naming_in_analysis_archive(server, tmp_path):
    base, _ = server
    record = fetch_chain(base, "cobro2", "analysis", tmp_path / "cache", tmp_path / "raw", [1], 10, 1, {})
    assert record["files"] == ["cobro2.pdb", "cobro2_R1.xtc"]


def test_partial_download_resumes_with_range(server, tmp_path):
    base, files = server
    body = files["/ATLAS/cobrotoxin/cobrotoxin_protein.zip"]
    dest = tmp_path / "cobrotoxin_protein.zip"
    (tmp_path / ".partial").mkdir()
    (tmp_path / ".partial" / "cobrotoxin_protein.zip").write_bytes(body[:1000])
    RangeHandler.ranges.clear()
    record = download(
        archive_url(base, "cobrotoxin", "protein"), dest, "cobrotoxin", 10, 0, sha256=hashlib.sha256(body).hexdigest()
    )
    assert RangeHandler.ranges == ["bytes=1000-"]
    assert dest.read_bytes() == body and record["bytes"] == len(body)
    assert not (tmp_path / ".partial").exists()


def test_checksum_mismatch_is_refused_and_removed(server, tmp_path):
    base, _ = server
    dest = tmp_path / "c.zip"
    with pytest.raises(InputError, match="sha256"):
        download(archive_url(base, "cobrotoxin", "protein"), dest, "cobrotoxin", 10, 0, sha256="0" * 64)
    assert not dest.exists()


def test_corrupt_archive_names_protein_and_leaves_nothing(server, tmp_path):
    base, _ = server
    with pytest.raises(InputError, match="protein corrupt") as err:
        fetch_chain(base, "corrupt", "protein", tmp_path / "cache", tmp_path / "raw", [1], 10, 0, {})
    assert "corrupt_protein.zip" in str(err.value)
    assert not (tmp_path / "raw" / "corrupt").exists()
    assert not list((tmp_path / "cache").iterdir())


def test_missing_replicate_in_archive(server, tmp_path):
    base, _ = server
    with pytest.raises(InputError, match="protein cobrotoxin: replicate R2 missing") as err:
        fetch_chain(base, "cobrotoxin", "protein", tmp_path / "cache", tmp_path / "raw", [1, 2], 10, 0, {})
    assert "cobrotoxin_prod_R2_fit.xtc" in str(err.value)
    assert not (tmp_path / "raw" / "cobrotoxin").exists()


def test_missing_topology_and_http_404(server, tmp_path):
    base, _ = server
    with pytest.raises(InputError, match="archive has no norep.pdb"):
        fetch_chain(base, "norep", "protein", tmp_path / "cache", tmp_path / "raw", [1], 10, 0, {})
    with pytest.raises(InputError, match="protein absent: HTTP 404"):
        fetch_chain(base, "absent", "protein", tmp_path / "cache", tmp_path / "raw", [1], 10, 0, {})


def test_download_rule_then_preprocessing_rule_with_a_bad_chain(server, tmp_path):
    """The two rule entries end to end: one good chain, one corrupt; `skip` keeps the good one."""
    from types import SimpleNamespace

    import pandas as pd

    from repro.data.atlas import build, remote
    from repro.workflow.entry import Job
    from repro.workflow.io import read_json

    base, _ = server
    splits = tmp_path / "resources"
    splits.mkdir()
    pd.DataFrame({"name": ["cobrotoxin", "corrupt"]}).to_csv(splits / "atlas_test.csv", index=False)
    pd.DataFrame({"name": []}).to_csv(splits / "atlas_val.csv", index=False)
    section = {
        "source": "remote",
        "stride": 1,
        "workers": 1,
        "on_error": "skip",
        "remote": {
            "base_url": base,
            "archive": "protein",
            "splits": ["test"],
            "replicates": [1],
            "timeout_s": 10,
            "retries": 0,
        },
    }
    raw, entries = tmp_path / "raw", tmp_path / "entries.json"
    remote.main(
        Job(
            input=SimpleNamespace(splits=[str(splits / "atlas_val.csv"), str(splits / "atlas_test.csv")]),
            output=SimpleNamespace(raw=str(raw), entries=str(entries)),
            params=SimpleNamespace(section=section, cache=str(tmp_path / "cache")),
        )
    )
    got = read_json(entries)
    assert list(got["replicates"]) == ["cobrotoxin"] and "corrupt" in got["failed"]
    assert got["splits"]["test"] == ["cobrotoxin"] and got["expected_frames"] == 10000
    assert sorted(p.name for p in raw.iterdir()) == ["cobrotoxin"]
    # the protein archive promises 10,000 frames; the 3-frame test archive is reported as truncated
    out = tmp_path / "data"
    job = Job(
        input=SimpleNamespace(raw=str(raw), entries=str(entries)),
        output=SimpleNamespace(
            processed=str(out / "processed"),
            meta=str(out / "meta.parquet"),
            splits=str(out / "splits"),
            manifest=str(out / "manifest.json"),
        ),
        params=SimpleNamespace(section={**section, "on_error": "fail"}),
        threads=1,
    )
    with pytest.raises(InputError, match="cobrotoxin_prod_R1_fit.xtc: protein cobrotoxin: 3 frames .* truncated"):
        build.main(job)
    assert not (out / "meta.parquet").exists()
    got["expected_frames"] = 3
    entries.write_text(__import__("json").dumps(got))
    build.main(job)
    meta = pd.read_parquet(out / "meta.parquet")
    assert list(meta["name"]) == ["cobrotoxin"] and meta["dt_ps"].iloc[0] == 10.0
    assert list(pd.read_csv(out / "splits" / "atlas_test.csv")["name"]) == ["cobrotoxin"]
    manifest = read_json(out / "manifest.json")
    inputs = {f["path"] for f in manifest["files"] if f["role"] == "input"}
    assert inputs == {"cobrotoxin/cobrotoxin.pdb", "cobrotoxin/cobrotoxin_prod_R1_fit.xtc"}
    assert all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in manifest["files"])
