"""Lookahead decoding (Fu, Bailis, Stoica, Zhang, ICML 2024) on any Hugging Face causal LM, every step recorded.

Public API:
    lm = load_model()                                   # embedded SmolLM2-135M-Instruct, or a hub id / local path
    ids = lm.encode_prompt("Write a haiku")             # chat template applied for chat models
    la = lookahead_generate(lm, ids, LookaheadConfig(window=7, ngram=4, guess=7), max_new_tokens=64)
    ar = autoregressive_generate(lm, ids, max_new_tokens=64)   # same MethodRun shape: .tokens, .steps
    assert la.tokens == ar.tokens                       # greedy lookahead is exact
    jacobi_generate(lm, ids, window=7, max_new_tokens=64)   # the Jacobi decoding baseline, exact too
    decode(lm, ids, MethodSpec("pld"), 64)              # any method by name: lookahead, jacobi, pld, early-exit, draft
    record_run(lm, "Write a haiku", LookaheadConfig(), 64)  # raced against the baseline, as one RunTrace
"""

from importlib import import_module

# name -> module: imported on first use, so that `lade --help`, the loader and the measurements need no torch.
_EXPORTS = {
    "ConfigError": "config",
    "DraftConfig": "config",
    "LookaheadConfig": "config",
    "Sampling": "config",
    "jacobi_config": "config",
    "autoregressive_generate": "autoregressive",
    "greedy_generate": "autoregressive",
    "jacobi_generate": "jacobi",
    "lookahead_generate": "lookahead",
    "MethodSpec": "config",
    "decode": "methods",
    "TraceError": "tracefile",
    "parse_run": "tracefile",
    "ModelLoadError": "errors",
    "load_model": "checkpoint",
    "record_run": "record",
    "StepCost": "sizes",
    "Lane": "trace",
    "Machine": "trace",
    "MethodRun": "trace",
    "RunTrace": "trace",
    "StepTrace": "trace",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'lade_core' has no attribute {name!r}")
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value
