"""Lookahead decoding (Fu, Bailis, Stoica, Zhang, ICML 2024) on any Hugging Face causal LM, every step recorded.

Public API:
    lm = load_model()                                   # embedded SmolLM2-135M-Instruct, or a hub id / local path
    ids = lm.encode_prompt("Write a haiku")             # chat template applied for chat models
    la = lookahead_generate(lm, ids, LookaheadConfig(window=7, ngram=4, guess=7), max_new_tokens=64)
    ar = greedy_generate(lm, ids, max_new_tokens=64)    # same MethodRun shape: .tokens, .steps
    assert la.tokens == ar.tokens                       # greedy lookahead is exact
"""

from .config import ConfigError, LookaheadConfig, Sampling
from .greedy import greedy_generate
from .loading import ModelLoadError, load_model
from .lookahead import lookahead_generate
from .record import record_run
from .trace import MethodRun, RunTrace, StepTrace, TraceError, parse_run

__all__ = [
    "ConfigError", "LookaheadConfig", "Sampling", "greedy_generate", "ModelLoadError", "load_model",
    "lookahead_generate", "record_run", "MethodRun", "RunTrace", "StepTrace", "TraceError", "parse_run",
]
