"""Peers, part two: what a transformers user would pick instead, measured beside this project's engines on the same
weights, chat template, prompts and machine, interleaved, one thread (`python -m scripts.peers --relatives`).

    python -m scripts.peers --relatives --out assets/bench/peers-relatives.json [--max-new-tokens 128] [--repeat 1]
    python -m scripts.peers --greedy-threads 1,2 --out assets/bench/greedy-threads.json

Methods (`--methods` picks some):
    tf-greedy       transformers' `generate(do_sample=False)` on the stock model (what a user runs)
    tf-pld          `generate(prompt_lookup_num_tokens=10)`: prompt lookup decoding, transformers' own
    tf-early-exit   `generate(assistant_early_exit=K)`: transformers' self-speculative decoding, the model's first
                    K layers as the draft (its own default schedule of draft lengths)
    lade-greedy, lade-pld, lade-early-exit, lade-747, lade-424, lade-434-lookup: this project's engines
                    (on this machine's layout per width, lade_core/kernel_choice.py; recorded as `kernels`), greedy;
                    the last is lookahead with prompt lookup candidates (W=4 N=3 G=4, 10 copied tokens at most)
    lade-auto       lookahead at the engine's Auto choice for this machine and thread count (its curve measured
                    at the start, the way a race runs; the best swept setting against adaptive sizes, both run on that
                    curve; the choice recorded as `auto`)
    sweep-auto      the best swept setting, Auto's rule before it ran adaptive sizes against it; same curve
    lade-adaptive   lookahead with adaptive sizes within W=7 N=4 G=7, on the same curve
    before-greedy, before-auto: the engine as it was before layouts were chosen per width, in the same process:
                    the stock layers and transformers' own attention (what the one-layout choice picked on this
                    host), Auto chosen on that engine's own curve
    two-greedy, two-auto, two-adaptive: the engine on the stock and packed layers only, per width as this machine
                    measured them (the plan before the transposed layout), in the same process; Auto and adaptive
                    sizes on that engine's own curve
Per prompt, the methods run in an order rotated from one prompt to the next, each best of `--repeat`, after one
untimed warm-up each. Tokens per step = new tokens / the target model's forward passes (a forward hook counts
them; for tf-early-exit, passes at the full depth only; the prefill counts as a step on both sides).

`--threads K` runs everything at K threads (every side the same).

`--greedy-threads` answers why this project's greedy looked slower per token than transformers' `generate`
although its packed kernels measured 1.81x faster (BENCHMARKS.md, CPU kernels): greedy decoding four ways (generate
or this engine, stock or packed layers), interleaved, at each thread count.
"""

from __future__ import annotations

import statistics
import time

import torch

from lade_core import DraftConfig, LookaheadConfig, MethodSpec, autoregressive_generate, decode
from lade_core.model import LM

LADE = {
    "lade-pld": MethodSpec("pld"),
    "lade-early-exit": MethodSpec("early-exit", draft=DraftConfig(exit_layer=8)),
    "lade-747": MethodSpec(config=LookaheadConfig(7, 4, 7)),
    "lade-424": MethodSpec(config=LookaheadConfig(4, 2, 4)),
    "lade-434-lookup": MethodSpec(config=LookaheadConfig(4, 3, 4, lookup=10)),
}
TF = {"tf-greedy": {}, "tf-pld": {"prompt_lookup_num_tokens": 10}, "tf-early-exit": {"assistant_early_exit": 8}}
METHODS = (
    "tf-greedy",
    "tf-pld",
    "tf-early-exit",
    "lade-greedy",
    *LADE,
    "lade-auto",
    "sweep-auto",
    "lade-adaptive",
    "before-greedy",
    "before-auto",
    "two-greedy",
    "two-auto",
    "two-adaptive",
)


class Passes:
    """Counts a model's forward passes at its full depth (an early-exit draft runs the same modules shallower)."""

    def __init__(self, model):
        self.count, self.model = 0, model
        self.depth = model.config.num_hidden_layers
        model.register_forward_pre_hook(self._hook)

    def _hook(self, *_):
        self.count += getattr(self.model, self.model.base_model_prefix).config.num_hidden_layers == self.depth


def stock_model(path: str):
    """The same weights with transformers' own layers and attention: what `generate` users run."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()


def run_tf(model, passes: Passes, ids, n: int, kwargs: dict) -> dict:
    passes.count = 0
    t = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=n,
            do_sample=False,
            **kwargs,
        )
    wall = time.perf_counter() - t
    return {"tokens": out[0, len(ids) :].tolist(), "steps": passes.count, "wall_s": wall}


def run_lade(lm, ids, n: int, spec: MethodSpec | None) -> dict:
    t = time.perf_counter()
    run = autoregressive_generate(lm, ids, n) if spec is None else decode(lm, ids, spec, n)
    wall = time.perf_counter() - t
    return {"tokens": list(run.tokens), "steps": len(run.steps), "wall_s": wall, "draft_s": run.draft_s}


def auto_spec(lm, adaptive: bool = True) -> tuple[MethodSpec, dict]:
    """Lookahead at Auto's choice for `lm` on this machine now (its curve measured here, the way a race runs), and
    the choice; `adaptive`: the best swept setting meets adaptive sizes, both run on that curve (`autoconfig.choose`;
    else the best swept setting, Auto's rule before)."""
    from lade_core.cli_options import with_step_cost
    from lade_core.measure import autoconfig
    from lade_core.measure.calibrate import process_curve

    curve = process_curve(lm)  # the one `with_step_cost` reads back for adaptive sizes
    t0 = time.perf_counter()
    choice = autoconfig.choose(lm, curve) if adaptive else autoconfig.best(autoconfig.load_sweeps(), curve)
    seconds = time.perf_counter() - t0  # the duel's, where it was run and not read back
    spec = with_step_cost(MethodSpec(config=autoconfig.auto_config(choice)), lm)
    keep = ("predicted_speedup_median", "cost_curve", "swept_choice", "duel")
    figures = {k: choice.get(k, False) for k in autoconfig.FIGURES}
    return spec, {**figures, **{k: choice[k] for k in keep if k in choice}, "seconds_to_choose": seconds}


def before_lm(lm):
    """The engine before layouts were chosen per width: the stock layers and transformers' own attention."""
    from lade_core import kernels, load_model

    old = load_model(cpu_kernels="stock")
    kernels.use_stock_sdpa(old.model)
    from dataclasses import replace

    return replace(old, name=lm.name, kernels="stock, transformers' attention")


def two_layouts_lm(lm):
    """The engine on the stock and packed layers only, each width on the faster of the two as this machine measured
    them (its kept verdict, read without the transposed layout's timings): the plan before that layout."""
    from dataclasses import replace

    from lade_core import checkpoint, kernel_choice, kernels, load_model

    verdict = kernel_choice.read_verdict(
        kernel_choice.verdict_file(checkpoint.cache_root(), lm.name, torch.get_num_threads())
    )
    plan = kernel_choice.plan({k: v for k, v in verdict["median_s"].items() if k in ("stock", "packed")})
    two = load_model(cpu_kernels="stock")
    switch = kernels.layered_linears(two.model, ("packed",))
    switch.keep(plan.used)
    return replace(two, name=lm.name, kernels=plan.label, plan=plan, switch=switch if plan.uniform is None else None)


def adaptive_spec(lm) -> MethodSpec:
    """Lookahead with adaptive sizes within W=7 N=4 G=7 on `lm`'s own curve."""
    from dataclasses import replace

    from lade_core.measure.calibrate import process_curve
    from lade_core.measure.costcurve import step_cost

    return replace(MethodSpec(config=LookaheadConfig(7, 4, 7, adaptive=True)), step_cost=step_cost(process_curve(lm)))


def runner(lm, stock, passes, extra: dict):
    """`extra`: name -> (LM, MethodSpec or None) for the methods that run on another engine or an Auto choice."""

    def run(name, ids, n):
        if name in TF:
            return run_tf(stock, passes, ids, n, TF[name])
        if name in extra:
            engine, spec = extra[name]
            return run_lade(engine, ids, n, spec)
        return run_lade(lm, ids, n, LADE.get(name))

    return run


def best(run, name, ids, n, repeat) -> dict:
    out = None
    for _ in range(max(repeat, 1)):
        r = run(name, ids, n)
        out = r if out is None or r["wall_s"] < out["wall_s"] else out
    k = len(out["tokens"])
    return {
        **out,
        "new_tokens": k,
        "tokens_per_step": k / max(out["steps"], 1),
        "ms_per_token": 1000 * out["wall_s"] / max(k, 1),
    }


def relatives(lm, path: str, prompts, n: int, repeat: int, methods=METHODS) -> dict:
    stock = stock_model(path)
    extra, chosen = {}, {}
    if "lade-auto" in methods:
        spec, chosen["lade-auto"] = auto_spec(lm)
        extra["lade-auto"] = (lm, spec)
    if "sweep-auto" in methods:
        spec, chosen["sweep-auto"] = auto_spec(lm, adaptive=False)
        extra["sweep-auto"] = (lm, spec)
    if "lade-adaptive" in methods:  # sizes chosen step by step on the same curve, within W=7 N=4 G=7
        extra["lade-adaptive"] = (lm, adaptive_spec(lm))
    if {"before-greedy", "before-auto"} & set(methods):
        old = before_lm(lm)
        extra["before-greedy"] = (old, None)
        if "before-auto" in methods:  # Auto's duel runs for a minute: only where its method does
            spec, chosen["before-auto"] = auto_spec(old)
            extra["before-auto"] = (old, spec)
    if {"two-greedy", "two-auto", "two-adaptive"} & set(methods):
        two = two_layouts_lm(lm)
        extra["two-greedy"] = (two, None)
        if "two-auto" in methods:
            spec, chosen["two-auto"] = auto_spec(two)
            extra["two-auto"] = (two, spec)
        extra["two-adaptive"] = (two, adaptive_spec(two))
    run = runner(lm, stock, Passes(stock), extra)
    encoded = [(p, lm.encode_prompt(p["prompt"])) for p in prompts]
    for name in methods:  # warm-up, untimed
        run(name, encoded[0][1], 8)
    rows = []
    for i, (p, ids) in enumerate(encoded):
        order = list(methods[i % len(methods) :]) + list(methods[: i % len(methods)])
        results = {name: best(run, name, ids, n, repeat) for name in order}
        reference = results.get("tf-greedy", results.get("lade-greedy"))["tokens"]
        for r in results.values():
            r["identical_to_greedy"] = r.pop("tokens") == reference
        rows.append({"id": p["id"], "kind": p["kind"], "prompt_tokens": len(ids), "order": order, "runs": results})
        print(
            f"[peers] {p['id']}: "
            + ", ".join(f"{k} {v['ms_per_token']:.1f} ms {v['tokens_per_step']:.2f}/step" for k, v in results.items()),
            flush=True,
        )
    return {"rows": rows, "summary": summarize(rows, methods), "auto": chosen}


def summarize(rows, methods) -> dict:
    out = {}
    classes = {"all": rows, **{k: [r for r in rows if r["kind"] == k] for k in dict.fromkeys(r["kind"] for r in rows)}}
    for cls, part in classes.items():
        out[cls] = {
            m: {
                "prompts": len(part),
                "ms_per_token_median": statistics.median(r["runs"][m]["ms_per_token"] for r in part),
                "tokens_per_step_mean": statistics.fmean(r["runs"][m]["tokens_per_step"] for r in part),
                "identical": sum(r["runs"][m]["identical_to_greedy"] for r in part),
            }
            for m in methods
        }
    return out


def greedy_threads(lm, path: str, prompts, n: int, threads) -> dict:
    """Greedy four ways at each thread count: generate or this engine, on stock or packed layers; each way warmed
    up once, then run on every prompt in an order rotated from prompt to prompt."""
    from lade_core import load_model

    stock = stock_model(path)
    stock_lm = LM(stock, lm.tokenizer, lm.name + " (stock layers)", lm.device, lm.dtype, lm.eos_ids)
    lm = load_model(cpu_kernels="packed")
    counts = {id(stock): Passes(stock), id(lm.model): Passes(lm.model)}
    ways = {
        "generate, stock layers": lambda ids: run_tf(stock, counts[id(stock)], ids, n, {}),
        "generate, packed layers": lambda ids: run_tf(lm.model, counts[id(lm.model)], ids, n, {}),
        "engine, stock layers": lambda ids: run_lade(stock_lm, ids, n, None),
        "engine, packed layers": lambda ids: run_lade(lm, ids, n, None),
    }
    encoded = [lm.encode_prompt(p["prompt"]) for p in prompts]
    result = {}
    for k in threads:
        torch.set_num_threads(k)
        for way in ways.values():
            way(encoded[0][:])
        per = {w: [] for w in ways}
        for i, ids in enumerate(encoded):
            for w in list(ways)[i % 4 :] + list(ways)[: i % 4]:
                r = ways[w](ids)
                per[w].append(1000 * r["wall_s"] / max(len(r["tokens"]), 1))
        result[str(k)] = {w: {"ms_per_token_median": statistics.median(v), "ms_per_token": v} for w, v in per.items()}
        print(
            f"[peers] {k} thread(s): " + ", ".join(f"{w} {statistics.median(v):.1f} ms" for w, v in per.items()),
            flush=True,
        )
    return result


def main(args) -> dict:
    """`python -m scripts.peers --relatives` or `--greedy-threads`: the measurement, as one JSON document."""
    import os
    import platform

    from lade_core import load_model
    from lade_core.checkpoint import default_model_path
    from lade_core.measure.prompts import load_prompts

    prompts = load_prompts(args.prompts)[: args.limit or None]
    torch.set_num_threads(args.threads)
    lm, path = load_model(), default_model_path()
    doc = {
        "command": "python -m scripts.peers " + " ".join(args.argv),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "model": lm.name,
        "kernels": lm.kernels,
        "max_new_tokens": args.max_new_tokens,
        "prompts": [p["id"] for p in prompts],
    }
    if args.greedy_threads:
        threads = [int(t) for t in args.greedy_threads.split(",")]
        doc["greedy_threads"] = greedy_threads(lm, path, prompts, args.max_new_tokens, threads)
    else:
        methods = tuple(args.methods.split(",")) if args.methods else METHODS
        doc.update(
            threads=args.threads,
            repeat=args.repeat,
            methods=list(methods),
            settings={
                "tf-pld": TF["tf-pld"],
                "tf-early-exit": TF["tf-early-exit"],
                **{
                    k: {"method": v.method, "config": v.config.to_dict(), "draft": v.draft.to_dict()}
                    for k, v in LADE.items()
                },
            },
        )
        doc.update(relatives(lm, path, prompts, args.max_new_tokens, args.repeat, methods))
    doc["loadavg_end"] = os.getloadavg()
    return doc
