"""Downloads against a local HTTP server: resume with Range, checksum check, HTML rejected."""

import hashlib
import http.server
import threading
from pathlib import Path

import pandas as pd
import pytest

from repro.data.spectra.acquire import download
from repro.workflow.io import InputError


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with single-range support (the standard handler ignores Range)."""

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        if "Range" in self.headers:
            start = int(self.headers["Range"].split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.server.requests.append(self.headers.get("Range"))
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:])

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    handler = lambda *a, **k: RangeHandler(*a, directory=str(root), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    httpd.shutdown()
    httpd.server_close()


def _table(path):
    pd.DataFrame(
        {
            "smiles": ["CCO"] * 200,
            "nmr_type": ["1H NMR"] * 200,
            "nmr_shift": ["δ 1.20 (t, 3H)"] * 200,
            "nmr_solvent": ["CDCl3"] * 200,
        }
    ).to_parquet(path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_download_resumes_a_partial_file_and_records_the_manifest(server, tmp_path):
    root, url, httpd = server
    digest = _table(root / "t.parquet")
    target_dir = tmp_path / "dl"
    target_dir.mkdir()
    full = (root / "t.parquet").read_bytes()
    (target_dir / ".partial").mkdir()
    (target_dir / ".partial" / "t.parquet").write_bytes(full[:1000])
    entry = {
        "name": "t.parquet",
        "url": f"{url}/t.parquet",
        "role": "literature",
        "sha256": digest,
        "licence": "CC-BY-4.0",
    }
    record = download(entry, target_dir)
    assert (target_dir / "t.parquet").read_bytes() == full
    assert httpd.requests == ["bytes=1000-"]
    assert record["sha256"] == digest and record["bytes"] == len(full) and record["licence"] == "CC-BY-4.0"
    download(entry, target_dir)
    assert len(httpd.requests) == 1


def test_checksum_mismatch_stops_and_removes_the_partial(server, tmp_path):
    root, url, _ = server
    _table(root / "t.parquet")
    entry = {"name": "t.parquet", "url": f"{url}/t.parquet", "role": "literature", "sha256": "0" * 64, "licence": "x"}
    with pytest.raises(InputError, match="sha256"):
        download(entry, tmp_path)
    assert not (tmp_path / "t.parquet").exists() and not (tmp_path / ".partial" / "t.parquet").exists()


def test_html_instead_of_data_is_a_clear_error(server, tmp_path):
    root, url, _ = server
    (root / "page").write_text("<!DOCTYPE html><html>SourceForge download page</html>")
    entry = {"name": "nmrshiftdb2withsignals.sd", "url": f"{url}/page", "role": "labelled_sdf", "licence": "x"}
    with pytest.raises(InputError, match="HTML page"):
        download(entry, tmp_path)


def test_remote_and_local_producers_give_the_same_canonical_records(server, tmp_path, repo):
    from types import SimpleNamespace

    from test_spectra_process import SECTION, SETTINGS

    from repro.data.spectra import process, raw
    from repro.workflow.entry import Job

    root, url, _ = server
    embedded = tmp_path / "embedded_run"
    raw.main(
        Job(
            SimpleNamespace(molecules=str(repo / "resources/spectra/molecules.smi")),
            SimpleNamespace(raw=str(embedded / "raw.json")),
            SimpleNamespace(section=SECTION, raw_dir=str(embedded)),
        )
    )
    sdf, table = embedded / "embedded/nmrshiftdb2withsignals.sd", embedded / "embedded/NMRexp_synthetic.parquet"
    (root / sdf.name).write_bytes(sdf.read_bytes())
    (root / table.name).write_bytes(table.read_bytes())
    sections = {
        "remote": {
            "source": "remote",
            "remote": {
                "files": [
                    {"name": sdf.name, "url": f"{url}/{sdf.name}", "role": "labelled_sdf", "licence": "test"},
                    {"name": table.name, "url": f"{url}/{table.name}", "role": "literature", "licence": "test"},
                ]
            },
        },
        "local": {
            "source": "local",
            "local": {
                "files": [{"path": str(sdf), "role": "labelled_sdf"}, {"path": str(table), "role": "literature"}]
            },
        },
    }
    frames = {}
    for name, section in sections.items():
        out = tmp_path / name
        raw.main(
            Job(
                SimpleNamespace(molecules=None),
                SimpleNamespace(raw=str(out / "raw.json")),
                SimpleNamespace(section=section, raw_dir=str(out)),
            )
        )
        outputs = SimpleNamespace(
            labelled=str(out / "l.parquet"),
            unlabelled=str(out / "u.parquet"),
            rejections=str(out / "r.json"),
            manifest=str(out / "m.json"),
        )
        process.main(
            Job(
                SimpleNamespace(raw=str(out / "raw.json")),
                outputs,
                SimpleNamespace(settings=SETTINGS, conformer_dir=str(tmp_path / "conformers")),
            )
        )
        frames[name] = (pd.read_parquet(outputs.labelled), pd.read_parquet(outputs.unlabelled))
    for a, b in zip(frames["remote"], frames["local"]):
        assert a[["mol_id", "smiles", "nucleus", "fold"]].equals(b[["mol_id", "smiles", "nucleus", "fold"]])
        assert len(a) > 0
