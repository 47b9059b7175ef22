"""ACS-style peak lists: round trips, and every kind of malformed text rejected with its reason."""

import numpy as np
import pytest

from repro.data.spectra.literature import parse_carbon_text, parse_proton_text, render_carbon_text, render_proton_text
from repro.data.spectra.molecules import Rejected


def test_proton_round_trip_expands_integrations_and_takes_range_midpoints():
    peaks = [(7.26, 2, "d"), (3.81, 3, "s"), (1.25, 3, "t"), (7.10, 1, "m")]
    text = render_proton_text(peaks, as_range=[True, False, True, False])
    expected = np.sort(np.repeat([p[0] for p in peaks], [p[1] for p in peaks]))
    np.testing.assert_allclose(parse_proton_text(text), expected, atol=1e-9)


def test_carbon_round_trip_one_value_per_peak():
    values = [170.1, 128.5, 128.5, 77.2, 14.1]
    np.testing.assert_allclose(parse_carbon_text(render_carbon_text(values)), sorted(values))


def test_real_style_header_and_ascending_lists_are_accepted():
    got = parse_proton_text("1H NMR (400 MHz, CDCl3) δ 7.30 – 7.24 (m, 2H), 3.81 (s, 3H).")
    np.testing.assert_allclose(got, [3.81, 3.81, 3.81, 7.27, 7.27])
    np.testing.assert_allclose(parse_carbon_text("δ 14.1, 60.3, 171.0"), [14.1, 60.3, 171.0])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("δ 3.81 (s, 3H), 7.20 (s, 1H), 1.00 (s, 1H)", "not_monotone"),
        ("δ 16.20 (s, 1H), 3.00 (s, 3H)", "out_of_range"),
        ("δ 7.90–7.20 (m, 5H)", "broad_range"),
        ("δ 7.20 (s), 3.00 (s, 3H)", "unparsable_text"),
        ("δ 7.20 (s, 1H), see SI", "unparsable_text"),
        ("δ 7.20 (s, 1H", "unparsable_text"),
        ("", "unparsable_text"),
    ],
)
def test_malformed_proton_text_is_rejected_with_reason(text, reason):
    with pytest.raises(Rejected) as err:
        parse_proton_text(text, h_gap=0.2)
    assert err.value.reason == reason


def test_h_gap_is_the_threshold():
    text = "δ 7.40–7.10 (m, 5H)"
    with pytest.raises(Rejected):
        parse_proton_text(text, h_gap=0.2)
    np.testing.assert_allclose(parse_proton_text(text, h_gap=0.5), [7.25] * 5)


@pytest.mark.parametrize(
    ("text", "reason"),
    [("δ 260.0, 128.0", "out_of_range"), ("δ 128.0, 170.0, 20.0", "not_monotone"), ("δ 128.0, abc", "unparsable_text")],
)
def test_malformed_carbon_text_is_rejected_with_reason(text, reason):
    with pytest.raises(Rejected) as err:
        parse_carbon_text(text)
    assert err.value.reason == reason


def test_range_midpoint_tied_with_next_peak_stays_monotone():
    got = parse_proton_text("δ 8.58–8.54 (q, J = 7.2 Hz, 1H), 8.56 (m, 2H), 7.58 (s, 3H)")
    np.testing.assert_allclose(got, [7.58] * 3 + [8.56] * 3)
