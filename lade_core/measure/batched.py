"""The batched cost curve: one forward of B sequences at once, each feeding n tokens over its own cached prefix.

This is what serving many users asks of lookahead: a step feeds B times the tokens of one sequence, the weights
are still read once, and the arithmetic grows B-fold, so extra tokens that were nearly free at B = 1 stop being
free as B grows. The engine's adapter (`LM`) decodes one sequence; these forwards go straight to the model through
its public forward (input ids of shape (B, n), explicit positions, a 4D mask from the same `StepLayout` the engine
uses, a `DynamicCache` holding B copies of the prefix, cropped back after each forward), so they measure the
cost, not an engine: nothing is decoded or verified. Each round times every (B, n) once, in turn, after a warm-up;
points keep the median and quartiles. Left out: sequences of different lengths in one batch, and padding.
"""

from __future__ import annotations

from .costcurve import check_clock, header, interleaved_samples, summarise

BATCHES = (1, 2, 4, 8)
SIZES = (1, 2, 4, 8, 16, 32, 64)


def _forward(lm, cache, prefix: int, batch: int, n: int):
    """A function that runs one forward of `batch` sequences of `n` tokens on `cache` and crops it back."""
    import torch

    from ..layout import StepLayout

    ids = torch.tensor([[(13 * i + 7 * b) % 1000 + 10 for i in range(n)] for b in range(batch)], device=lm.device)
    if n == 1:  # a greedy step: one token at the next position, no mask (as `LM.decode_one` feeds it)
        kwargs = {"position_ids": torch.full((batch, 1), prefix, device=lm.device), "logits_to_keep": 1}
    else:
        layout = StepLayout.plain(levels=1, window=n - 1, candidates=0, cand_len=0)
        visible = torch.from_numpy(layout.mask()).to(lm.device)
        block = torch.zeros(visible.shape, dtype=lm.dtype, device=lm.device).masked_fill_(
            ~visible, torch.finfo(lm.dtype).min
        )
        mask = torch.cat([torch.zeros(n, prefix, dtype=lm.dtype, device=lm.device), block], dim=1)
        positions = torch.from_numpy(layout.positions()).to(lm.device) + prefix
        kwargs = {
            "position_ids": positions.expand(batch, n),
            "attention_mask": mask.expand(batch, 1, n, prefix + n),
            "logits_to_keep": torch.tensor(layout.logit_rows(), device=lm.device),
        }

    def run():
        lm.use_width(batch * n)
        with torch.inference_mode():
            lm.model(input_ids=ids, cache=cache, use_cache=True, **kwargs)
        lm.sync()
        cache.crop(-n)

    return run


def measure_batched_curve(
    lm, batches=BATCHES, sizes=SIZES, prefix: int = 100, repeats: int = 7, clock: str = "wall"
) -> dict:
    """Seconds of a forward of B sequences x n tokens for every B in `batches` and n in `sizes` (1 included),
    interleaved, on `clock` (`costcurve.interleaved_samples`); per B, `relative` is each point against that B's
    one-token forward."""
    import torch

    check_clock(clock)
    sizes = sorted({1, *sizes})
    caches, fns = {}, {}
    for b in batches:
        caches[b] = lm.new_cache()
        lm.use_width(b * prefix)
        with torch.inference_mode():
            lm.model(
                input_ids=torch.tensor([[(7 * i) % 1000 + 10 for i in range(prefix)]] * b, device=lm.device),
                cache=caches[b],
                use_cache=True,
                logits_to_keep=1,
            )
        fns.update({(b, n): _forward(lm, caches[b], prefix, b, n) for n in sizes})
    samples = interleaved_samples(fns, repeats, clock)
    curves = []
    for b in batches:
        points = [{"tokens": n, **summarise(samples[(b, n)])} for n in sizes]
        one = points[0]["seconds"]
        curves.append({"batch": b, "greedy_s": one, "points": [{**p, "relative": p["seconds"] / one} for p in points]})
    return {
        **header(lm, prefix),
        "repeats": repeats,
        "clock": clock,
        "batches": list(batches),
        "curves": curves,
        "greedy_s_batch_1": curves[0]["greedy_s"] if batches[0] == 1 else None,
    }
