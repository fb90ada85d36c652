"""Command line: `python -m lade_core {generate,trace,bench,costcurve,sweep,export-html} ...`.

Printing lives here, never in the engines. A bad argument, a bad setting or a missing model ends the command with
one readable line on stderr and exit status 2, never a stack trace.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import ConfigError, LookaheadConfig, Sampling
from .loading import ModelLoadError
from .trace import TraceError

MULTI = "\033[1;30;43m"  # multi-token steps: bold on yellow
ALT = "\033[4m"  # every other multi-token step underlined as well, so neighbours stay apart
RESET = "\033[0m"


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="hub id or local folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:1, mps")
    p.add_argument("--dtype", default=None, help="float32 (default), bfloat16 or float16 (GPU only)")


def _config_args(p: argparse.ArgumentParser) -> None:
    d = LookaheadConfig()
    p.add_argument("--window", "-W", type=int, default=d.window, help=f"window W (default {d.window})")
    p.add_argument("--ngram", "-N", type=int, default=d.ngram, help=f"n-gram size N (default {d.ngram})")
    p.add_argument("--guess", "-G", type=int, default=d.guess, help=f"candidates G (default {d.guess})")
    p.add_argument("--pool-from-prompt", action=argparse.BooleanOptionalAction, default=None,
                   help="seed the n-gram pool with the prompt's n-grams (default: no; with --auto, Auto decides)")
    p.add_argument("--auto", action="store_true",
                   help="pick W, N, G (and, unless given, the pool seeding) for this device from the cost curve and "
                        "the sweeps")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (exact); > 0 samples")
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0, help="seeds the sampler and the initial window")


def _settings(args, lm=None) -> tuple[LookaheadConfig, Sampling]:
    sampling = Sampling(args.temperature, args.top_k, args.top_p, args.seed)
    if args.auto:
        from .autoconfig import auto_config

        # --auto chooses whether to seed the pool too, unless --pool-from-prompt / --no-pool-from-prompt says
        return auto_config(lm, pool_from_prompt=args.pool_from_prompt, seed=args.seed), sampling
    return LookaheadConfig(args.window, args.ngram, args.guess, bool(args.pool_from_prompt), args.seed), sampling


def _prompt(args) -> str:
    if not args.prompt or not args.prompt.strip():
        raise ValueError("the prompt is empty: pass some text with --prompt")
    return args.prompt


def _highlighter(tty: bool):
    count = [0]

    def paint(text: str, n_tokens: int) -> str:
        if not tty or n_tokens < 2:
            return text
        count[0] += 1
        return (MULTI + (ALT if count[0] % 2 else "") + text + RESET)

    return paint


def cmd_generate(args) -> int:
    from . import greedy_generate, load_model, lookahead_generate

    prompt = _prompt(args)
    settings = None if args.auto else _settings(args)  # bad settings fail before the model loads
    lm = load_model(args.model, args.device, args.dtype)
    config, sampling = settings or _settings(args, lm)
    prompt_ids = lm.encode_prompt(prompt)
    tty = sys.stdout.isatty()
    paint = _highlighter(tty)
    out = sys.stdout
    seeded = ", prompt-seeded pool" if config.pool_from_prompt else ""
    out.write(f"[lookahead W={config.window} N={config.ngram} G={config.guess}{seeded} on {lm.name}, {lm.device}]\n")
    state = {"ids": [], "text": ""}

    def on_step(step):  # stream: print the new text of each step, coloured when the step emitted several tokens
        state["ids"] += step.accepted
        text = lm.decode(state["ids"])
        out.write(paint(text[len(state["text"]):], len(step.accepted)))
        out.flush()
        state["text"] = text

    la = lookahead_generate(lm, prompt_ids, config, args.max_new_tokens, on_step=on_step, sampling=sampling)
    out.write("\n")
    ar = greedy_generate(lm, prompt_ids, args.max_new_tokens, sampling=sampling)
    for name, run in (("lookahead", la), ("greedy", ar)):
        out.write(
            f"{name:9s}: {len(run.tokens)} tokens, {len(run.steps)} steps, {run.compression:.2f} tokens/step, "
            f"{len(run.tokens) / run.wall_s:.1f} tokens/s ({run.wall_s:.2f} s)\n"
        )
    verdict = "identical to greedy" if la.tokens == ar.tokens else "differs from greedy"
    if not sampling.greedy:
        verdict = "sampled: same distribution as plain sampling, not the same draw"
    out.write(f"lookahead output {verdict}; wall-clock speed-up {ar.wall_s / la.wall_s:.2f}x "
              f"(tokens/step is an upper bound on speed-up: each step feeds up to {config.tokens_per_forward} tokens)\n")
    return 0


def cmd_trace(args) -> int:
    from . import load_model, record_run

    prompt = _prompt(args)
    settings = None if args.auto else _settings(args)
    lm = load_model(args.model, args.device, args.dtype)
    config, sampling = settings or _settings(args, lm)
    run = record_run(lm, prompt, config, args.max_new_tokens, sampling, title=args.title or "")
    Path(args.out).write_text(run.to_json(), encoding="utf-8")
    print(f"wrote {args.out}: {len(run.lookahead.tokens)} tokens in {len(run.lookahead.steps)} lookahead steps "
          f"({run.lookahead.compression:.2f} tokens/step)")
    return 0


def cmd_bench(args) -> int:
    from .bench import run_bench

    run_bench(args)
    return 0


def cmd_costcurve(args) -> int:
    from .costcurve import run_costcurve

    run_costcurve(args)
    return 0


def cmd_sweep(args) -> int:
    from .sweep import run_sweep

    run_sweep(args)
    return 0


def cmd_export_html(args) -> int:
    from .export_html import export_html

    export_html(Path(args.trace), Path(args.out))
    print(f"wrote {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lade_core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("generate", help="stream an answer with lookahead decoding, then compare with greedy")
    p.add_argument("--prompt", required=True)
    _model_args(p), _config_args(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("trace", help="record a run of both methods to a JSON trace file")
    p.add_argument("--prompt", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--title", default="")
    _model_args(p), _config_args(p)
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("bench", help="greedy vs lookahead on a prompt file; prints a table, writes JSON")
    p.add_argument("--prompts", default=None, help="JSONL with id, kind, prompt (default: ../shared/bench/prompts.jsonl)")
    p.add_argument("--json", default=None, help="write the results here")
    p.add_argument("--repeat", type=int, default=1, help="time each method this many times, keep the fastest")
    _model_args(p), _config_args(p)
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("costcurve", help="forward latency against tokens per forward on this device")
    p.add_argument("--out", default=None, help="JSON file (default: assets/costcurve-<device>.json)")
    p.add_argument("--max-tokens", type=int, default=256)
    _model_args(p)
    p.set_defaults(func=cmd_costcurve)

    p = sub.add_parser("sweep", help="compression over W and N (G = W): the paper's scaling figure")
    p.add_argument("--prompts", default=None)
    p.add_argument("--out", default=None, help="JSON file (default: assets/sweep.json, or sweep-seeded.json)")
    p.add_argument("--pool-from-prompt", action="store_true", help="seed every run's pool with the prompt's n-grams")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--windows", default="1,2,4,8,16,32")
    p.add_argument("--ngrams", default="2,3,4,5,6")
    _model_args(p)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("export-html", help="write a run as one self-contained HTML replay")
    p.add_argument("trace")
    p.add_argument("out")
    p.set_defaults(func=cmd_export_html)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, ModelLoadError, TraceError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
