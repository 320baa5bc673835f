"""The generic plot helpers the membership study added to ``report.figures``."""

import io

import numpy as np
from matplotlib.image import imread

from recprivacy.report.figures import heatmap, scatter_plot


def _image(png: bytes) -> np.ndarray:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return imread(io.BytesIO(png))


def test_heatmap_grows_with_the_matrix_and_accepts_nan():
    small = _image(heatmap([[0.5, 0.9], [0.7, float("nan")]], ["a", "b"], ["x", "y"], colorbar="ROC AUC"))
    large = _image(heatmap(np.full((9, 9), 0.8), list("abcdefghi"), list("abcdefghi"), vmin=0.5, vmax=1.0))
    assert large.shape[0] > small.shape[0] and large.shape[1] > small.shape[1]


def test_scatter_plot_draws_each_group_in_its_colour():
    img = _image(scatter_plot({"members": ([0, 1], [0, 1]), "non-members": ([1, 0], [0, 1])},
                              colors={"members": "red", "non-members": "blue"}))  # fmt: skip
    rgb = img[..., :3]
    reddish = (rgb[..., 0] > 0.8) & (rgb[..., 1] < 0.5) & (rgb[..., 2] < 0.5)
    bluish = (rgb[..., 2] > 0.8) & (rgb[..., 0] < 0.5) & (rgb[..., 1] < 0.5)
    assert reddish.any() and bluish.any()
