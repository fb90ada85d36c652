"""View 6, "What am I looking at": the short text beside each view, and the honest note on speed for a run.

The note's numbers come from the trace: compression (tokens per step), tokens per forward, and the measured ratio of
a lookahead step's time to a greedy step's time on the device the run was recorded on.
"""

from __future__ import annotations

from statistics import mean

from lade_core import RunTrace

NOTES = {
    "outputs": "Both methods decode the same prompt greedily, so they write the **same text**. The clock counts "
               "forward passes (steps; step 0 reads the prompt). Greedy emits one token per step; lookahead "
               "emits 1 to N tokens per step. Colours alternate with the step that accepted a token; bold "
               "underlined tokens arrived several in one step. With a temperature above 0 both methods *sample* from "
               "the same distribution instead, so their texts differ in general.",
    "window": "The **lookahead branch**: N-1 levels of W guessed tokens. Each step the model reads the whole window "
              "in one forward pass and its output at the newest level is a new level (a Jacobi iteration). The "
              "oldest level drops, and each column, read top to bottom plus the new token, is an N-gram for the "
              "pool. The trajectory shows guesses for the same positions getting right before decoding gets there.",
    "pool": "The **n-gram pool** stores the window's N-grams under their first token. When the last accepted token "
            "is x, the n-grams stored under x become this step's candidates. At most G per key; the least recently "
            "used one is evicted. This view is rebuilt from the trace by replaying each step's added n-grams.",
    "verify": "The **verification branch**: each candidate is checked in the same forward pass. A guessed token is "
              "accepted while it equals what the model itself predicts there, so the output is exactly greedy "
              "decoding. The winner's matched prefix plus the model's next token (the bonus) are emitted. When "
              "sampling, a draft token is instead accepted with its probability under the model (u < p), which keeps "
              "the model's distribution exactly; the table lists every draw.",
    "mask": "One forward pass carries x, the window and the candidates, so a special **attention mask** keeps them "
            "apart: each token sees only a well-formed sequence (its own prefix). This is the exact boolean matrix "
            "the model used in this step. Hover a cell to see why it is visible or not.",
    "scaling": "**Left:** what one forward pass costs on this device as it carries more tokens, as a multiple of a "
               "greedy step. Where the line is flat (a GPU with a large model), lookahead's extra tokens are free and "
               "tokens per step become speed-up; where it climbs (a CPU), a wide window costs several greedy steps "
               "and only a small one, which costs little more than a greedy step, can come out ahead. "
               "**Right:** tokens per step over W and N with G = W on the benchmark prompts: compression grows with "
               "log(tokens per step), and a larger N pays off only with a wide window, as in the paper's Figure 5; "
               "dashed, the same with the pool seeded from the prompt's n-grams. "
               "**Auto** picks the W, N, G (and the seeding) with the best predicted tokens per second from these "
               "measurements.",
}


def tokens_per_forward_md(window: int, ngram: int, guess: int) -> str:
    """The cost of one step for these settings, shown beside the sliders."""
    return (f"**Tokens per forward:** (W+G)(N-1)+1 = ({window}+{guess})·({ngram}-1)+1 = "
            f"**{(window + guess) * (ngram - 1) + 1}**; a full match accepts up to N = {ngram} tokens per step.")


def _mean_step_s(steps) -> float:
    times = [s.forward_s + s.overhead_s for s in steps if s.kind != "prefill"]
    return mean(times) if times else 0.0


def step_time_ratio(run: RunTrace) -> float:
    """Mean lookahead step time / mean greedy step time (prefill excluded), as measured in the trace."""
    ar = _mean_step_s(run.greedy.steps)
    return _mean_step_s(run.lookahead.steps) / ar if ar > 0 else 0.0


def _plain(run: RunTrace) -> str:
    """The name of the one-token-per-step method of a run."""
    return "greedy" if run.sampling.greedy else "plain sampling"


def _sampling_note(run: RunTrace) -> str:
    """For a sampled run: why the two texts differ (empty for greedy runs, whose texts are identical)."""
    s = run.sampling
    if s.greedy:
        return ""
    return (f"**This run samples** (temperature {s.temperature:g}, top-p {s.top_p:g}, seed {s.seed}). Lookahead "
            f"and plain sampling draw from the same distribution, the model's, but not with the same random numbers, "
            f"so their texts differ in general; neither is more exact than the other. ")


def honest_note_md(run: RunTrace) -> str:
    """What the run's numbers do and do not say about speed."""
    cfg = run.config
    la, ar = run.lookahead, run.greedy
    la_s = la.forward_s + la.overhead_s
    ar_s = ar.forward_s + ar.overhead_s
    speedup = ar_s / la_s if la_s > 0 else 0.0
    return _sampling_note(run) + (
        f"**An honest note on speed.** This run ({run.model}, {run.device}, {run.dtype}; W={cfg.window}, "
        f"N={cfg.ngram}, G={cfg.guess}) has a compression of **{la.compression:.2f} tokens per step** against 1 for "
        f"{_plain(run)} ({len(la.tokens)} tokens in {len(la.steps)} vs {len(ar.steps)} steps). Compression is an "
        f"*upper "
        f"bound* on the speed-up: every lookahead step also feeds (W+G)(N-1) = {cfg.tokens_per_forward - 1} extra "
        f"tokens through the model. Here a lookahead step took on average **{step_time_ratio(run):.2f}x** as long as a "
        f"{_plain(run)} step, so the measured wall-clock ratio is {speedup:.2f}x ({_plain(run)} time / lookahead "
        f"time). Extra tokens "
        f"are nearly free only where decoding is memory-bound, e.g. a GPU with a much larger model. The paper reports "
        f"up to 1.8x on MT-bench on **one** GPU; its 4x on code completion needs strong scaling over several GPUs "
        f"(Lookahead Parallelism) and is not a single-device figure."
    )
