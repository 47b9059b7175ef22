"""repro.workflow.download against a local HTTP server on 127.0.0.1 (never the network), and repro.workflow.manifest."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from repro.workflow import download as dl
from repro.workflow.download import download, partial_path
from repro.workflow.io import InputError
from repro.workflow.manifest import ManifestError, file_record, validate, write_manifest

BODY = bytes(range(256)) * 4096  # 1 MiB


class Handler(BaseHTTPRequestHandler):
    """Serves BODY at /data with Range support; behaviours per path for the failure cases."""

    log: list[tuple[str, str | None]] = []
    cut_once = True  # /cut: the first answer stops half way (connection dropped)
    fail_once = True  # /flaky: the first answer is a 503

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        Handler.log.append((self.path, self.headers.get("Range")))
        if self.path == "/missing":
            self.send_error(404, "Not Found")
            return
        if self.path == "/flaky" and Handler.fail_once:
            Handler.fail_once = False
            self.send_error(503, "Busy")
            return
        if self.path == "/slow":
            time.sleep(1.0)
        start = 0
        rng = self.headers.get("Range")
        if rng and self.path != "/norange":
            start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(BODY) - 1}/{len(BODY)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(BODY) - start))
        self.end_headers()
        if self.path == "/cut" and Handler.cut_once:
            Handler.cut_once = False
            self.wfile.write(BODY[start : start + len(BODY) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(BODY[start:])


@pytest.fixture
def server():
    Handler.log = []
    Handler.cut_once = Handler.fail_once = True
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


DIGEST = hashlib.sha256(BODY).hexdigest()


def test_interrupted_transfer_resumes_with_a_range_request(server, tmp_path):
    dest = tmp_path / "data.bin"
    record = download(f"{server}/cut", dest, sha256_expected=DIGEST, retries=2, backoff=0)
    assert dest.read_bytes() == BODY
    assert Handler.log == [("/cut", None), ("/cut", f"bytes={len(BODY) // 2}-")]
    assert record == {"path": str(dest), "url": f"{server}/cut", "bytes": len(BODY), "sha256": DIGEST}
    assert not partial_path(dest).parent.exists(), "the partial folder is removed once empty"


def test_a_partial_file_left_by_a_killed_run_is_continued(server, tmp_path):
    dest = tmp_path / "data.bin"
    partial_path(dest).parent.mkdir()
    partial_path(dest).write_bytes(BODY[:1000])
    download(f"{server}/data", dest, sha256_expected=DIGEST, retries=0)
    assert Handler.log == [("/data", "bytes=1000-")] and dest.read_bytes() == BODY


def test_a_server_ignoring_range_restarts_the_file(server, tmp_path):
    dest = tmp_path / "data.bin"
    partial_path(dest).parent.mkdir()
    partial_path(dest).write_bytes(b"stale bytes")
    download(f"{server}/norange", dest, sha256_expected=DIGEST, retries=0)
    assert dest.read_bytes() == BODY


def test_bad_sha256_leaves_nothing(server, tmp_path):
    dest = tmp_path / "data.bin"
    with pytest.raises(InputError, match=r"/data: sha256 [0-9a-f]{64} does not match the expected 0{64}"):
        download(f"{server}/data", dest, sha256_expected="0" * 64, retries=0)
    assert not dest.exists() and not partial_path(dest).exists()


def test_failed_content_check_leaves_nothing(server, tmp_path):
    def refuse(path):
        raise InputError(path, "not the expected format")

    dest = tmp_path / "data.bin"
    with pytest.raises(InputError, match="not the expected format"):
        download(f"{server}/data", dest, check=refuse, retries=0)
    assert not dest.exists() and not partial_path(dest).exists()


def test_404_is_named_and_not_retried(server, tmp_path):
    with pytest.raises(InputError, match=r"/missing: HTTP 404 Not Found \(not retried\)"):
        download(f"{server}/missing", tmp_path / "x", retries=3, backoff=0)
    assert Handler.log == [("/missing", None)]
    assert not (tmp_path / "x").exists()


def test_server_errors_are_retried(server, tmp_path):
    download(f"{server}/flaky", tmp_path / "x", sha256_expected=DIGEST, retries=1, backoff=0)
    assert [p for p, _ in Handler.log] == ["/flaky", "/flaky"]


def test_timeouts_are_retried_then_named(server, tmp_path):
    with pytest.raises(InputError, match=r"/slow: download failed after 2 attempts"):
        download(f"{server}/slow", tmp_path / "x", timeout=0.2, retries=1, backoff=0)
    assert len(Handler.log) == 2


def test_a_verified_file_is_not_fetched_again_and_a_stale_one_is(server, tmp_path):
    dest = tmp_path / "data.bin"
    download(f"{server}/data", dest, sha256_expected=DIGEST)
    download(f"{server}/data", dest, sha256_expected=DIGEST)
    assert len(Handler.log) == 1
    dest.write_bytes(b"corrupted")
    download(f"{server}/data", dest, sha256_expected=DIGEST)
    assert len(Handler.log) == 2 and dest.read_bytes() == BODY


def test_large_transfers_log_progress(server, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(dl, "LARGE", 1000)
    with caplog.at_level(logging.INFO, logger="repro.workflow.progress"):
        download(f"{server}/data", tmp_path / "data.bin", progress_every=0)
    lines = [r.getMessage() for r in caplog.records if r.name == "repro.workflow.progress"]
    assert lines and lines[-1].startswith(f"download data.bin: {len(BODY)}/{len(BODY)} B")


# repro.workflow.manifest ----------------------------------------------------------------------------------


def _manifest(tmp_path, **over):
    (tmp_path / "a.bin").write_bytes(b"abc")
    fields = {
        "source": "remote",
        "producer": "repro.data.demo",
        "files": [file_record(tmp_path / "a.bin", tmp_path, url="http://127.0.0.1/a.bin")],
        "licence": "CC-BY-4.0",
        "settings": {"n": 3},
        "packages": ["numpy"],
    }
    return write_manifest(tmp_path / "manifest.json", **(fields | over))


def test_manifest_has_the_schema_fields_and_is_deterministic(tmp_path):
    doc = _manifest(tmp_path)
    first = (tmp_path / "manifest.json").read_bytes()
    assert json.loads(first) == doc
    assert doc["files"] == [
        {"path": "a.bin", "bytes": 3, "sha256": hashlib.sha256(b"abc").hexdigest(), "url": "http://127.0.0.1/a.bin"}
    ]
    assert set(doc) == {"source", "producer", "files", "licence", "settings", "versions"}
    assert doc["versions"]["numpy"]
    _manifest(tmp_path)
    assert (tmp_path / "manifest.json").read_bytes() == first, "two identical runs write the same manifest"


def test_directory_stores_are_recorded_with_their_total_size(tmp_path):
    store = tmp_path / "x.zarr"
    (store / "c").mkdir(parents=True)
    (store / "c" / "0").write_bytes(b"12345")
    (store / "zarr.json").write_bytes(b"{}")
    assert file_record(store, tmp_path)["bytes"] == 7 and file_record(store, tmp_path)["path"] == "x.zarr"


@pytest.mark.parametrize(
    "change,message",
    [
        ({"licence": ""}, "licence: '' should be non-empty"),
        ({"files": [{"path": "a", "bytes": 1}]}, "files.0: 'sha256' is a required property"),
        ({"details": {"retrieved": "2026-01-01T00:00:00"}}, "details.retrieved: wall-clock timestamps"),
        ({"extra": 1}, "Additional properties are not allowed ('extra'"),
    ],
)
def test_bad_manifest_is_refused_naming_the_field(change, message):
    doc = {"source": "s", "producer": "p", "files": [], "licence": "l", "settings": {}, "versions": {}} | change
    with pytest.raises(ManifestError, match=message.replace("(", r"\(")):
        validate(doc)
