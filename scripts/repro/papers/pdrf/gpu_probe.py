"""PDRF's training step at paper scale for benchmarks/gpu.py: SEVIR VIL nowcasting at the section's resolution.

The data-parameterised rectified flow with the deterministic teacher term (the method's own loss), frames in
and out as the section's radar settings give them.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

BATCH_SIZE = 8
STAGE = "train"  # one job (workflow/rules/pdrf.smk): every variant x seed, then the test forecasts

# SEVIR VIL storm events per half-year file (SEVIR_VIL_STORMEVENTS_<year>_<MMDD>_<MMDD>.h5), the user's
# download, no config key: an estimate. The six 2017-2019 STORMEVENTS VIL files hold 3,910 events (the
# catalog's VIL rows of those files, as a public recipe that checks every file's ``id`` against it counts
# them), 193 of them in 2017 H1 (the GOES-16 era starts mid-June 2017); the other five half-years taken as
# equal: (3,910 - 193) / 5.
SEVIR_EVENTS_PER_FILE = 743
SEVIR_FRAMES = 49  # frames of a SEVIR event (repro.data.fields.sevir.FRAMES)
_SPAN = re.compile(r"_(\d{4})_(\d{2})(\d{2})_(\d{2})(\d{2})\.h5$")


def build(section: dict, device, resolution: int | None = None):
    """(model, batch(size), loss) of one PDRF step; ``resolution`` defaults to the section's radar resolution."""
    import torch

    from repro.papers.pdrf.train import Nowcaster, loss_fn

    radar, cfg = section["radar"], section["model"]
    n = resolution or radar["resolution"]
    frames_in, frames_out = radar["frames_in"], radar["frames_out"]
    model = Nowcaster("data", frames_in, frames_out, cfg["width"], cfg["levels"]).to(device)
    teacher = section["variants"]["pdrf"]["teacher"]

    def batch(size: int):
        """(sequences of frames_in + frames_out frames, the teacher's coarse target) on the 0-255 scale."""
        return (
            255 * torch.rand(size, frames_in + frames_out, n, n, device=device),
            255 * torch.rand(size, frames_out, n // 4, n // 4, device=device),
        )

    def loss(net, b):
        return loss_fn(net, b, teacher)

    return model, batch, loss


def sevir_train_events(sevir: dict) -> float:
    """Training events of the SEVIR selection, estimated: per listed file :data:`SEVIR_EVENTS_PER_FILE` x the
    share of the file's dates (from its name) inside ``windows.train`` [start, end); ``event_types`` and refused
    events are not counted off."""
    lo, hi = (date.fromisoformat(str(d)[:10]) for d in sevir["windows"]["train"])
    events = 0.0
    for path in sevir["files"]:
        span = _SPAN.search(str(path))
        if span is None:
            raise ValueError(f"{path}: not a SEVIR half-year file name (<year>_<MMDD>_<MMDD>.h5)")
        year, m0, d0, m1, d1 = (int(g) for g in span.groups())
        start, end = date(year, m0, d0), date(year, m1, d1) + timedelta(days=1)
        inside = (min(end, hi) - max(start, lo)).days
        events += SEVIR_EVENTS_PER_FILE * max(inside, 0) / (end - start).days
    return events


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of the one train job, in the probe's steps (PDRF's, one training sequence each):
    ``train.epochs`` x the training sequences x the runs, one per ``variants`` entry x ``seeds`` (the first
    seed only for a variant with ``seeded: false``). Training sequences: SEVIR, the training events
    (:func:`sevir_train_events`) x the windows of ``frames_in`` + ``frames_out`` frames every ``stride`` of an
    event's 49; the simulator, ``n_train`` (one window each). Every run's step counts as the probe's: the
    velocity and teacher-free variants differ only in the loss, a deterministic one has ``frames_out`` + 1
    fewer input channels. Batch ``train.batch``. Left out: the test forecasts (``sampling.nfe`` forward passes
    per test sequence and run, the NFE sweep for one run), forward only."""
    radar, t = section["radar"], section["train"]
    length = radar["frames_in"] + radar["frames_out"]
    if radar["source"] == "sevir":
        windows = len(range(0, SEVIR_FRAMES - length + 1, radar["stride"]))
        sequences = sevir_train_events(radar["sevir"]) * windows
    elif radar["source"] == "simulator":
        sequences = radar["n_train"]
    else:
        raise ValueError(f"pdrf: no work model for radar source {radar['source']!r} (its files set the size)")
    seeds = len(section["seeds"])
    runs = sum(seeds if v.get("seeded", True) else 1 for v in section["variants"].values())
    return int(round(t["epochs"] * sequences * runs)), int(t["batch"])
