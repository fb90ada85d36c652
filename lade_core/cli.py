"""Command line of the engine: `python -m lade_core {generate,trace,bench,costcurve,sweep,lab,numerics} ...`. The
`lade` script is this parser extended with the app's commands (`app/cli.py`: export-html); the engine imports
nothing of the app.

Printing lives here, and only here: the engines and the measurements return data. A bad argument, a bad setting or
a missing model ends the command with one readable line on stderr and exit status 2, never a stack trace.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .cli_options import check_parallel, decoding_args, describe, devices_arg, model_args, settings, with_step_cost
from .config import METHODS, POOL_POLICIES, ConfigError, LookaheadConfig
from .errors import ModelLoadError
from .paths import fresh
from .tracefile import TraceError

MULTI = "\033[1;30;43m"  # multi-token steps: bold on yellow
ALT = "\033[4m"  # every other multi-token step underlined as well, so neighbours stay apart
RESET = "\033[0m"


def _prompt(args) -> str:
    if not args.prompt or not args.prompt.strip():
        raise ValueError("the prompt is empty: pass some text with --prompt")
    return args.prompt


def _load(args):
    prompt = _prompt(args) if hasattr(args, "prompt") else None
    made = None if args.auto else settings(args)  # bad settings fail before the model loads (and torch)
    if getattr(args, "devices", 1) != 1:
        check_parallel(args, *(made or settings(argparse.Namespace(**{**vars(args), "auto": False})))[:2])
    from .checkpoint import load_model

    device = args.device
    if getattr(args, "devices", 1) != 1:
        from .parallel import rank_device

        device = rank_device(args.device)  # under torchrun with GPUs, this rank's GPU: its one copy of the model
    lm = load_model(args.model, device, args.dtype, cpu_kernels=args.cpu_kernels)
    spec, sampling, choice = made or settings(args, lm)
    return prompt, lm, with_step_cost(spec, lm), sampling, choice


def _parallel(args, lm, spec, prompt_ids):
    """The method's run with Lookahead Parallelism over `args.devices` ranks (`parallel.py`); None on a rank other
    than 0 under torchrun, which only takes part."""
    from .parallel import Job, run_job

    job = Job(args.model, str(lm.device), args.dtype, args.cpu_kernels, (tuple(prompt_ids),), (spec.config,), 0)
    runs = run_job(replace(job, max_new_tokens=args.max_new_tokens), args.devices, lm)
    return runs[0] if os.environ.get("RANK", "0") == "0" else None


def _ranks(run) -> str:
    """What each rank of a Lookahead Parallelism run fed and sent, per step on average."""
    steps = [s for s in run.steps if s.ranks]
    if not steps:
        return ""
    lines = []
    for r in range(len(steps[0].ranks)):
        fed = sum(s.ranks[r].fed for s in steps) / len(steps)
        sent = sum(s.ranks[r].sent for s in steps) / len(steps)
        lines.append(f"  rank {r}: {fed:.1f} tokens fed, {sent:,.0f} bytes sent per step")
    one = sum(s.n_input for s in steps) / len(steps)
    return f"per step over {len(steps)} steps ({one:.1f} tokens on one device):\n" + "\n".join(lines) + "\n"


def cmd_generate(args) -> int:
    prompt, lm, spec, sampling, choice = _load(args)
    from .autoregressive import autoregressive_generate
    from .methods import decode

    prompt_ids = lm.encode_prompt(prompt)
    tty = sys.stdout.isatty()
    out = sys.stdout if os.environ.get("RANK", "0") == "0" else open(os.devnull, "w")  # torchrun: rank 0 speaks
    out.write(f"[{describe(spec, choice)} on {lm.name}, {lm.device}]\n")
    state = {"ids": [], "text": "", "multi": 0}

    def on_step(step):  # stream: print the new text of each step, coloured when the step emitted several tokens
        state["ids"] += step.accepted
        text = lm.decode(state["ids"])
        new = text[len(state["text"]) :]
        if tty and len(step.accepted) > 1:
            state["multi"] += 1
            new = MULTI + (ALT if state["multi"] % 2 else "") + new + RESET
        out.write(new)
        out.flush()
        state["text"] = text

    if args.devices > 1:
        la = _parallel(args, lm, spec, prompt_ids)
        if la is None:
            return 0
        for step in la.steps:
            on_step(step)
    else:
        la = decode(lm, prompt_ids, spec, args.max_new_tokens, sampling, on_step)
    out.write("\n")
    ar = autoregressive_generate(lm, prompt_ids, args.max_new_tokens, sampling=sampling)
    for name, run in ((args.method, la), ("greedy" if sampling.greedy else "sampling", ar)):
        out.write(
            f"{name:10s}: {len(run.tokens)} tokens, {len(run.steps)} steps, {run.compression:.2f} tokens/step, "
            f"{len(run.tokens) / run.wall_s:.1f} tokens/s ({run.wall_s:.2f} s)\n"
        )
    verdict = "identical to greedy" if la.tokens == ar.tokens else "differs from greedy"
    if not sampling.greedy:
        verdict = "sampled: same distribution as plain sampling, not the same draw"
    if args.devices > 1:
        out.write(f"{args.method} output {verdict}\n{_ranks(la)}")
        out.write("no speed-up stated: processes sharing one machine's cores say nothing of devices side by side\n")
        return 0
    out.write(
        f"{args.method} output {verdict}; wall-clock speed-up {ar.wall_s / la.wall_s:.2f}x "
        f"(tokens/step is an upper bound on speed-up: each step feeds up to {spec.tokens_per_forward} "
        f"tokens)\n"
    )
    return 0


def cmd_trace(args) -> int:
    prompt, lm, spec, sampling, _ = _load(args)
    from .measure.here import machine_record
    from .record import record_run

    also = [
        with_step_cost(settings(argparse.Namespace(**{**vars(args), "method": m, "auto": False}))[0], lm)
        for m in args.also
    ]  # each with the same options
    if args.devices > 1:
        from .autoregressive import autoregressive_generate
        from .record import RunRequest, make_trace
        from .trace import Lane

        ids = lm.encode_prompt(prompt)
        parallel = _parallel(args, lm, spec, ids)
        if parallel is None:
            return 0
        lane = Lane("lookahead", spec.config, spec.draft, parallel)
        request = RunRequest(prompt, tuple(ids), args.max_new_tokens, sampling, args.title or "")
        run = make_trace(lm, request, [lane], autoregressive_generate(lm, ids, args.max_new_tokens), machine_record(lm))
        print(_ranks(run.parallel), end="")
    else:
        machine = machine_record(lm)  # this process's curve, measured before the race (not during it)
        run = record_run(lm, prompt, [spec, *also], args.max_new_tokens, sampling, machine=machine)
        run = replace(run, title=args.title or "")
    Path(args.out).write_text(run.to_json(), encoding="utf-8")
    for name, method in [*((lane.method, lane.run) for lane in run.all_lanes), ("greedy", run.baseline)]:
        print(
            f"{name}: {len(method.tokens)} tokens in {len(method.steps)} steps "
            f"({method.compression:.2f} tokens/step, {method.wall_s:.2f} s)"
        )
    print(f"wrote {args.out}")
    return 0


def cmd_bench(args) -> int:
    from .measure.bench import bench
    from .measure.prompts import load_prompts

    _, lm, spec, sampling, choice = _load(args)
    print(
        f"bench: {lm.name} on {lm.device} ({str(lm.dtype).removeprefix('torch.')}), "
        f"{describe(spec, choice)}, {args.max_new_tokens} new tokens, temperature {sampling.temperature}"
    )
    print(
        f"{'prompt':22s} {'tokens':>6s} {'steps':>5s} {'compr':>6s} {'exact':>5s} {'step x':>6s} {'ovh %':>5s} "
        f"{'greedy s':>8s} {'method s':>8s} {'ms/tok':>6s} {'speed-up':>8s}"
    )

    def row(r):
        print(
            f"{r['id']:22s} {r['new_tokens']:6d} {r['steps']:5d} {r['compression']:6.2f} "
            f"{'yes' if r['exact'] else 'NO':>5s} {r['step_cost_ratio']:6.2f} {100 * r['overhead_share']:5.1f} "
            f"{r['greedy_s']:8.2f} {r['lookahead_s']:8.2f} {r['ms_per_token']:6.1f} {r['speedup']:7.2f}x",
            flush=True,
        )

    result = bench(lm, load_prompts(args.prompts), spec, args.max_new_tokens, args.repeat, sampling, on_row=row)
    s = result["summary"]
    classes = ", ".join(f"{kind} {c['compression_mean']:.2f}" for kind, c in s["by_class"].items())
    print(
        f"mean compression {s['compression_mean']:.2f} ({classes}); median speed-up {s['speedup_median']:.2f}x (min "
        f"{s['speedup_min']:.2f}x, max {s['speedup_max']:.2f}x); step cost {s['step_cost_ratio_mean']:.2f}x greedy; "
        f"overhead at most {100 * s['overhead_share_max']:.1f}%; exact on {s['exact_count']}/"
        f"{len(result['prompts'])}"
    )
    if choice:
        result["auto"] = choice
    result["command"] = args.command_line
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def _batched_curve(args, lm) -> int:
    from .measure import batched, calibrate

    curve = batched.measure_batched_curve(lm, args.batch, repeats=args.repeats or 7, clock=args.clock)
    curve["command"] = args.command_line
    out = Path(args.out) if args.out else fresh("costcurve-cpu-batched")
    out.write_text(json.dumps(curve, indent=1), encoding="utf-8")
    print(
        f"{lm.name} on {lm.device}, {curve['threads']} thread(s), {curve['clock']} clock: forward of B sequences x "
        f"n tokens, against B x 1"
    )
    print("    B  " + "".join(f"{p['tokens']:>7d}" for p in curve["curves"][0]["points"]) + "   1-token ms")
    for c in curve["curves"]:
        print(
            f"{c['batch']:5d}  "
            + "".join(f"{p['relative']:7.2f}" for p in c["points"])
            + f"   {1000 * c['greedy_s']:8.1f}"
        )
    print(f"wrote {out} and {calibrate.save_batched(lm, curve)}")
    return 0


def cmd_costcurve(args) -> int:
    from .checkpoint import load_model
    from .measure.costcurve import DEFAULT_SIZES, curve_path, measure_cost_curve

    if args.batch:
        args.batch = [int(b) for b in args.batch.split(",")]  # checked before the model loads
        if min(args.batch) < 1:
            raise ValueError(f"--batch: whole numbers >= 1, not {args.batch}")
    lm = load_model(args.model, args.device, args.dtype, cpu_kernels=args.cpu_kernels)
    if args.batch:
        return _batched_curve(args, lm)
    if args.calibrate:
        from .measure.calibrate import calibrated_curve

        curve = calibrated_curve(lm, refresh=True, **({"repeats": args.repeats} if args.repeats else {}))
    else:
        curve = measure_cost_curve(lm, [n for n in DEFAULT_SIZES if n <= args.max_tokens], repeats=args.repeats or 9)
    curve["command"] = args.command_line
    out = (
        Path(curve["cached_at"])
        if args.calibrate
        else Path(args.out)
        if args.out
        else fresh(curve_path(str(lm.device)).stem)
    )
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
    from .checkpoint import load_model
    from .measure.prompts import load_prompts
    from .measure.sweep import sweep

    lm = load_model(args.model, args.device, args.dtype, cpu_kernels=args.cpu_kernels)

    def point(p):
        print(
            f"N={p['ngram']} W={p['window']:2d} G={p['guess']:2d}: {p['tokens_per_forward']:4d} tokens/forward max, "
            f"{p['mean_tokens_fed']:6.1f} fed on average, compression {p['compression']:.2f}"
            f"{'' if p['exact'] else '  (NOT exact)'}",
            flush=True,
        )

    result = sweep(lm, load_prompts(args.prompts), windows, ngrams, args.max_new_tokens, pool, on_point=point)
    result["command"] = args.command_line
    out = Path(args.out) if args.out else fresh(f"sweep-{pool}")
    out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"wrote {out}")
    return 0


def cmd_lab(args) -> int:
    from .measure import lab
    from .tracefile import parse_run

    if args.paper:  # the paper's measured speed-ups beside the model's predictions for the same settings
        print(json.dumps({"command": args.command_line, "rows": lab.paper_comparison()}, indent=1))
        return 0
    if args.page:  # everything the lab page draws that does not depend on a run
        from .measure.labdata import lab_page_data

        print(json.dumps(lab_page_data(), indent=1))
        return 0
    if args.run and args.all:  # every prediction the lab page shows for this run
        from .measure.labdata import lab_run_data

        print(json.dumps(lab_run_data(parse_run(Path(args.run).read_bytes())), indent=1))
        return 0
    if not (args.run and args.device and args.model_size):
        raise ValueError("lab needs --run, --device and --model-size (or --paper, --page, or --run with --all)")
    run = parse_run(Path(args.run).read_bytes())
    result = lab.predict_run(run, args.device, args.model_size, args.devices, batch=args.batch)
    own = lab.measured_on_cpu(run) if args.device == "cpu" and args.batch == 1 else None
    if own:  # the run's own setting on its own machine: measured first, the curve's prediction beside it
        result = {**result, "measurement": own}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(lab.describe(result))
    return 0


def cmd_numerics(args) -> int:
    from .checkpoint import load_model
    from .measure.numerics import numerics
    from .measure.prompts import load_prompts

    config = LookaheadConfig(window=args.window, ngram=args.ngram, guess=args.guess)
    lm = load_model(args.model, args.device, args.dtype, half_on_cpu=True)
    print(
        f"numerics: {lm.name} on {lm.device} in {args.dtype}, lookahead {config.window}/{config.ngram}/"
        f"{config.guess} against greedy, {args.max_new_tokens} new tokens"
    )
    print(f"{'prompt':22s} {'same':>4s} {'first diff':>10s} {'gap':>7s} {'wide pass':>9s} {'gap':>7s} {'ms/tok':>6s}")

    def cell(at, gap):
        return "-" if at is None else str(at), "-" if gap is None else f"{gap:.4f}"

    def row(r):
        (la_at, la_gap), (b_at, b_gap) = (
            cell(r["first_divergence"], r["logit_gap"]),
            cell(r["batch_shape"]["first_divergence"], r["batch_shape"]["logit_gap"]),
        )
        print(
            f"{r['id']:22s} {'yes' if r['identical'] else 'NO':>4s} {la_at:>10s} {la_gap:>7s} {b_at:>9s} "
            f"{b_gap:>7s} {r['greedy_ms_per_token']:6.1f}",
            flush=True,
        )

    try:
        result = numerics(lm, load_prompts(args.prompts), config, args.max_new_tokens, on_row=row)
        s = result["summary"]
        print(
            f"lookahead identical to greedy on {s['identical']}/{s['prompts']}; greedy fed as one wide pass "
            f"agrees with itself one token at a time on {s['batch_shape_identical']}/{s['prompts']}"
        )
    except (RuntimeError, NotImplementedError) as exc:  # a dtype this device's kernels do not run: say so, on file
        result = {"model": lm.name, "device": str(lm.device), "dtype": args.dtype, "ran": False, "why": str(exc)}
        print(f"{args.dtype} did not run here: {exc}")
    result["command"] = args.command_line
    if args.json:
        out = fresh(f"numerics-{args.dtype}") if args.json == "-" else Path(args.json)
        out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {out}")
    return 0


def build_parser(extra: Callable | None = None) -> argparse.ArgumentParser:
    """The engine's commands; `extra(subcommands)` adds more (the app's, `app/cli.py`)."""
    parser = argparse.ArgumentParser(
        prog="lade", description="Lookahead decoding, its relatives and their measurements, on a real model"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("generate", help="stream an answer with a method (lookahead by default), then compare")
    p.add_argument("--prompt", required=True)
    model_args(p), decoding_args(p), devices_arg(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser(
        "trace",
        help="record a race of the method (and --also others) against greedy decoding on "
        "one clock, to a JSON trace file",
    )
    p.add_argument("--prompt", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--title", default="")
    p.add_argument(
        "--also",
        action="append",
        default=[],
        choices=METHODS,
        help="race this method too, with the same options (at most twice)",
    )
    model_args(p), decoding_args(p), devices_arg(p)
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("bench", help="greedy against the method on a prompt file; prints a table, writes JSON")
    p.add_argument("--prompts", default=None, help="JSONL with id, kind, prompt (default: assets/prompts.jsonl)")
    p.add_argument("--json", default=None, help="write the results here")
    p.add_argument("--repeat", type=int, default=1, help="time each method this many times, keep the fastest")
    model_args(p), decoding_args(p)
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("costcurve", help="forward latency against tokens per forward on this device")
    p.add_argument(
        "--out",
        default=None,
        help="JSON file (default: out/costcurve-<device>.json, or with --batch "
        "out/costcurve-cpu-batched.json; the shipped curves in assets/ are replaced only when named here)",
    )
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--batch", default=None, help="B sequences per forward, e.g. 1,2,4,8: the batched curve")
    p.add_argument("--repeats", type=int, default=None, help="timing rounds (default 9; batched 7; calibrate 5)")
    p.add_argument(
        "--clock",
        choices=("wall", "thread"),
        default="wall",
        help="with --batch: wall seconds, or this thread's CPU seconds (one thread only; a shared host's "
        "other jobs then do not count)",
    )
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="measure this machine's quick curve again and cache it (what Auto, adaptive sizes and the lab read)",
    )
    model_args(p)
    p.set_defaults(func=cmd_costcurve)

    p = sub.add_parser("sweep", help="compression over W and N (G = W): the paper's scaling figure")
    p.add_argument("--prompts", default=None)
    p.add_argument(
        "--out",
        default=None,
        help="JSON file (default: out/sweep-<pool policy>.json; the shipped "
        "sweeps in assets/ are replaced only when named here)",
    )
    p.add_argument("--pool-policy", choices=POOL_POLICIES, default=None, help="the pool policy of every run")
    p.add_argument("--pool-from-prompt", action="store_true", help="same as --pool-policy prompt")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--windows", default="1,2,4,8,16,32")
    p.add_argument("--ngrams", default="2,3,4,5,6")
    model_args(p)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("lab", help="the speed lab's prediction for a run on a device and model size, as JSON")
    p.add_argument("--run", help="a trace file (its compression is what the prediction uses)")
    p.add_argument("--device", help="cpu (this machine's measured curve), a100-80gb, h100 or h200")
    p.add_argument("--model-size", help="parameters: 135M, 1.7B, 7B, 13B, 70B, ...")
    p.add_argument("--paper", action="store_true", help="the paper's measured speed-ups beside the model's predictions")
    p.add_argument("--devices", type=int, default=1, help="devices for Lookahead Parallelism (a simulation)")
    p.add_argument("--batch", type=int, default=1, help="sequences decoded together (B); on cpu a measured batch")
    p.add_argument("--page", action="store_true", help="print the lab page's data (no run needed)")
    p.add_argument("--all", action="store_true", help="with --run: every device, size, devices and batch")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_lab)

    p = sub.add_parser(
        "numerics",
        help="lookahead against greedy token by token in one dtype, and greedy against "
        "itself fed as one wide pass: where outputs part, and how close a call it was",
    )
    p.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32")
    p.add_argument("--model", default=None, help="hub id or local folder (default: the embedded model)")
    p.add_argument("--device", default="auto")
    p.add_argument("--prompts", default=None)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--window", "-W", type=int, default=7)
    p.add_argument("--ngram", "-N", type=int, default=4)
    p.add_argument("--guess", "-G", type=int, default=7)
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=None,
        help="write the results (default path: out/numerics-<dtype>.json; the lesson quotes "
        "assets/bench/numerics-<dtype>.json, replaced only when named here)",
    )
    p.set_defaults(func=cmd_numerics)

    if extra:
        extra(sub)
    return parser


def main(argv: list[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one command of `parser` (default: the engine's, `build_parser()`); errors end in one line, status 2."""
    args = (parser or build_parser()).parse_args(argv)
    args.command_line = "python -m lade_core " + shlex.join(sys.argv[1:] if argv is None else argv)  # into each JSON
    try:
        return args.func(args)
    except (ConfigError, ModelLoadError, TraceError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
