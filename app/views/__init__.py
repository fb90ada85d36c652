"""Pure views of a recorded run: each is `*_figure(run, k) -> plotly Figure` or `*_html(run, k) -> str`.

`k` is the step on the shared step clock (step 0 is the prompt prefill of both methods). Views read a `RunTrace`
and nothing else: no torch, no model. A step past the end of one method shows that method finished.
"""

from .mask import mask_figure
from .notes import NOTES, honest_note_md, tokens_per_forward_md
from .outputs import ar_output_html, counter_html, counter_text, la_output_html, progress_figure
from .pool import pool_at, pool_html, pool_size_figure
from .scaling import cost_curve_figure, load_measurement, sweep_figure
from .verify import verify_html
from .window import trajectory_html, window_html

__all__ = [
    "mask_figure", "NOTES", "honest_note_md", "tokens_per_forward_md", "ar_output_html", "counter_html",
    "counter_text", "la_output_html", "progress_figure", "pool_at", "pool_html", "pool_size_figure", "verify_html",
    "trajectory_html", "window_html", "cost_curve_figure", "load_measurement", "sweep_figure",
]
