"""Command line: `lade {generate,trace,bench,costcurve,sweep,lab,export-html} ...` (or `python -m lade_core ...`).

Printing lives here, and only here: the engines and the measurements return data. A bad argument, a bad setting or
a missing model ends the command with one readable line on stderr and exit status 2, never a stack trace.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .config import POOL_POLICIES, ConfigError, LookaheadConfig, Sampling, jacobi_config
from .errors import ModelLoadError
from .load import TraceError
from .paths import measurement

MULTI = "\033[1;30;43m"  # multi-token steps: bold on yellow
ALT = "\033[4m"  # every other multi-token step underlined as well, so neighbours stay apart
RESET = "\033[0m"


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="hub id or local folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:1, mps")
    p.add_argument("--dtype", default=None, help="float32 (default), bfloat16 or float16 (GPU only)")


def _config_args(p: argparse.ArgumentParser) -> None:
    d = LookaheadConfig()
    p.add_argument("--method", choices=("lookahead", "jacobi"), default="lookahead",
                   help="lookahead decoding (default), or Jacobi decoding over a block of W guesses")
    p.add_argument("--window", "-W", type=int, default=d.window, help=f"window W (default {d.window})")
    p.add_argument("--ngram", "-N", type=int, default=d.ngram, help=f"n-gram size N (default {d.ngram})")
    p.add_argument("--guess", "-G", type=int, default=d.guess, help=f"candidates G (default {d.guess})")
    p.add_argument("--pool-policy", choices=POOL_POLICIES, default=None,
                   help=f"where pool n-grams come from: paper (the window only), output (also the generated text), "
                        f"prompt (also the prompt); default {d.pool}")
    p.add_argument("--pool-from-prompt", action=argparse.BooleanOptionalAction, default=None,
                   help="same as --pool-policy prompt (--no-pool-from-prompt: --pool-policy paper)")
    p.add_argument("--tree", action=argparse.BooleanOptionalAction, default=d.tree,
                   help="verify candidates as a token tree (shared prefixes fed once)")
    p.add_argument("--adaptive", action="store_true",
                   help="choose the window and the candidates step by step from this device's cost curve")
    p.add_argument("--auto", action="store_true",
                   help="pick W, N, G (and, unless given, the pool policy) for this device from the cost curve and "
                        "the sweeps")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (exact); > 0 samples")
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0, help="seeds the sampler and the initial window")


def _pool(args) -> str | None:
    if args.pool_policy and args.pool_from_prompt is not None:
        wanted = "prompt" if args.pool_from_prompt else "paper"
        if wanted != args.pool_policy:
            raise ConfigError(f"--pool-policy {args.pool_policy} contradicts --{'' if args.pool_from_prompt else 'no-'}"
                              f"pool-from-prompt")
    if args.pool_policy:
        return args.pool_policy
    if args.pool_from_prompt is not None:
        return "prompt" if args.pool_from_prompt else "paper"
    return None


def _settings(args, lm=None) -> tuple[LookaheadConfig, Sampling, dict | None]:
    """(config, sampling, Auto's choice or None) from the arguments; with --auto, `lm` is needed."""
    sampling = Sampling(args.temperature, args.top_k, args.top_p, args.seed)
    if args.method == "jacobi":
        return jacobi_config(args.window, args.seed), sampling, None
    pool = _pool(args)
    if args.auto:
        from .measure import autoconfig

        choice = autoconfig.best(autoconfig.load_sweeps(), autoconfig.curve_for(lm), pool)
        config = autoconfig.auto_config(choice, args.seed)
        return LookaheadConfig(**{**config.to_dict(), "tree": args.tree, "adaptive": args.adaptive}), sampling, choice
    fields = dict(window=args.window, ngram=args.ngram, guess=args.guess, tree=args.tree, adaptive=args.adaptive,
                  window_seed=args.seed)
    return LookaheadConfig(**fields, **({"pool": pool} if pool else {})), sampling, None


def _step_cost(lm, config: LookaheadConfig):
    """This device's step cost, for adaptive sizes (None otherwise)."""
    if not config.adaptive:
        return None
    from .measure import autoconfig, costcurve

    return costcurve.step_cost(autoconfig.curve_for(lm))


def _prompt(args) -> str:
    if not args.prompt or not args.prompt.strip():
        raise ValueError("the prompt is empty: pass some text with --prompt")
    return args.prompt


def _describe(config: LookaheadConfig, method: str, choice: dict | None) -> str:
    if method == "jacobi":
        return f"jacobi W={config.window}"
    extras = [f"{config.pool} pool", *(["token tree"] if config.tree else []),
              *(["adaptive"] if config.adaptive else [])]
    text = f"lookahead W={config.window} N={config.ngram} G={config.guess}, {', '.join(extras)}"
    if choice:
        low, high = choice["predicted_speedup_range"]
        text += (f"; Auto predicts {choice['predicted_speedup_median']:.2f}x greedy's speed (median over "
                 f"{len(choice.get('compression_by_prompt', {}))} prompts, {low:.2f}x to {high:.2f}x)")
    return text


def _load(args):
    prompt = _prompt(args) if hasattr(args, "prompt") else None
    settings = None if args.auto else _settings(args)  # bad settings fail before the model loads (and torch)
    from .loading import load_model

    lm = load_model(args.model, args.device, args.dtype)
    config, sampling, choice = settings or _settings(args, lm)
    return prompt, lm, config, sampling, choice


def cmd_generate(args) -> int:
    prompt, lm, config, sampling, choice = _load(args)
    from .greedy import greedy_generate
    from .record import parallel_generate

    prompt_ids = lm.encode_prompt(prompt)
    tty = sys.stdout.isatty()
    out = sys.stdout
    out.write(f"[{_describe(config, args.method, choice)} on {lm.name}, {lm.device}]\n")
    state = {"ids": [], "text": "", "multi": 0}

    def on_step(step):  # stream: print the new text of each step, coloured when the step emitted several tokens
        state["ids"] += step.accepted
        text = lm.decode(state["ids"])
        new = text[len(state["text"]):]
        if tty and len(step.accepted) > 1:
            state["multi"] += 1
            new = MULTI + (ALT if state["multi"] % 2 else "") + new + RESET
        out.write(new)
        out.flush()
        state["text"] = text

    la = parallel_generate(lm, prompt_ids, args.method, config, args.max_new_tokens, sampling,
                           _step_cost(lm, config), on_step)
    out.write("\n")
    ar = greedy_generate(lm, prompt_ids, args.max_new_tokens, sampling=sampling)
    for name, run in ((args.method, la), ("greedy" if sampling.greedy else "sampling", ar)):
        out.write(f"{name:9s}: {len(run.tokens)} tokens, {len(run.steps)} steps, {run.compression:.2f} tokens/step, "
                  f"{len(run.tokens) / run.wall_s:.1f} tokens/s ({run.wall_s:.2f} s)\n")
    verdict = "identical to greedy" if la.tokens == ar.tokens else "differs from greedy"
    if not sampling.greedy:
        verdict = "sampled: same distribution as plain sampling, not the same draw"
    out.write(f"{args.method} output {verdict}; wall-clock speed-up {ar.wall_s / la.wall_s:.2f}x "
              f"(tokens/step is an upper bound on speed-up: each step feeds up to {config.tokens_per_forward} "
              f"tokens)\n")
    return 0


def cmd_trace(args) -> int:
    prompt, lm, config, sampling, _ = _load(args)
    from .record import record_run

    run = record_run(lm, prompt, config, args.max_new_tokens, sampling, title=args.title or "", method=args.method,
                     step_cost=_step_cost(lm, config))
    Path(args.out).write_text(run.to_json(), encoding="utf-8")
    print(f"wrote {args.out}: {len(run.parallel.tokens)} tokens in {len(run.parallel.steps)} {args.method} steps "
          f"({run.parallel.compression:.2f} tokens/step)")
    return 0


def cmd_bench(args) -> int:
    from .measure.bench import bench
    from .measure.prompts import load_prompts

    _, lm, config, sampling, choice = _load(args)
    print(f"bench: {lm.name} on {lm.device} ({str(lm.dtype).removeprefix('torch.')}), "
          f"{_describe(config, args.method, choice)}, {args.max_new_tokens} new tokens, temperature "
          f"{sampling.temperature}")
    print(f"{'prompt':22s} {'tokens':>6s} {'steps':>5s} {'compr':>6s} {'exact':>5s} {'step x':>6s} {'ovh %':>5s} "
          f"{'greedy s':>8s} {'method s':>8s} {'ms/tok':>6s} {'speed-up':>8s}")

    def row(r):
        print(f"{r['id']:22s} {r['new_tokens']:6d} {r['steps']:5d} {r['compression']:6.2f} "
              f"{'yes' if r['exact'] else 'NO':>5s} {r['step_cost_ratio']:6.2f} {100 * r['overhead_share']:5.1f} "
              f"{r['greedy_s']:8.2f} {r['lookahead_s']:8.2f} {r['ms_per_token']:6.1f} {r['speedup']:7.2f}x", flush=True)

    result = bench(lm, load_prompts(args.prompts), config, args.max_new_tokens, args.repeat, sampling, args.method,
                   _step_cost(lm, config), on_row=row)
    s = result["summary"]
    print(f"mean compression {s['compression_mean']:.2f} (code {s['compression_mean_code'] or 0:.2f}, chat "
          f"{s['compression_mean_chat'] or 0:.2f}); median speed-up {s['speedup_median']:.2f}x (min "
          f"{s['speedup_min']:.2f}x, max {s['speedup_max']:.2f}x); step cost {s['step_cost_ratio_mean']:.2f}x greedy; "
          f"overhead at most {100 * s['overhead_share_max']:.1f}%; exact on {s['exact_count']}/"
          f"{len(result['prompts'])}")
    if choice:
        result["auto"] = choice
    result["command"] = "python -m lade_core " + " ".join(sys.argv[1:])
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def cmd_costcurve(args) -> int:
    from .loading import load_model
    from .measure.costcurve import DEFAULT_SIZES, curve_path, measure_cost_curve

    lm = load_model(args.model, args.device, args.dtype)
    curve = measure_cost_curve(lm, [n for n in DEFAULT_SIZES if n <= args.max_tokens])
    curve["command"] = "python -m lade_core " + " ".join(sys.argv[1:])
    out = Path(args.out) if args.out else curve_path(str(lm.device))
    out.write_text(json.dumps(curve, indent=1), encoding="utf-8")
    print(f"{lm.name} on {lm.device}: greedy step {1000 * curve['greedy_s']:.1f} ms")
    for p in curve["points"]:
        ratio = p["seconds"] / curve["greedy_s"]
        print(f"{p['tokens']:5d} tokens  {1000 * p['seconds']:8.1f} ms  {ratio:6.2f}x greedy")
    print(f"wrote {out}")
    return 0


def cmd_sweep(args) -> int:
    pool = args.pool_policy or ("prompt" if args.pool_from_prompt else "paper")
    windows = [int(w) for w in args.windows.split(",")]
    ngrams = [int(n) for n in args.ngrams.split(",")]
    for w in windows:
        for n in ngrams:
            LookaheadConfig(window=w, ngram=n, guess=w, pool=pool)  # every setting checked before the model loads
    from .loading import load_model
    from .measure.prompts import load_prompts
    from .measure.sweep import sweep

    lm = load_model(args.model, args.device, args.dtype)

    def point(p):
        print(f"N={p['ngram']} W={p['window']:2d} G={p['guess']:2d}: {p['tokens_per_forward']:4d} tokens/forward max, "
              f"{p['mean_tokens_fed']:6.1f} fed on average, compression {p['compression']:.2f}"
              f"{'' if p['exact'] else '  (NOT exact)'}", flush=True)

    result = sweep(lm, load_prompts(args.prompts), windows, ngrams, args.max_new_tokens, pool, on_point=point)
    result["command"] = "python -m lade_core " + " ".join(sys.argv[1:])
    out = Path(args.out) if args.out else measurement(f"sweep-{pool}")
    out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"wrote {out}")
    return 0


def cmd_lab(args) -> int:
    from .load import parse_run
    from .measure import lab

    if args.paper:  # the paper's measured speed-ups beside the model's predictions for the same settings
        print(json.dumps({"command": "python -m lade_core " + " ".join(sys.argv[1:]),
                          "rows": lab.paper_comparison()}, indent=1))
        return 0
    if not (args.run and args.device and args.model_size):
        raise ValueError("lab needs --run, --device and --model-size (or --paper)")
    run = parse_run(Path(args.run).read_bytes())
    result = lab.predict_run(run, args.device, args.model_size, args.devices)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(lab.describe(result))
    return 0


def cmd_export_html(args) -> int:
    from app.render.export import export_html  # presentation lives with the app; the engine does not import it

    export_html(Path(args.trace), Path(args.out))
    print(f"wrote {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lade", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("generate", help="stream an answer with lookahead (or Jacobi) decoding, then compare")
    p.add_argument("--prompt", required=True)
    _model_args(p), _config_args(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("trace", help="record a run of both methods (raced on one clock) to a JSON trace file")
    p.add_argument("--prompt", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--title", default="")
    _model_args(p), _config_args(p)
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("bench", help="greedy against the method on a prompt file; prints a table, writes JSON")
    p.add_argument("--prompts", default=None, help="JSONL with id, kind, prompt (default: assets/prompts.jsonl)")
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
    p.add_argument("--out", default=None, help="JSON file (default: assets/sweep-<pool policy>.json)")
    p.add_argument("--pool-policy", choices=POOL_POLICIES, default=None, help="the pool policy of every run")
    p.add_argument("--pool-from-prompt", action="store_true", help="same as --pool-policy prompt")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--windows", default="1,2,4,8,16,32")
    p.add_argument("--ngrams", default="2,3,4,5,6")
    _model_args(p)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("lab", help="the speed lab's prediction for a run on a device and model size, as JSON")
    p.add_argument("--run", help="a trace file (its compression is what the prediction uses)")
    p.add_argument("--device", help="cpu (this machine's measured curve), a100-80gb, h100 or h200")
    p.add_argument("--model-size", help="parameters: 135M, 1.7B, 7B, 13B, 70B, ...")
    p.add_argument("--paper", action="store_true", help="the paper's measured speed-ups beside the model's predictions")
    p.add_argument("--devices", type=int, default=1, help="devices for Lookahead Parallelism (a simulation)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_lab)

    p = sub.add_parser("export-html", help="write a run as one self-contained HTML replay")
    p.add_argument("trace")
    p.add_argument("out")
    p.set_defaults(func=cmd_export_html)
    return parser


def main_exit() -> None:
    """The `lade` console script."""
    sys.exit(main())


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
