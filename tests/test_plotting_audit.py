"""repro.reporting.plotting.save: the panel audit it writes into the PNG reads the figure as drawn."""

import json

import numpy as np
from PIL import Image

from repro.reporting.plotting import save, subplots


def test_saved_png_carries_the_audit_of_the_drawn_figure(tmp_path):
    fig, axes = subplots(1, 2)
    left, right = axes[0]
    left.plot([0, 1], [0, 1], label="ours")
    left.plot([0, 1], [1, 0], label="baseline")
    left.legend()
    left.set_ylabel("error")
    right.bar(["alpha", "beta"], [1.0, 2.0])
    path = tmp_path / "figure.png"
    save(fig, path)
    image = Image.open(path)
    left_panel, right_panel = json.loads(image.text["repro-axes"])
    assert (left_panel["labelled_series"], left_panel["legend"], left_panel["y_named"]) == (2, True, True)
    assert not left_panel["x_named"]
    # category ticks name the bar chart's x axis: they exist only once the figure is drawn
    assert right_panel["x_named"]
    assert abs(image.info["dpi"][0] - 130) < 0.01
    assert np.asarray(image).std() > 0
