"""The official side of `scripts.peers`: a worker that runs in the peers venv (transformers 4.34.0 and the PyPI
package `lade` 0.0.2, the official lookahead decoding implementation) and never imports this project.

    <peers-venv>/bin/python scripts/peers_official.py --model DIR [--threads 1]

It loads the model once, then answers requests, one JSON object a line on stdin, with one JSON object a line on
the stdout it was started with:

    {"op": "hello"}                                   -> versions, attention class, loading report, threads
    {"op": "generate", "ids": [...], "max_new_tokens": 128}
                                                      -> official greedy: tokens, wall_s, forwards, fed
    {"op": "generate", "ids": [...], "max_new_tokens": 128,
     "level": N, "window": W, "guess": G}             -> official lade: the same, plus lade_log
    {"op": "quit"}

One process serves both official methods. `lade.augment_all()` is called before the model is built, as lade's
README does. In lade 0.0.2 it only adds methods (`jforward_multilevel`, `LlamaModeljforward`,
`j_prepare_decoder_attention_mask`) and puts `greedy_search_proxy` in place of `GenerationMixin.greedy_search`;
that proxy reads the environment variable USE_LADE on every call and, with USE_LADE=0 (and CHAT=0), calls the
stock `greedy_search` it saved. `LlamaModel.forward` and the attention stay transformers' own (`hello` reports
`stock_llama_forward`, checked by identity), so a request without `level` is the stock transformers 4.34 greedy
baseline (`generate(do_sample=False)` with USE_LADE=0), and a request with `level` calls
`lade.config_lade(LEVEL=N, WINDOW_SIZE=W, GUESS_SET_SIZE=G, ALWAYS_FWD_ONE=1, DEBUG=1)` and runs the same
`generate` call with USE_LADE=1 (lade's `jacobi_greedy_search_multilevel`).

Steps are counted by a forward hook on the model's token embedding, which every forward pass calls exactly once
(stock `LlamaModel.forward` and lade's `LlamaModeljforward` alike): `forwards` is the number of forward passes of
one `generate` call, the prefill included, and `fed` the number of tokens each of them fed. In lade mode lade's own
count comes back as `lade_log` = [generated tokens, steps, ratio] as a cross-check: lade 0.0.2 keeps no log
object, it prints "Generated tokens: X Total steps: Y Compression ratio: Z" when DEBUG=1; the worker captures
that print (its steps include the prefill too), parses it and copies it to stderr.

Workarounds, all from the outside (lade's code is used as installed, never edited); see also scripts/peers.py:
- transformers 4.34 reads this model folder (written by transformers 5) with three gaps, handled in
  `_llama_config`: rope_theta sits under `rope_parameters` (4.34 reads only a top-level `rope_theta` and would
  silently use 10000, a different model), so it is copied over; `head_dim` is not read (4.34 derives
  hidden_size / num_attention_heads), so the two are checked to agree; `dtype` is not read (4.34 says
  `torch_dtype`), harmless since float32 is passed. `tie_word_embeddings` is read as is; the folder has no
  `lm_head.weight`, and `hello` reports the tie and the loading report (missing/unexpected keys), and the worker
  stops if any weight other than the tied head is missing.
- The tokenizer (a transformers-5 `TokenizersBackend` file that 4.34 cannot build) is never loaded: token ids come
  in from the main process.
- Attention is 4.34's default, eager `LlamaAttention` (SDPA for Llama arrived in 4.36; flash-attention-2 only when
  asked for); `hello` reports the class and the worker stops if it is anything else, since lade 0.0.2's decoder
  calls pass `padding_mask` and a 4-D additive mask that only that path takes.
- lade 0.0.2 seeds Python's `random` with 10 at the start of every call (its initial window is drawn from the prompt
  tokens with `random.choice`), so the initial window is fixed by lade and no seed is passed.
- lade's DEBUG print goes to stdout; the worker moves stdout to stderr and answers on a duplicate of the original
  stdout, so no print can corrupt the protocol.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import platform
import re
import sys
import time
import traceback

LADE_SUMMARY = re.compile(r"Generated tokens:\s*(\d+)\s*Total steps:\s*(\d+)\s*Compression ratio:\s*([0-9.]+)")


def _llama_config(path: str):
    """The model's LlamaConfig as transformers 4.34 must see it (see the module docstring)."""
    from transformers import LlamaConfig

    with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
        raw = json.load(f)
    config = LlamaConfig.from_pretrained(path)
    rope = raw.get("rope_parameters") or {}
    if rope.get("rope_type", "default") != "default" or raw.get("rope_scaling"):
        raise SystemExit(
            f"{path}: rope scaling {rope or raw.get('rope_scaling')} is not translated for "
            f"transformers 4.34; only plain RoPE models are supported by this worker"
        )
    if "rope_theta" not in raw and "rope_theta" in rope:
        config.rope_theta = float(rope["rope_theta"])
    head_dim = raw.get("head_dim")
    if head_dim is not None and head_dim != config.hidden_size // config.num_attention_heads:
        raise SystemExit(
            f"{path}: head_dim {head_dim} != hidden_size / num_attention_heads; transformers 4.34 "
            f"cannot represent this model"
        )
    if raw.get("mlp_bias"):
        raise SystemExit(f"{path}: mlp_bias=true is not supported by transformers 4.34's Llama")
    return config


class ForwardCounter:
    """Counts forward passes (and the tokens each fed) through a hook on the input embedding."""

    def __init__(self, embedding):
        self.fed: list[int] = []
        embedding.register_forward_hook(self._hook)

    def _hook(self, module, args, output):
        self.fed.append(int(args[0].shape[-1]))

    def reset(self) -> None:
        self.fed = []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="local model folder (safetensors)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if importlib.util.find_spec("lade") is None:  # started with this project's Python, not the peers venv's
        sys.exit(
            "peers_official: no `lade` here; this worker runs in the peers venv that `python -m scripts.peers` builds"
        )

    # Replies go to the stdout this process was started with; anything else printed (lade's DEBUG summary,
    # library warnings) goes to stderr, so a stray print can never corrupt the protocol.
    replies = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    import torch

    torch.set_num_threads(args.threads)
    import transformers
    from transformers import AutoModelForCausalLM, GenerationMixin
    from transformers.models.llama import modeling_llama
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    stock_forward = modeling_llama.LlamaModel.forward
    stock_greedy = GenerationMixin.greedy_search

    import lade

    os.environ["USE_LADE"] = "0"
    os.environ["CHAT"] = "0"
    lade.augment_all()
    from lade.decoding import FUNC_MAP

    config = _llama_config(args.model)
    t0 = time.perf_counter()
    model, loading = AutoModelForCausalLM.from_pretrained(
        args.model, config=config, torch_dtype=torch.float32, output_loading_info=True
    )
    model.eval()
    load_s = time.perf_counter() - t0
    tied = model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    missing = [k for k in loading.get("missing_keys", []) if not (tied and k == "lm_head.weight")]
    if missing:
        raise SystemExit(f"weights missing after loading {args.model} with transformers 4.34: {missing}")
    attention = type(model.model.layers[0].self_attn)
    if attention is not modeling_llama.LlamaAttention:
        raise SystemExit(f"expected eager LlamaAttention, got {attention.__module__}.{attention.__name__}")
    counter = ForwardCounter(model.get_input_embeddings())

    def hello() -> dict:
        import importlib.metadata as md

        return {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "lade": md.version("lade"),
            "lade_file": lade.__file__,
            "accelerate": md.version("accelerate"),
            "threads": torch.get_num_threads(),
            "attention": attention.__module__ + "." + attention.__name__,
            "flash_attn_2": bool(getattr(model.config, "_flash_attn_2_enabled", False)),
            "rope_theta": model.config.rope_theta,
            "head_dim": model.config.hidden_size // model.config.num_attention_heads,
            "lm_head_tied": tied,
            "loading": {k: list(v) for k, v in loading.items()},
            "stock_llama_forward": modeling_llama.LlamaModel.forward is stock_forward,
            "greedy_is_stock_under_use_lade_0": FUNC_MAP.get("greedy_search") is stock_greedy,
            "eos_token_id": model.generation_config.eos_token_id,
            "pad_token_id": model.generation_config.pad_token_id,
            "load_s": load_s,
        }

    def generate(req: dict) -> dict:
        ids = torch.tensor([req["ids"]], dtype=torch.long)
        use_lade = req.get("level") is not None
        if use_lade:
            lade.config_lade(
                LEVEL=int(req["level"]),
                WINDOW_SIZE=int(req["window"]),
                GUESS_SET_SIZE=int(req["guess"]),
                ALWAYS_FWD_ONE=1,
                DEBUG=1,
            )
        os.environ["USE_LADE"] = "1" if use_lade else "0"
        printed = io.StringIO()
        counter.reset()
        try:
            with contextlib.redirect_stdout(printed):
                t = time.perf_counter()
                out = model.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=int(req["max_new_tokens"]),
                    do_sample=False,
                    num_beams=1,
                    pad_token_id=model.generation_config.pad_token_id,
                )
                wall = time.perf_counter() - t
        finally:
            os.environ["USE_LADE"] = "0"
            sys.stderr.write(printed.getvalue() + ("\n" if printed.getvalue() else ""))
        log = None
        if use_lade:
            found = LADE_SUMMARY.findall(printed.getvalue())
            if found:
                gen, steps, ratio = found[-1]
                log = [int(gen), int(steps), float(ratio)]
        return {
            "tokens": out[0, ids.shape[1] :].tolist(),
            "wall_s": wall,
            "forwards": len(counter.fed),
            "fed": counter.fed,
            "lade_log": log,
        }

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "quit":
                replies.write(json.dumps({"ok": True}) + "\n")
                break
            if op == "hello":
                reply = hello()
            elif op == "generate":
                reply = generate(req)
            else:
                raise ValueError(f"unknown op {op!r}")
            reply["ok"] = True
        except Exception:  # noqa: BLE001 - the driver shows it
            reply = {"ok": False, "error": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
