"""Progress lines: the rate and ETA of a resumed run count only what this process did."""

from repro.workflow.progress import Progress


def test_resumed_units_are_shown_but_not_counted_in_the_rate():
    p = Progress("train", total=10, unit="epochs", initial=6)
    p.start = 100.0
    p.update(2)
    assert p.rate(now=104.0) == 0.5  # 2 epochs in this process over 4 s, not 8 over 4 s
    line = p.line(now=104.0)
    assert line.startswith("train: 8/10 epochs") and "ETA 0:00:04" in line
