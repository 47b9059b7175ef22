"""The one HTTP downloader every remote producer uses (ATLAS archives, spectra files, ERA5 files).

Why our own: the files are large and cluster login nodes drop connections, so a partial file
(``.partial/<name>`` beside the destination, under its final name so content checks see its
suffix) is continued with an HTTP Range request instead of starting over; transient failures
(network errors, short reads, 5xx, 408/429) are retried with exponential back-off, while any other 4xx
answer (a 404: wrong URL) stops at once naming the URL. The sha256 is checked (and an optional content
check run) *before* the file is moved into place, so a wrong download never sits where readers look: on
a mismatch nothing is kept. Large transfers write progress lines (repro.workflow.progress) to the rule's log.
The returned record is a manifest ``files`` entry (repro.workflow.manifest) plus the URL.
"""

from __future__ import annotations

import http.client
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repro.workflow.io import InputError, sha256
from repro.workflow.progress import Progress

log = logging.getLogger(__name__)
BLOCK = 1 << 20
# Transfers at least this large (or of unknown size) log progress lines.
LARGE = 32 << 20
# 4xx answers that mean "try again later" rather than "wrong request".
RETRY_STATUS = {408, 425, 429}


class _Incomplete(OSError):
    """The connection closed before the announced length arrived (resume on the next attempt)."""


def _fetch_once(url: str, part: Path, timeout: float, every: float) -> None:
    """Append the rest of ``url`` to ``part`` (Range from its size); restart when the server ignores Range."""
    offset = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={offset}-"} if offset else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and offset:
            return  # the partial file already holds everything; the checksum decides
        raise
    with response:
        resumed = offset > 0 and response.status == 206
        length = response.headers.get("Content-Length")
        expected = int(length) + (offset if resumed else 0) if length is not None else None
        if offset and not resumed:
            log.info("%s: server ignored the Range request; starting over", url)
        progress = None
        if expected is None or expected >= LARGE:
            progress = Progress(f"download {part.name}", expected, unit="B", every=every)
            progress.done = offset if resumed else 0
        with open(part, "ab" if resumed else "wb") as handle:
            while block := response.read(BLOCK):
                handle.write(block)
                if progress is not None:
                    progress.update(len(block))
    size = part.stat().st_size
    if expected is not None and size != expected:
        raise _Incomplete(f"got {size} of {expected} bytes")


def _retryable(err: Exception) -> bool:
    if isinstance(err, urllib.error.HTTPError):
        return err.code >= 500 or err.code in RETRY_STATUS
    return isinstance(err, (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, OSError))


def download(
    url: str,
    dest: str | os.PathLike,
    *,
    sha256_expected: str | None = None,
    timeout: float = 60.0,
    retries: int = 3,
    backoff: float = 1.0,
    check: Callable[[Path], None] | None = None,
    progress_every: float = 60.0,
) -> dict[str, Any]:
    """Download ``url`` to ``dest`` (resuming a partial file) and return ``{path, url, bytes, sha256}``.

    ``sha256_expected`` (when given) and ``check`` (a content check raising InputError) are applied to
    the partial file before it is renamed to ``dest``; on failure the partial file is removed. An
    existing ``dest`` is reused when it still matches ``sha256_expected``, else fetched again.
    ``retries`` counts attempts after the first; the wait doubles from ``backoff`` seconds (at most 60).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        digest = sha256(dest)
        if sha256_expected is None or digest == sha256_expected:
            return _record(dest, url, digest)
        log.warning("%s: sha256 %s is not the expected %s; fetching again", dest, digest, sha256_expected)
        dest.unlink()
    part = partial_path(dest)
    part.parent.mkdir(exist_ok=True)
    for attempt in range(retries + 1):
        try:
            _fetch_once(url, part, timeout, progress_every)
            break
        except Exception as err:
            if not _retryable(err):
                part.unlink(missing_ok=True)
                _tidy(part)
                reason = f"HTTP {err.code} {err.reason}" if isinstance(err, urllib.error.HTTPError) else str(err)
                raise InputError(url, f"{reason} (not retried)") from err
            if attempt == retries:
                raise InputError(url, f"download failed after {retries + 1} attempts: {err}") from err
            wait = min(backoff * 2**attempt, 60.0)
            log.warning("%s: %s (attempt %d of %d); resuming in %.1f s", url, err, attempt + 1, retries + 1, wait)
            time.sleep(wait)
    digest = sha256(part)
    try:
        if sha256_expected is not None and digest != sha256_expected:
            raise InputError(url, f"sha256 {digest} does not match the expected {sha256_expected}; nothing was kept")
        if check is not None:
            check(part)
    except Exception:
        part.unlink(missing_ok=True)
        _tidy(part)
        raise
    os.replace(part, dest)
    _tidy(part)
    return _record(dest, url, digest)


def _tidy(part: Path) -> None:
    """Remove the partial-download folder once it is empty (a cache then holds finished files only)."""
    try:
        part.parent.rmdir()
    except OSError:
        pass


def partial_path(dest: str | os.PathLike) -> Path:
    """Where the partial download of ``dest`` lives until it has been verified."""
    dest = Path(dest)
    return dest.parent / ".partial" / dest.name


def _record(path: Path, url: str, digest: str) -> dict[str, Any]:
    return {"path": str(path), "url": url, "bytes": path.stat().st_size, "sha256": digest}
