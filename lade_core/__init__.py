"""Lookahead decoding (Fu, Bailis, Stoica, Zhang, ICML 2024) on any Hugging Face causal LM, every step recorded.

Public API:
    lm = load_model()                                   # embedded SmolLM2-135M-Instruct, or a hub id / local path
    ids = lm.encode_prompt("Write a haiku")             # chat template applied for chat models
    la = lookahead_generate(lm, ids, LookaheadConfig(window=7, ngram=4, guess=7), max_new_tokens=64)
    ar = greedy_generate(lm, ids, max_new_tokens=64)    # same MethodRun shape: .tokens, .steps
    assert la.tokens == ar.tokens                       # greedy lookahead is exact
    jacobi_generate(lm, ids, window=7, max_new_tokens=64)   # the Jacobi decoding baseline, exact too
    record_run(lm, "Write a haiku", LookaheadConfig())  # both methods raced, as one RunTrace
"""

from .config import ConfigError, LookaheadConfig, Sampling, jacobi_config
from .greedy import greedy_generate
from .jacobi import jacobi_generate
from .load import TraceError, parse_run
from .loading import ModelLoadError, load_model
from .lookahead import lookahead_generate
from .record import record_run
from .sizes import StepCost
from .trace import MethodRun, RunTrace, StepTrace

__all__ = [
    "ConfigError", "LookaheadConfig", "Sampling", "jacobi_config", "greedy_generate", "jacobi_generate",
    "TraceError", "parse_run", "ModelLoadError", "load_model", "lookahead_generate", "record_run", "StepCost",
    "MethodRun", "RunTrace", "StepTrace",
]
