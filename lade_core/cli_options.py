"""The command line's decoding options: the arguments `generate`, `trace` and `bench` share, and the settings they
make (a `MethodSpec` and a `Sampling`). Kept apart from `cli.py`, which runs the commands and prints; nothing here
imports torch, so a bad setting is refused before the model loads.

Seeds are named for what they seed: `--window-seed` the initial window (lookahead, Jacobi), `--sample-seed` the
sampler; `--seed` is kept and sets both (each one given explicitly wins).
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from .config import (
    METHODS,
    MODEL_DRAFTS,
    POOL_POLICIES,
    SCHEDULES,
    ConfigError,
    DraftConfig,
    LookaheadConfig,
    MethodSpec,
    Sampling,
    jacobi_config,
)
from .trace import CPU_LAYOUTS


def model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="hub id or local folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:1, mps")
    p.add_argument("--dtype", default=None, help="float32 (default), bfloat16 or float16 (GPU only)")
    p.add_argument(
        "--cpu-kernels",
        choices=("auto", *CPU_LAYOUTS),
        default="auto",
        help="on a CPU in fp32: the linear layers stock, packed for oneDNN or transposed at every width, or auto "
        "(default): at each width the layout this machine measured fastest there, measured once and kept",
    )


def devices_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--devices",
        type=int,
        default=1,
        help="Lookahead Parallelism over this many processes, each with the whole model (gloo on CPUs, NCCL with a "
        "GPU each; under torchrun, its ranks); greedy lookahead with fixed sizes only",
    )


def check_parallel(args, spec: MethodSpec, sampling: Sampling) -> None:
    """Refuse --devices where Lookahead Parallelism does not apply, before any model loads."""
    if args.devices == 1:
        return
    also, auto = getattr(args, "also", None), getattr(args, "auto", False)
    if spec.method != "lookahead" or not sampling.greedy or spec.config.adaptive or also or auto:
        raise ConfigError(
            "--devices runs greedy lookahead with fixed sizes only (no --temperature, --adaptive, --auto or --also)"
        )


def decoding_args(p: argparse.ArgumentParser) -> None:
    d, k = LookaheadConfig(), DraftConfig()
    p.add_argument(
        "--method",
        choices=METHODS,
        default="lookahead",
        help="lookahead decoding (default); jacobi: Jacobi decoding over a block of W guesses; pld: prompt "
        "lookup decoding; early-exit: the model's first layers draft, the model verifies; draft: a "
        "separate draft model (--draft-model)",
    )
    p.add_argument("--window", "-W", type=int, default=d.window, help=f"window W (default {d.window})")
    p.add_argument("--ngram", "-N", type=int, default=d.ngram, help=f"n-gram size N (default {d.ngram})")
    p.add_argument("--guess", "-G", type=int, default=d.guess, help=f"candidates G (default {d.guess})")
    p.add_argument(
        "--pool-policy",
        choices=POOL_POLICIES,
        default=None,
        help=f"where pool n-grams come from: paper (the window only), output (also the generated text), "
        f"prompt (also the prompt); default {d.pool}",
    )
    p.add_argument(
        "--pool-from-prompt",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="same as --pool-policy prompt (--no-pool-from-prompt: --pool-policy paper)",
    )
    p.add_argument(
        "--tree",
        action=argparse.BooleanOptionalAction,
        default=d.tree,
        help="verify candidates as a token tree (shared prefixes fed once)",
    )
    p.add_argument(
        "--adaptive",
        action="store_true",
        help="choose the window and the candidates step by step from this device's cost curve",
    )
    p.add_argument(
        "--auto",
        action="store_true",
        help="pick W, N, G (and, unless given, the pool policy) for this device from its cost curve: the best swept "
        "setting or adaptive sizes, whichever is predicted faster on it (both run here on the benchmark prompts once "
        "per curve, about a minute and a half on a CPU, then kept)",
    )
    p.add_argument(
        "--lookup",
        type=int,
        default=d.lookup,
        help="lookahead: also verify prompt lookup's copy of up to this many tokens (default 0: off)",
    )
    p.add_argument(
        "--draft-tokens",
        "-K",
        type=int,
        default=k.tokens,
        help=f"pld, early-exit, draft: the most tokens a draft proposes per step (default {k.tokens})",
    )
    p.add_argument(
        "--match",
        type=int,
        default=k.match,
        help=f"pld: match the last n tokens, n from this down to 1 (default {k.match})",
    )
    p.add_argument(
        "--exit-layer",
        type=int,
        default=k.exit_layer,
        help=f"early-exit: the draft is the model's first K layers (default {k.exit_layer})",
    )
    p.add_argument("--draft-model", default="", help="draft: hub id or folder of a draft model with the same tokenizer")
    p.add_argument(
        "--draft-schedule",
        choices=SCHEDULES,
        default=k.schedule,
        help="early-exit, draft: K every step (constant), or two more after a fully kept draft and one fewer "
        f"otherwise (heuristic, as transformers' opt-in schedule); prompt lookup always copies up to K (default "
        f"{k.schedule})",
    )
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (exact); > 0 samples")
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--sample-seed", type=int, default=None, help="seeds the sampler (default 0)")
    p.add_argument("--window-seed", type=int, default=None, help="seeds the initial window (default 0)")
    p.add_argument(
        "--seed", type=int, default=None, help="sets both --sample-seed and --window-seed (kept from earlier versions)"
    )


def pool_policy(args) -> str | None:
    if args.pool_policy and args.pool_from_prompt is not None:
        wanted = "prompt" if args.pool_from_prompt else "paper"
        if wanted != args.pool_policy:
            raise ConfigError(
                f"--pool-policy {args.pool_policy} contradicts --{'' if args.pool_from_prompt else 'no-'}"
                f"pool-from-prompt"
            )
    if args.pool_policy:
        return args.pool_policy
    if args.pool_from_prompt is not None:
        return "prompt" if args.pool_from_prompt else "paper"
    return None


def seeds(args) -> tuple[int, int]:
    """(sample seed, window seed): each as given, else --seed, else 0."""
    fallback = args.seed if args.seed is not None else 0
    return (
        args.sample_seed if args.sample_seed is not None else fallback,
        args.window_seed if args.window_seed is not None else fallback,
    )


def settings(args, lm=None) -> tuple[MethodSpec, Sampling, dict | None]:
    """(method spec, sampling, Auto's choice or None) from the arguments; with --auto, `lm` is needed."""
    sample_seed, window_seed = seeds(args)
    sampling = Sampling(args.temperature, args.top_k, args.top_p, sample_seed)
    schedule = args.draft_schedule if args.method in MODEL_DRAFTS else "constant"
    draft = DraftConfig(args.draft_tokens, args.match, args.exit_layer, args.draft_model, schedule)
    if args.method == "jacobi":
        return MethodSpec("jacobi", jacobi_config(args.window, window_seed), draft), sampling, None
    if args.method != "lookahead":
        return MethodSpec(args.method, draft=draft), sampling, None
    pool = pool_policy(args)
    if args.auto:
        from .measure import autoconfig

        curve = autoconfig.curve_for(lm)
        choice = autoconfig.choose(lm, curve, pool, tree=args.tree, lookup=args.lookup)  # the duel runs them so
        config = autoconfig.auto_config(choice, window_seed)
        adaptive = args.adaptive or config.adaptive  # --adaptive: Auto's W, N, G as bounds
        config = LookaheadConfig(**{**config.to_dict(), "tree": args.tree, "adaptive": adaptive, "lookup": args.lookup})
        return MethodSpec(config=config, draft=draft), sampling, choice
    fields = dict(
        window=args.window,
        ngram=args.ngram,
        guess=args.guess,
        tree=args.tree,
        adaptive=args.adaptive,
        window_seed=window_seed,
        lookup=args.lookup,
    )
    config = LookaheadConfig(**fields, **({"pool": pool} if pool else {}))
    return MethodSpec(config=config, draft=draft), sampling, None


def with_step_cost(spec: MethodSpec, lm) -> MethodSpec:
    """`spec` with this device's step cost, where adaptive sizes need it."""
    if spec.method != "lookahead" or not spec.config.adaptive:
        return spec
    from .measure import autoconfig, costcurve

    return replace(spec, step_cost=costcurve.step_cost(autoconfig.curve_for(lm)))


def describe(spec: MethodSpec, choice: dict | None) -> str:
    config = spec.config
    if spec.method != "lookahead":
        return spec.label
    extras = [
        f"{config.pool} pool",
        *(["token tree"] if config.tree else []),
        *(["adaptive"] if config.adaptive else []),
        *([f"lookup {config.lookup}"] if config.lookup else []),
    ]
    text = f"{spec.label}, {', '.join(extras)}"
    if choice:
        low, high = choice["predicted_speedup_range"]
        text += (
            f"; Auto predicts {choice['predicted_speedup_median']:.2f}x greedy's speed (median over "
            f"{len(choice.get('compression_by_prompt', {}))} prompts, {low:.2f}x to {high:.2f}x)"
        )
    return text
