"""Numerics: does lookahead write greedy's tokens in this dtype, and where it does not, is the algorithm to blame?

Per prompt, in one dtype, three decodings of the same request:
    1. greedy decoding, one token per forward, with the model's top-two logit gap recorded at every position;
    2. lookahead decoding (7/4/7 by default) against it: identical or not, the first divergent position, the gap
       greedy saw there, and both texts from there on;
    3. greedy against itself with another batch shape: greedy's own output fed back in one causal forward
       (teacher-forced, as a prefill would), its argmax at every position set against the token greedy chose one
       position at a time. No algorithm differs here, only how many tokens one forward carries.
In exact arithmetic all three agree. In bf16 or fp16 a wider forward sums in another order and rounds otherwise,
so where the two top logits are within rounding of each other the argmax can flip; if (3) flips too, and at a small
gap, the divergence in (2) is arithmetic, not the algorithm.

Left out: sampling (exactness there is about distributions, not draws), GPU kernels (they round otherwise again),
and timing beyond a per-token figure that says whether a dtype is usable on this CPU at all.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

from ..config import LookaheadConfig
from ..machine import identity
from .bench import first_divergence


def greedy_with_gaps(lm, prompt_ids: list[int], max_new_tokens: int) -> tuple[list[int], list[float]]:
    """Greedy tokens through the adapter's own prefill and one-token steps (the calls greedy.py makes), stopping
    at EOS (kept) or the budget, with top-1 minus top-2 logit at each new position."""
    import torch

    cache, tokens, gaps = lm.new_cache(), [], []
    logits = lm.prefill(cache, list(prompt_ids))
    while True:
        top = torch.topk(logits, 2)
        tokens.append(int(top.indices[0]))
        gaps.append(float(top.values[0] - top.values[1]))
        if tokens[-1] in lm.eos_ids or len(tokens) >= max_new_tokens:
            return tokens, gaps
        logits = lm.decode_one(cache, tokens[-1], len(prompt_ids) + len(tokens) - 1)


def teacher_forced(lm, prompt_ids: list[int], tokens: list[int]) -> list[int]:
    """The argmax after each prefix of `tokens`, from ONE causal forward over the prompt and tokens[:-1]: the
    same positions greedy decoded one at a time, fed as one wide pass (the model's public forward, no cache)."""
    import torch

    ids = torch.tensor([list(prompt_ids) + list(tokens[:-1])], device=lm.device)
    lm.use_width(ids.shape[1])
    with torch.inference_mode():
        logits = lm.model(input_ids=ids, use_cache=False, logits_to_keep=len(tokens)).logits[0]
    return [int(t) for t in logits.float().argmax(dim=-1)]


def _divergence(reference: list[int], other: list[int], gaps: list[float]) -> dict:
    """Where `other` first leaves `reference` (greedy), the gap greedy saw there, and the share of positions whose
    gap was smaller still (how close a call it was: 0.0 means no position was closer)."""
    at = first_divergence(other, reference)
    if at is None:
        return {"identical": True, "first_divergence": None, "logit_gap": None, "gap_percentile": None}
    gap = gaps[at] if at < len(gaps) else None  # past greedy's end: greedy stopped at EOS, the other did not
    below = None if gap is None else sum(g < gap for g in gaps) / len(gaps)
    return {"identical": False, "first_divergence": at, "logit_gap": gap, "gap_percentile": below}


def compare_prompt(lm, prompt_ids: list[int], config: LookaheadConfig, max_new_tokens: int) -> dict:
    """The three decodings of one prompt (see the module docstring). Texts run from the divergence on; the
    batch-shape comparison names the two tokens there (the wide pass's argmax continues greedy's prefix, so past
    the first flip it is not a text of its own) and counts every position where the two disagree;
    `wide_pass_agrees` says whether lookahead's token at its divergence is the one the wide pass chose there."""
    from .. import lookahead_generate

    t0 = time.perf_counter()
    greedy, gaps = greedy_with_gaps(lm, prompt_ids, max_new_tokens)
    greedy_s = time.perf_counter() - t0
    la = list(lookahead_generate(lm, prompt_ids, config, max_new_tokens).tokens)
    wide = teacher_forced(lm, prompt_ids, greedy)
    lookahead, shape = _divergence(greedy, la, gaps), _divergence(greedy, wide, gaps)
    if not lookahead["identical"]:
        at = lookahead["first_divergence"]
        lookahead.update(
            greedy_text=lm.decode(greedy[at:]),
            lookahead_text=lm.decode(la[at:]),
            wide_pass_agrees=at < len(wide) and at < len(la) and la[at] == wide[at],
        )
    if not shape["identical"]:
        at = shape["first_divergence"]
        shape.update(greedy_token=lm.decode([greedy[at]]), wide_pass_token=lm.decode([wide[at]]))
    shape["flips"] = sum(a != b for a, b in zip(wide, greedy))
    return {
        "new_tokens": len(greedy),
        "lookahead_tokens": len(la),
        **lookahead,
        "min_logit_gap": min(gaps),
        "batch_shape": shape,
        "greedy_ms_per_token": 1000 * greedy_s / len(greedy),
    }


def numerics(
    lm,
    prompts: list[dict],
    config: LookaheadConfig | None = None,
    max_new_tokens: int = 128,
    on_row: Callable[[dict], None] | None = None,
) -> dict:
    """Every prompt of `prompts` compared (see `compare_prompt`); plain data with the setting and a summary."""
    import torch

    config = config or LookaheadConfig(window=7, ngram=4, guess=7)
    rows = []
    for item in prompts:
        row = {
            "id": item["id"],
            "kind": item["kind"],
            **compare_prompt(lm, lm.encode_prompt(item["prompt"]), config, max_new_tokens),
        }
        rows.append(row)
        if on_row:
            on_row(row)
    return {
        "model": lm.name,
        "device": str(lm.device),
        "dtype": str(lm.dtype).removeprefix("torch."),
        "ran": True,
        "kernels": lm.kernels,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "machine": identity(str(lm.device))["description"],
        "python": platform.python_version(),
        "config": {
            "window": config.window,
            "ngram": config.ngram,
            "guess": config.guess,
            "pool": config.pool,
            "tree": config.tree,
        },
        "max_new_tokens": max_new_tokens,
        "prompts": rows,
        "summary": {
            "identical": sum(r["identical"] for r in rows),
            "batch_shape_identical": sum(r["batch_shape"]["identical"] for r in rows),
            "prompts": len(rows),
            "greedy_ms_per_token_median": sorted(r["greedy_ms_per_token"] for r in rows)[len(rows) // 2],
        },
    }
