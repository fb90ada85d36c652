"""Record a run: greedy (or plain sampling) and lookahead decoding of one prompt, kept as a `RunTrace`.

This is what the app replays, what `python -m lade_core trace` saves, and what the standalone HTML export draws.
"""

from __future__ import annotations

from typing import Callable

from .config import LookaheadConfig, Sampling
from .decoding import StopCheck
from .greedy import greedy_generate
from .lookahead import lookahead_generate
from .model import LM
from .trace import MethodRun, RunTrace, StepTrace


def run_ids(run: MethodRun) -> set[int]:
    """Every token id a view of this run may need to print."""
    ids = set(run.tokens)
    for s in run.steps:
        ids.add(s.input_token)
        for group in (s.levels_before, s.levels_after, s.candidates, s.predictions, s.ngrams_added, s.ngrams_evicted):
            for row in group:
                ids.update(row)
        ids.update(s.new_level)
        ids.update(d.token for d in s.draws)
    return ids


def record_run(
    lm: LM,
    prompt: str,
    config: LookaheadConfig,
    max_new_tokens: int,
    sampling: Sampling | None = None,
    title: str = "",
    on_step: Callable[[str, StepTrace], None] | None = None,
    should_stop: StopCheck | None = None,
) -> RunTrace:
    """Run both methods on `prompt` (chat template applied for chat models). `on_step(method, step)` streams steps,
    method being "lookahead" or "greedy"; lookahead runs first."""
    sampling = sampling or Sampling()
    prompt_ids = lm.encode_prompt(prompt)
    la = lookahead_generate(
        lm, prompt_ids, config, max_new_tokens, sampling=sampling, should_stop=should_stop,
        on_step=(lambda s: on_step("lookahead", s)) if on_step else None,
    )
    ar = greedy_generate(
        lm, prompt_ids, max_new_tokens, sampling=sampling, should_stop=should_stop,
        on_step=(lambda s: on_step("greedy", s)) if on_step else None,
    )
    ids = run_ids(la) | run_ids(ar) | set(prompt_ids)
    return RunTrace(
        prompt=prompt,
        prompt_ids=tuple(prompt_ids),
        model=lm.name,
        device=str(lm.device),
        dtype=str(lm.dtype).removeprefix("torch."),
        config=config,
        sampling=sampling,
        max_new_tokens=max_new_tokens,
        lookahead=la,
        greedy=ar,
        token_text=lm.token_texts(sorted(ids)),
        title=title,
    )
