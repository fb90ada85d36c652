"""The acceptance metrics practitioners read, under the names vLLM, TensorRT-LLM and llama.cpp print them, computed
from a run's steps (every method: lookahead, Jacobi, the speculative ones).

A step "drafts" when it verifies at least one draft token (a pool n-gram, a Jacobi guess, a proposal); its drafted
tokens are the verification tokens it fed (a token tree feeds a shared prefix once), its accepted draft tokens
the winner's matched prefix. Over a run's decoding steps (the prefill left out):

    mean_acceptance_length   1 + accepted / drafting steps       vLLM "Mean acceptance length", TensorRT-LLM's
                                                                 acceptance length (AL): tokens per verify step
    per_position_acceptance  [steps accepting > i drafts / drafting steps]   vLLM "Per-position acceptance rate"
    draft_acceptance_rate    accepted / drafted                  vLLM "Avg Draft acceptance rate", TensorRT-LLM's
                                                                 acceptance rate (AR), llama.cpp "accept" / "draft"
    drafted_per_step         drafted / decoding steps            drafted tokens per step (vLLM "Drafted" per step)
    tokens_per_step          new tokens / all steps              this project's compression (prefill included)

What other projects and papers call these, with where each definition was read, is the register
assets/lab/metrics.json (`terms`): the page names them from there.

Left out: throughputs (tokens per second are in the bench), and trees counted by node rather than by path.
"""

from __future__ import annotations

import json
from functools import lru_cache

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11 (app/render/contract.py)

from .paths import ASSETS
from .trace import MethodRun, StepTrace

TERMS = ASSETS / "lab" / "metrics.json"


class TermSource(TypedDict):
    name: str
    url: str
    where: str


class MetricTerm(TypedDict):
    """One column of the methods table: its label, this project's definition, and what it is called elsewhere."""

    id: str  # a `RunMetrics` field
    label: str
    ours: str
    elsewhere: str
    sources: list[TermSource]


@lru_cache(maxsize=1)
def terms() -> list[MetricTerm]:
    """The register of the metrics' names elsewhere (assets/lab/metrics.json)."""
    return json.loads(TERMS.read_text(encoding="utf-8"))["terms"]


def drafted(step: StepTrace) -> int:
    """Draft tokens a step fed for verification: the verification nodes, or Jacobi decoding's guess block."""
    if step.kind in ("prefill", "autoregressive"):
        return 0
    return step.window if step.kind == "jacobi" else step.layout.nodes


def accepted(step: StepTrace) -> int:
    """Draft tokens a step kept (cut where the run ended inside them)."""
    return step.n_accepted_from_candidate


class RunMetrics(TypedDict):
    """What `run_metrics` answers (the page's metrics table reads these names)."""

    mean_acceptance_length: float
    per_position_acceptance: list[float]
    draft_acceptance_rate: float
    drafted_per_step: float
    drafting_steps: int
    drafted_tokens: int
    accepted_drafts: int
    tokens_per_step: float


def run_metrics(run: MethodRun) -> RunMetrics:
    """The practitioners' metrics of one run (see the module docstring)."""
    steps = run.steps[1:]
    drafting = [s for s in steps if drafted(s)]
    kept = [accepted(s) for s in drafting]
    total_drafted = sum(drafted(s) for s in steps)
    longest = max(kept, default=0)
    return {
        "mean_acceptance_length": 1 + sum(kept) / len(drafting) if drafting else 1.0,
        "per_position_acceptance": [sum(k > i for k in kept) / len(drafting) for i in range(longest)],
        "draft_acceptance_rate": sum(kept) / total_drafted if total_drafted else 0.0,
        "drafted_per_step": total_drafted / len(steps) if steps else 0.0,
        "drafting_steps": len(drafting),
        "drafted_tokens": total_drafted,
        "accepted_drafts": sum(kept),
        "tokens_per_step": run.compression,
    }
