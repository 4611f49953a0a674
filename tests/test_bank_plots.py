"""bank_plots.warp_lanes: 32 lanes as a 4 x 8 grid, coloured by bank or sector."""

import pytest
from matplotlib.patches import Rectangle

from atensi import bank_plots, style


def _cells(fig):
    return [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]


def test_one_cell_per_lane_coloured_by_key_and_flagged_lanes_outlined():
    keys = [lane % 4 for lane in range(32)]
    keys[5] = None
    flagged = [lane < 8 for lane in range(32)]
    fig = bank_plots.warp_lanes(keys, [f"b{k}" for k in keys], ["1", "2", "3", "4"], title="uji",
                                flagged=flagged)
    cells = _cells(fig)
    assert len(cells) == 32
    assert cells[0].get_facecolor() == cells[4].get_facecolor() != cells[1].get_facecolor()
    assert cells[5].get_facecolor()[:3] != cells[1].get_facecolor()[:3]  # idle lane: grey
    assert cells[0].get_linewidth() > cells[8].get_linewidth()
    assert style.phone_text_px(fig) >= 9


@pytest.mark.parametrize("field", ["keys", "texts", "rows"])
def test_wrong_lengths_are_refused_by_name(field):
    args = {"keys": [0] * 32, "texts": ["x"] * 32, "rows": [""] * 4}
    args[field] = args[field][:-1]
    with pytest.raises(ValueError, match=field):
        bank_plots.warp_lanes(args["keys"], args["texts"], args["rows"], title="uji")
