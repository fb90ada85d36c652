"""Python's own reading of the lesson: each fact a chapter's sentence states, each question's answer and each
chapter's landing rule, computed from the trace by the definition the words give (not a port of the page's code).

The page (app/static/lade-lesson.js) computes the same things in the browser; the browser tests compare the two, so
if a sentence and this reading disagree, one of them misreads the trace. Where a definition needs a position, it is
the position the engine fed the token at (`StepTrace.layout.positions()`, what the model saw), and "right" means the
run's final text has that token at that position. Import-only (no tests here); no browser, no model.
"""

from __future__ import annotations

import json
import re
import types
from functools import lru_cache

from lade_core import RunTrace
from lade_core.config import HYBRID, METHOD_NAMES
from lade_core.paths import ROOT

# The chapters this reading knows, by the title the page gives them (a chapter retitled or added fails the walk
# until it is read here: its sentences must be read by someone, not skipped).
ONE_TOKEN = "One token per forward pass"
JACOBI = "Jacobi decoding: guess a block, refine it in parallel"
WINDOW = "The 2D window: keep the trajectories"
POOL = "The n-gram pool"
VERIFY = "Verification: checked in the same forward pass"
RELATIVES = "Why not a draft model?"
MASK = "One step's anatomy: the attention mask"
SPEED = "From tokens per step to seconds"
PLAY = "Play with it"
# The questions' options, as the page must label them (a change on the page fails the walk here, not silently).
OPTIONS = {
    ONE_TOKEN: ["5", "10", "20"],
    JACOBI: ["1", "2", "3 or more"],
    WINDOW: ["0 or 1", "2 to 3", "4 or more"],
    POOL: ["none", "1 to 3", "4 or more"],
    VERIFY: ["1", "2", "3 or more"],
    RELATIVES: ["none", "1 to 3", "4 or more"],
    MASK: ["under 20", "20 to 40", "over 40"],
    SPEED: ["yes", "no"],
}


# -- readings of one step --------------------------------------------------------------------------------------
def seconds(step) -> float:
    """A step's time: the model's forward, the engine's work around it, drafting."""
    return step.forward_s + step.overhead_s + step.draft_s


def shown_step(run: RunTrace, lane: str, k: int):
    """The lane's step on screen at clock step k (a lane that finished stays on its last step)."""
    steps = getattr(run, lane).steps
    return steps[max(0, min(k, len(steps) - 1))]


def final_at(run: RunTrace, pos: int):
    """The final text's token at absolute position `pos` (None where the run wrote nothing)."""
    i = pos - len(run.prompt_ids)
    return run.parallel.tokens[i] if 0 <= i < len(run.parallel.tokens) else None


def fed_guesses(step) -> list[tuple[int, int]]:
    """(absolute position, token) of every window guess the step fed the model, level by level."""
    if not step.levels_before:
        return []
    layout = step.layout
    rows = [r for r, kind in enumerate(layout.token_kinds()) if kind in (1, 2)]  # window levels 0 and >= 1
    positions = layout.positions()
    tokens = [t for level in step.levels_before for t in level]
    return [(step.position + int(positions[r]), t) for r, t in zip(rows, tokens)]


def new_guesses(step) -> list[tuple[int, int]]:
    """(absolute position, token) of the step's new level: the model's output after each newest-level guess is its
    guess for the next position."""
    fed = fed_guesses(step)
    newest = fed[len(fed) - len(step.new_level) :] if step.new_level and fed else []
    return [(pos + 1, t) for (pos, _), t in zip(newest, step.new_level)]


def right(run: RunTrace, cells) -> list[bool]:
    return [final_at(run, pos) == t for pos, t in cells]


def kept(step) -> int:
    """Guesses (draft tokens) the step kept: how far the winning candidate agrees with what the step emitted."""
    if step.winner < 0:
        return 0
    n = 0
    for guess, emitted in zip(step.candidates[step.winner], step.accepted):
        if guess != emitted:
            break
        n += 1
    return n


def tokens_fed(step, prompt_length: int) -> int:
    """Tokens the step put through the model: x, every window guess and every verification token (a token tree
    feeds a shared prefix once); Jacobi verifies its block where it is fed; a prefill reads the prompt."""
    if step.kind == "prefill":
        return prompt_length
    if step.kind == "autoregressive":
        return 1
    window = sum(len(level) for level in step.levels_before)
    if step.kind == "jacobi":
        return 1 + window
    if step.tree or step.kind not in ("lookahead", "warmup"):
        verify = len({tuple(c[: i + 1]) for c in step.candidates for i in range(len(c))})
    else:
        verify = sum(len(c) for c in step.candidates)
    return 1 + window + verify


def pool_replay(run: RunTrace):
    """The n-gram pool after each step, replayed from the steps' added n-grams by the policy the chapter states: at
    most G n-grams per key, a new one evicts the least recently added, adding one already there adds it again. Yields
    (step, {key: continuations, least recently added first}); the dict is the same object, updated in place."""
    pool: dict[int, list] = {}
    for step in run.parallel.steps:
        for gram in step.ngrams_added:
            held = pool.setdefault(gram[0], [])
            cont = tuple(gram[1:])
            if cont in held:
                held.remove(cont)
            held.append(cont)
            if len(held) > run.config.guess:
                held.pop(0)
        yield step, pool


def pool_after(run: RunTrace, k: int) -> dict[int, list]:
    """The pool after the step shown at clock step k (keys that hold nothing left out)."""
    last = shown_step(run, "parallel", k).index
    for step, pool in pool_replay(run):
        if step.index == last:
            return {key: list(held) for key, held in pool.items() if held}
    return {}


def noise_spreads(run: RunTrace) -> dict:
    """The spreads the noise band is taken from, read from the run: how far its own greedy steps drifted (the mean
    step time of the first half of its decoding steps against the second half's) and the floor its machine measured
    in the process that ran it (`machine.noise`). "this run's own greedy steps differed by A% between its first and
    second half (a greedy step on this run's device varied by F% within one measurement made before the race), so
    differences within B% are noise", the wider first."""
    percent = lambda r: f"{int(100 * (r - 1) + 0.5)}%"  # noqa: E731
    own = drift([seconds(s) for s in decoding_steps(run.baseline)])
    floor = run.machine.noise if run.machine.noise >= 1 else None
    ratio = max(x for x in (own, floor, 1.0) if x is not None)
    out = {"ratio": ratio, "noise_band": percent(ratio)}
    if own is not None:
        out["noise_own"] = percent(own)
    if floor is not None:
        out["noise_floor"] = percent(floor)
    return out


def drift(greedy_seconds: list[float]) -> float | None:
    """Greedy's mean decoding step time over the first half of its steps against the second half's, the larger over
    the smaller (None under 4 steps)."""
    if len(greedy_seconds) < 4:
        return None
    half = len(greedy_seconds) // 2
    first, second = sum(greedy_seconds[:half]) / half, sum(greedy_seconds[half:]) / (len(greedy_seconds) - half)
    return max(first, second) / min(first, second)


def noise_band(run: RunTrace) -> float:
    """The band two timings of `run` must differ by: its own drift or its device's floor, the wider."""
    return noise_spreads(run)["ratio"]


def decoding_steps(method):
    """Every step but step 0, which reads the prompt."""
    return method.steps[1:]


def mean_seconds(method) -> float:
    steps = decoding_steps(method)
    return sum(map(seconds, steps)) / len(steps) if steps else 0.0


# -- the facts -------------------------------------------------------------------------------------------------
def facts(chapter: str, run: RunTrace, k: int, lab: dict | None = None, bench=()) -> dict:
    """name -> value of every fact the chapter titled `chapter` states about `run` at clock step `k`; exactly the
    facts the chapter shows there (floats are compared at the precision shown). `lab` is the lab data the page
    carries, `bench` the bench's speed-ups for this run's prompt and setting (a gallery run's; none for others).
    KeyError for a chapter this reading does not know."""
    step = shown_step(run, "parallel", k)
    return READERS[chapter](run, k, step, {**(lab or {}), "bench": list(bench)})


def _one_token_per_pass(run, k, step, lab):
    # "after step k, greedy decoding has written T tokens in S forward passes ... A decoding step took M ms on
    # average" (step 0 reads the prompt: it is not a decoding step)
    done = run.baseline.steps[: shown_step(run, "baseline", k).index + 1]
    return {
        "step": k,
        "baseline_tokens": sum(len(s.accepted) for s in done),
        "baseline_steps": len(done),
        "baseline_step_ms": 1000 * mean_seconds(run.baseline),
    }


def _jacobi(run, k, step, lab):
    # "guesses W tokens per step and needed S steps for T tokens: C tokens per step"; "in step s the block fed W
    # guesses; R of them were right for their positions, and the step kept K"; "over the whole run, R of the F
    # guesses fed were right for their positions, and K were kept; the other S right guesses were thrown away"
    p = run.parallel
    out = {
        "jacobi_window": run.config.window,
        "jacobi_steps": len(p.steps),
        "jacobi_tokens": len(p.tokens),
        "jacobi_compression": len(p.tokens) / len(p.steps),
    }
    fed = rights = kept_all = stranded = 0
    for s in decoding_steps(p):
        marks, n = right(run, fed_guesses(s)), kept(s)
        fed += len(marks)
        rights += sum(marks)
        kept_all += n
        stranded += sum(marks[n:])  # right, but behind the kept prefix: not kept
    out.update(right_guesses=rights, fed_guesses=fed, kept_guesses=kept_all, stranded=stranded)
    if step.kind == "jacobi":
        out.update(
            step=step.index,
            step_right_fed=sum(right(run, fed_guesses(step))),
            step_kept=kept(step),
            step_wrote=len(step.accepted),
        )
    return out


def _window(run, k, step, lab):
    # "W = , N = . In step s the window holds L of its N-1 levels; ... R of its W [new] guesses are right";
    # "over this run R of M new guesses turned out right for their position"
    if not step.levels_before:
        return {}
    made = [c for s in decoding_steps(run.parallel) for c in new_guesses(s)]
    rights = sum(right(run, made))
    return {
        **_relabelled(run),
        "W": run.config.window,
        "N": run.config.ngram,
        "step": step.index,
        "levels": len(step.levels_before),
        "levels_max": run.config.ngram - 1,
        "new_right": sum(right(run, new_guesses(step))),
        "new_made": len(step.new_level),
        "guesses_right": rights,
        "guesses_made": len(made),
        "guesses_right_share": percent(rights / max(len(made), 1)),
    }


def percent(share: float) -> str:
    """A share as the page words one: whole percents, one decimal under 10% (3 of 600 is 0.5%, not 1%), halves up."""
    p = 100 * share
    return f"{int(10 * p + 0.5) / 10:.1f}%" if 0 < p < 10 else f"{int(p + 0.5)}%"


def _relabelled(run) -> dict:
    """ "Step s accepted A tokens; ... at the next step every guess the window kept, its token unchanged, stands D
    positions further on": the run's first full-window step (two levels or more) that accepted several tokens and
    whose next step fed the full window at the same width, and how far its level-1 column-0 guess moved, read from
    the positions each step fed it at."""
    steps, levels = run.parallel.steps, run.config.ngram - 1
    before = 0
    for i, s in enumerate(steps):
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        full = lambda st: len(st.levels_before) == levels >= 2  # noqa: E731
        if i > 0 and nxt and len(s.accepted) >= 2 and full(s) and full(nxt) and nxt.window == s.window:
            assert nxt.levels_before[0] == s.levels_before[1], "the kept level changed its tokens"
            p_now = len(run.prompt_ids) + before - 1  # x, the last accepted token, is fed at p
            p_next = p_now + len(s.accepted)
            at_now = p_now + int(s.layout.positions()[1 + s.window])  # level 1, column 0
            at_next = p_next + int(nxt.layout.positions()[1])  # level 0, column 0
            return {"multi_step": s.index, "multi_accepted": len(s.accepted), "multi_shift": at_next - at_now}
        before += len(s.accepted)
    return {}


def kept_by_source(run) -> dict:
    """ "its steps kept T draft tokens: A from n-grams the pool last took from the window's columns, B from n-grams
    of the text": each step's kept tokens by where the pool last took the winning candidate from, the pool replayed
    with the engine's order of adding (a full window's columns, one n-gram each, then the text's)."""
    from lade_core.pool import NGramPool

    pool, out = NGramPool(run.config.guess), {"window": 0, "text": 0, "copy": 0}
    for s in run.parallel.steps:
        if s.winner >= 0 and kept(s):
            pooled = s.winner < len(s.candidates) - s.copied
            out[pool.source(s.input_token, s.candidates[s.winner]) if pooled else "copy"] += kept(s)
        columns = s.window if s.kind == "lookahead" else 0
        pool.add_all(s.ngrams_added[:columns], source="window")
        pool.add_all(s.ngrams_added[columns:], source="text")
    total = sum(out.values())
    if not total:
        return {}
    said = {"kept_total": total, "kept_window": out["window"]}
    if run.config.pool != "paper":
        said["kept_text"] = out["text"]
    if out["copy"]:
        said["kept_copy"] = out["copy"]
    return said


def _pool(run, k, step, lab):
    # "the lookup under x found F candidate(s). After the step the pool holds P n-grams under K keys: the step added
    # A and evicted E, and x's key now holds H"
    if run.method != "lookahead":
        return {}
    pool = pool_after(run, k)
    return {
        **kept_by_source(run),
        "step": step.index,
        "found": len(step.candidates),
        "pool_size": sum(map(len, pool.values())),
        "pool_keys": len(pool),
        "added": len(step.ngrams_added),
        "evicted": len(step.ngrams_evicted),
        "held": len(pool.get(step.input_token, ())),
    }


def _verify(run, k, step, lab):
    # "candidate C matched M token(s) and the step emitted E token(s)"; "the two texts are identical / different"
    if step.kind == "prefill":
        return {}
    out = {"step": step.index, "emitted": len(step.accepted)}
    if step.winner >= 0:
        out.update(winner=step.winner + 1, matched=kept(step))
    if run.sampling.temperature == 0:
        out["identical"] = "identical" if run.parallel.tokens == run.baseline.tokens else "different"
        if lab.get("numerics"):  # the page carries the numerics experiment: its paragraph follows
            out.update(numerics(run))
    return out


def numerics(run: RunTrace) -> dict:
    """ "in fp32 lookahead's text was identical to greedy's on F of P benchmark prompts; in bf16 on B of P. On the
    prompt X in bf16 the texts part at token #D, where the model's two most likely tokens differ by G in logit ...
    Greedy itself, fed its own tokens in one wider pass, first differs at token #W" (X: this run's prompt if it
    parted in bf16, else the first that did), read from the experiment's own files in assets/bench/."""
    from lade_core.measure.prompts import load_prompts
    from lade_core.paths import BENCH

    rows = {
        dtype: json.loads((BENCH / f"numerics-{dtype}.json").read_text())["prompts"]
        for dtype in ("float32", "bfloat16")
    }
    out = {
        "fp32_identical": sum(bool(r["identical"]) for r in rows["float32"]),
        "fp32_prompts": len(rows["float32"]),
        "bf16_identical": sum(bool(r["identical"]) for r in rows["bfloat16"]),
        "bf16_prompts": len(rows["bfloat16"]),
    }
    text = {p["id"]: p["prompt"] for p in load_prompts()}
    parted = [
        r
        for r in rows["bfloat16"]
        if not r["identical"] and r["first_divergence"] is not None and r["logit_gap"] is not None
    ]
    example = next((r for r in parted if text.get(r["id"]) == run.prompt), parted[0] if parted else None)
    if example is not None:  # "Over the P prompts whose bf16 texts parted, greedy's own wider pass first differs at
        # the same token on K of them"
        out["bf16_parted"] = len(parted)
        out["bf16_reproduced"] = sum(
            (r.get("batch_shape") or {}).get("first_divergence") == r["first_divergence"] for r in parted
        )
        out.update(bf16_divergence=example["first_divergence"], bf16_gap=float(example["logit_gap"]))
        wide = (example.get("batch_shape") or {}).get("first_divergence")
        if wide is not None:
            out["bf16_wide"] = wide
    return out


def _mask(run, k, step, lab):
    # "Step s fed F tokens: x, L level(s) of W and V verification token(s)"
    if step.kind in ("prefill", "autoregressive"):
        return {}
    fed, levels = tokens_fed(step, len(run.prompt_ids)), len(step.levels_before)
    return {"step": step.index, "fed": fed, "levels": levels, "W": step.window, "nodes": fed - 1 - levels * step.window}


def _speed(run, k, step, lab):
    # "wrote C tokens per step, feeding F tokens per step on average ... such a step took R x as long as a one-token
    # step, so the measured speed-up is S x"; "puts an F-token forward ... at G x a one-token forward: the same
    # compression would give about Z x there"
    p, b = run.parallel, run.baseline
    compression = len(p.tokens) / len(p.steps)
    decoding = decoding_steps(p)
    fed = sum(tokens_fed(s, len(run.prompt_ids)) for s in decoding) / len(decoding) if decoding else 1.0
    out = {
        "compression": compression,
        "fed": fed,
        "step_cost": mean_seconds(p) / mean_seconds(b),
        "greedy_ms": 1000 * mean_seconds(b),
        "speedup": sum(map(seconds, b.steps)) / max(sum(map(seconds, p.steps)), 1e-9),
    }
    # "the bench measured the same prompt and setting at A, B"; "On that device it is V": faster or
    # slower only when every measurement of this prompt and setting (this recording and the bench's) is beyond the
    # noise band, else about as fast; the band in words from the run's own drift and its device's floor
    spreads = noise_spreads(run)
    noise = spreads.pop("ratio")
    out.update(spreads)
    if lab["bench"]:
        out["bench_speedups"] = ", ".join(f"{v:.2f}x" for v in lab["bench"])
    measured = [out["speedup"], *lab["bench"]]
    out["verdict"] = (
        "faster than greedy"
        if all(v > noise for v in measured)
        else "slower than greedy"
        if all(v < 1 / noise for v in measured)
        else "about as fast as greedy"
    )
    # "The speed lab's roofline model (a prediction) puts this run's steps on one H100 running a 7B model at C x a
    # one-token forward, so the same compression would give about S x there": C is the model's (lade_core's lab,
    # the page's source for it), S follows from the words
    if lab.get("paper"):  # "up to X on HumanEval (completion) (CodeLlama 13B, the blog's figure)": the register's
        # best single-device code-completion row
        register = json.loads((ROOT / "assets" / "lab" / "paper.json").read_text())
        one_gpu = [
            r["speedup"]
            for r in register["rows"]
            if r.get("devices", register["rows_defaults"]["devices"]) == 1 and "completion" in r["dataset"]
        ]
        out["paper_code_one_gpu"] = max(one_gpu)
    if lab.get("parallel_run"):
        out.update(parallel_run_facts())
    if lab.get("gpu_curves"):
        from lade_core.measure.lab import predict_run

        predicted = predict_run(run, "h100", "7B")
        cost = predicted["step_cost"]
        # "(L x to H x: with its steps resampled, this run's tokens per step range from A to B, ...)": the
        # prediction's range, and the 10th and 90th percentile of the run's compression over its steps drawn again
        # (the seeded draws of tests/lab_facts.py, the lab's reading)
        from lab_facts import p10_p90, run_numbers

        low, high = predicted["predicted_speedup_range"]
        draws = run_numbers(run)["draws"]
        band = p10_p90(draws[0]) if draws is not None else [compression, compression]
        out.update(gpu_cost=cost, gpu_speedup=compression / cost, gpu_low=low, gpu_high=high)
        out.update(compression_low=band[0], compression_high=band[1])
        single = (lab.get("cpu") or {}).get("single")
        own = run.machine.curve if run.machine else ()
        if own:  # the curve the run's own machine measured where it was recorded comes first (the page's Lade.curves)
            single = {"tokens": [p.tokens for p in own], "relative": [p.seconds / own[0].seconds for p in own]}
        # "the curve ... reads Y x at F tokens ... this run's steps fed from A to B tokens": the CPU curve at the
        # run's mean width, straight between its points on the chart's log axis (said only inside the curve)
        if single and decoding and single["tokens"][0] <= fed <= single["tokens"][-1]:
            import numpy as np

            widths = [tokens_fed(s, len(run.prompt_ids)) for s in decoding]
            curve_x, curve_y = np.log(single["tokens"]), single["relative"]
            out.update(
                curve_at_fed=float(np.interp(np.log(fed), curve_x, curve_y)), fed_min=min(widths), fed_max=max(widths)
            )
    return out


def parallel_run_facts() -> dict:
    """The speed chapter's recorded Lookahead Parallelism run, read from its file (assets/lab/parallel-2.json) by the
    words: "N processes ... W, N, G ... wrote T tokens in S steps, the same tokens as greedy decoding in its S' steps.
    Had each step run on one device it would have fed F tokens on average; dealt out, the processes fed F1 and F2,
    and the busier of them, step by step, B. The speed lab's simulation, which deals one average step the same way,
    gives M for the busiest device"; "each process sends X bytes on average" (its part of the all-gather: the least
    any process sent that step, the others adding K/V only); "On the A of D steps that accepted a candidate's tokens
    ... K KB a token" (2 x layers x kv heads x head dim fp32 values, from the model register's shape)."""
    from lab_facts import busiest

    from lade_core.measure.roofline import model_shape

    doc = json.loads((ROOT / "assets" / "lab" / "parallel-2.json").read_text())["run"]
    steps = [s for s in doc["parallel"]["steps"] if s.get("ranks")]
    k, cfg = len(steps[0]["ranks"]), doc["config"]
    prompt_length = len(doc["prompt_ids"])
    one = [tokens_fed(types.SimpleNamespace(**s), prompt_length) for s in steps]
    fed = [[s["ranks"][r]["fed"] for s in steps] for r in range(k)]
    out = {
        "par_devices": k,
        "par_window": cfg["window"],
        "par_ngram": cfg["ngram"],
        "par_guess": cfg["guess"],
        "par_tokens": len(doc["parallel"]["tokens"]),
        "par_steps": len(doc["parallel"]["steps"]),
        "par_greedy_steps": len(doc["baseline"]["steps"]),
        "par_fed_one": sum(one) / len(one),
        "par_busiest": sum(max(f) for f in zip(*fed)) / len(steps),
        "par_simulated": busiest(sum(one) / len(one), cfg["window"], cfg["guess"], k),
        "par_gathered": sum(min(r["sent"] for r in s["ranks"]) for s in steps) / len(steps),
        "par_broadcasts": sum(1 for s in steps if s["winner"] >= 0),
        "par_decoding": len(steps),
        "par_kv_kb": 4 * model_shape("135M").kv_values_per_position / 1000,
    }
    out.update({f"par_fed_{r + 1}": sum(f) / len(f) for r, f in enumerate(fed)})
    return out


LANE_NAMES = METHOD_NAMES  # the engine's one table; the page writes these words


def lane_kind(lane) -> str:
    """A lane's method, or "lookahead+pld" for a lookahead lane that also verifies prompt lookup's copies."""
    return HYBRID if lane.method == "lookahead" and lane.config.lookup else lane.method


def _race(run, key: str = "") -> dict:
    # "X wrote T tokens per step" for each method beside greedy; "All N texts are identical to greedy's"; "Fewest
    # steps: NAME, S for X, ..."; "Fastest on the clock: NAME, at V x greedy's speed" (or "A and B were about as
    # fast (V x to W x ...)" when lanes are within the noise band of the fastest); where the fewest steps were not
    # the fastest, "each of its steps took C x as long as a greedy step". `key` prefixes every name.
    lanes = list(run.all_lanes)
    out = {f"tps_{lane_kind(lane)}": len(lane.run.tokens) / len(lane.run.steps) for lane in lanes}
    for lane in lanes:  # "lookahead (W = 4, N = 3, G = 4) wrote ..." (in the first race; the second runs the same)
        if lane.method == "lookahead" and not key:
            out.update(W=lane.config.window, N=lane.config.ngram, G=lane.config.guess)
    if run.sampling.temperature == 0 and all(lane.run.tokens == run.baseline.tokens for lane in lanes):
        out["identical_lanes"] = len(lanes) + 1
    fewest = min(lanes, key=lambda lane: len(lane.run.steps))
    out["fewest"] = LANE_NAMES[lane_kind(fewest)]
    out.update(
        {f"steps_{lane_kind(lane)}": len(lane.run.steps) for lane in lanes}, steps_greedy=len(run.baseline.steps)
    )
    greedy_s = sum(map(seconds, run.baseline.steps))
    speed = {id(lane): greedy_s / max(sum(map(seconds, lane.run.steps)), 1e-9) for lane in lanes}
    ranked = sorted(lanes, key=lambda lane: -speed[id(lane)])
    spreads = noise_spreads(run)
    noise = spreads.pop("ratio")
    tied = [lane for lane in ranked if speed[id(ranked[0])] <= noise * speed[id(lane)]]
    if len(tied) > 1:
        words = [LANE_NAMES[lane_kind(lane)] for lane in tied]
        out.update(
            fastest=", ".join(words[:-1]) + " and " + words[-1],
            fastest_speed=speed[id(tied[0])],
            second_speed=speed[id(tied[-1])],
        )
    else:
        out.update(fastest=LANE_NAMES[lane_kind(ranked[0])], fastest_speed=speed[id(ranked[0])])
    if all(lane is not fewest for lane in tied):
        # "each of its steps took C x as long as a greedy step, its forward pass F x a greedy forward and the rest
        # the engine's own work": decoding steps only, forward_s alone for F
        out["fewest_cost"] = mean_seconds(fewest.run) / mean_seconds(run.baseline)
        forward = lambda m: sum(s.forward_s for s in decoding_steps(m)) / len(decoding_steps(m))  # noqa: E731
        out["fewest_forward"] = forward(fewest.run) / forward(run.baseline)
    if len(tied) > 1:  # "... were about as fast (...): greedy runs of one prompt here have differed by up to B% ..."
        out.update(spreads)
    return {key + name: value for name, value in out.items()}


def _relatives(run, k, step, lab):
    # the race on screen (`_race`); "only R% of its [the early-exit lane's] draft tokens were kept, and it ran at
    # S x greedy's speed"; and where the page carries the second race (an answer that is new text), that race read
    # the same way from its gallery run, each name prefixed "new_"
    out = _race(run)
    lanes = list(run.all_lanes)
    greedy_s = sum(map(seconds, run.baseline.steps))
    early = next((lane.run for lane in lanes if lane.method == "early-exit"), None)
    if early is not None:
        offered = kept_all = 0
        for s in decoding_steps(early):
            offered += len({tuple(c[: i + 1]) for c in s.candidates for i in range(len(c))})
            kept_all += kept(s)
        out["early_exit_rate"] = percent(kept_all / offered if offered else 0)
        out["early_exit_speed"] = greedy_s / max(sum(map(seconds, early.steps)), 1e-9)
    if lab.get("second_race"):
        from app import gallery

        out.update(_race(gallery.load(gallery.by_role("race-new-text")), "new_"))
    return out


READERS = {
    ONE_TOKEN: _one_token_per_pass,
    JACOBI: _jacobi,
    WINDOW: _window,
    POOL: _pool,
    VERIFY: _verify,
    RELATIVES: _relatives,
    MASK: _mask,
    SPEED: _speed,
    PLAY: lambda *_: {},
}


def same(shown: str, want) -> bool:
    """Whether a fact's text on screen says `want` (a float at the precision it is printed with)."""
    if isinstance(want, float):
        digits = len(shown.split(".")[1]) if "." in shown else 0
        return abs(float(shown) - want) <= 0.51 * 10**-digits + 1e-9
    return shown == str(want)


# -- the questions -----------------------------------------------------------------------------------------------
def _nearest(n: int, values) -> int:
    """The option nearest n (a tie goes to the larger)."""
    return min(range(len(values)), key=lambda i: (abs(n - values[i]), -values[i]))


def answer(chapter: str, run: RunTrace, k: int, lab: dict | None = None) -> tuple[int, int] | None:
    """(the option the trace makes right, the step the reveal shows) for the question of the chapter titled
    `chapter`, asked at clock step k (None: the chapter asks none)."""
    nxt = shown_step(run, "parallel", k + 1)
    if chapter == ONE_TOKEN:  # "After 10 more steps, how many more tokens will autoregressive decoding have written?"

        def count(j):
            return sum(len(s.accepted) for s in run.baseline.steps[: shown_step(run, "baseline", j).index + 1])

        return _nearest(count(k + 10) - count(k), (5, 10, 20)), k + 10
    if chapter in (JACOBI, VERIFY):  # "How many tokens will the next step accept / emit?" 1, 2, 3 or more
        return min(len(nxt.accepted), 3) - 1 if nxt.accepted else 0, k + 1
    if chapter == WINDOW:  # "How many of the next step's new guesses will turn out right?" 0 or 1, 2 to 3, 4 or more
        n = sum(right(run, new_guesses(nxt)))
        return (0 if n <= 1 else 1 if n <= 3 else 2), k + 1
    if chapter == POOL:  # "How many candidates will the next step's lookup find?" none, 1 to 3, 4 or more
        n = len(nxt.candidates)
        return (0 if n == 0 else 1 if n <= 3 else 2), k + 1
    if chapter == RELATIVES:  # "In how many of prompt lookup's steps did it accept more tokens than a lookahead
        # step ever can (N)?" none, 1 to 3, 4 or more; N is the plain lookahead lane's
        pld = next((lane for lane in run.all_lanes if lane_kind(lane) == "pld"), None)
        plain = next((lane for lane in run.all_lanes if lane_kind(lane) == "lookahead"), None)
        if pld is None or plain is None:
            return -1, k
        n = sum(len(s.accepted) > plain.config.ngram for s in pld.run.steps)
        return (0 if n == 0 else 1 if n <= 3 else 2), k
    if chapter == MASK:  # "How many tokens will the next step feed to the model?" under 20, 20 to 40, over 40
        n = 1 if nxt.kind in ("prefill", "autoregressive") else tokens_fed(nxt, len(run.prompt_ids))
        return (0 if n < 20 else 1 if n <= 40 else 2), k + 1
    if chapter == SPEED:  # "On this CPU, is W = 15 (N = 5, G = 15) faster than W = 7?" from the bench shipped
        if not lab or "cpu_choice" not in lab:
            return -1, k
        return (0 if lab["cpu_choice"]["wide"] > lab["cpu_choice"]["narrow"] else 1), k
    return None


# -- where each chapter opens -------------------------------------------------------------------------------------
def full_window(run, s) -> bool:
    """A lookahead step whose window holds all its N-1 levels."""
    return s.kind == "lookahead" and len(s.levels_before) == run.config.ngram - 1


def _stranded_here(run, s) -> bool:
    marks = right(run, fed_guesses(s))
    return any(marks[kept(s) :])


def last_step(run) -> int:
    """The clock's last step: where the longest lane ends."""
    return max(len(lane.run.steps) for lane in (*run.all_lanes, types.SimpleNamespace(run=run.baseline))) - 1


# Each rule as the page words it: a test over steps (the first step from 1 that passes) or a fixed step.
RULES = {
    "step 12, or the run's last step if it is shorter": ("at", lambda run: min(12, last_step(run))),
    "the first step where a guess it fed was right for its position but was not kept": (
        "test",
        lambda run, s: s.kind == "jacobi" and _stranded_here(run, s),
    ),
    "the first step that fed a guess right for its position": (
        "test",
        lambda run, s: s.kind == "jacobi" and any(right(run, fed_guesses(s))),
    ),
    "the first full-window step where a new guess is right": (
        "test",
        lambda run, s: full_window(run, s) and any(right(run, new_guesses(s))),
    ),
    "the first full-window step": ("test", full_window),
    "the first lookahead step whose lookup found at least 2 candidates": (
        "test",
        lambda run, s: s.kind == "lookahead" and len(s.candidates) >= 2,
    ),
    "the first step whose lookup found a candidate": ("test", lambda run, s: len(s.candidates) >= 1),
    "the first step whose winning candidate matched at least 2 tokens": (
        "test",
        lambda run, s: max(s.match_lengths, default=0) >= 2,
    ),
    "the first step where a candidate matched": ("test", lambda run, s: max(s.match_lengths, default=0) >= 1),
    "the first full-window step with at least 2 candidates": (
        "test",
        lambda run, s: full_window(run, s) and len(s.candidates) >= 2,
    ),
    "the run's last step": ("at", last_step),
    "the race's last step": ("at", last_step),
    "step 1": ("at", lambda run: 1),
    "step 0": ("at", lambda run: 0),
}


def landing(rules: list[str], run: RunTrace) -> tuple[int, int]:
    """(the step a chapter with these rules opens on, the index of the rule that chose it): the first rule some step
    satisfies, tried in order. A rule this reading does not know fails loudly (KeyError)."""
    for i, text in enumerate(rules):
        how, rule = RULES[text]
        if how == "at":
            return max(0, min(rule(run), last_step(run))), i
        found = next((s.index for s in run.parallel.steps[1:] if rule(run, s)), None)
        if found is not None:
            return found, i
    return 0, len(rules)


# -- reading the page (the browser tests share these) ------------------------------------------------------------
# Where a digit may stand on the page without being a computed fact: inside a fact, a citation of a register, a
# provenance string (a file, a machine, a run's settings, a prompt), a token of the text (data), a view or chart
# (drawn from the trace and tested as views), a control, code, the question and its answer (read by `answer`), and
# the glossary's tips (definitions with their sources).
NOT_PROSE = ".fact, .cite, .source, .tk, svg, table, code, kbd, select, .chart-box, .view, .term-tip, #lesson-predict"
# Numbers that are definitions, not measurements: the prefill is step 0, columns and levels count from 0, a window
# has N-1 levels and a step feeds 1 + (W+G)(N-1) tokens, greedy writes 1 token a step, the window is 2D; and the
# names of number formats (fp32, bf16).
DEFINITIONS = re.compile(
    r"\bstep 0\b|\b[Cc]olumn 0\b|\blevel 0\b|\bN-1\b|1 \+ \(W\+G\)\(N-1\)|against 1 for greedy|\b2D\b"
    r"|\b(?:fp32|fp16|bf16|float32|float16|bfloat16)\b"
)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
UNREAD = """([root, skip]) => {
  const out = [], cites = [], el = document.querySelector(root);
  if (!el) return [out, cites];
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode;
    if (/\\d/.test(n.data) && !n.parentElement.closest(skip))
      out.push([n.data, n.parentElement.closest('p, li, dd, div').textContent.slice(0, 200)]);
  }
  for (const c of el.querySelectorAll('.cite')) cites.push([c.dataset.register, c.textContent]);
  return [out, cites];
}"""


@lru_cache(maxsize=1)
def registers() -> dict[str, str]:
    """The text of each register a citation may quote, by its id in the one index (assets/lab/register.json): a
    register file's text, or for one held in code the values and docstrings it names."""
    from lade_core.measure.roofline import ACCELERATORS, MODELS, Assumptions, Bounds

    in_code = {
        "devices": " ".join(a.label for a in ACCELERATORS),
        "sizes": " ".join(m.size for m in MODELS),
        "assumptions": f"{Assumptions.__doc__} {Bounds.__doc__}",
        "glossary": (ROOT / "app" / "static" / "lade-notes.js").read_text(encoding="utf-8"),
    }
    index = json.loads((ROOT / "assets" / "lab" / "register.json").read_text(encoding="utf-8"))
    return {
        r["id"]: (ROOT / r["file"]).read_text(encoding="utf-8") if "file" in r else in_code[r["id"]]
        for r in index["registers"]
    }


def assert_every_number_read(page, root: str) -> None:
    """Every number in `root`'s prose is a named fact (read by a test against its own reading), a definition, or a
    citation whose numbers its register states: no digit comes from anywhere else."""
    prose, cites = page.evaluate(UNREAD, [root, NOT_PROSE])
    unread = [(t.strip(), where) for t, where in prose if NUMBER.search(DEFINITIONS.sub("", t))]
    assert not unread, (root, "numbers that are neither a fact, a definition nor a citation:", unread)
    for register, text in cites:
        assert register in registers(), (register, text)
        stated = set(NUMBER.findall(registers()[register]))
        assert set(NUMBER.findall(text)) <= stated, (register, text, "numbers its register does not state")


def shown_facts(page) -> tuple[dict, int, str]:
    """The facts `#lesson-text` shows (name -> text), its step and its run's handle; a fact may be stated twice
    only with one value, and no number in the chapter's prose stands outside a fact, a definition or a citation."""
    text = page.locator("#lesson-text")
    shown = {}
    for el in page.locator("#lesson-text .fact").all():
        name, value = el.get_attribute("data-fact"), el.text_content()  # a fact in a closed <details> is shown too
        assert shown.get(name, value) == value, f"the fact {name} is stated twice, as {shown[name]} and {value}"
        shown[name] = value
    assert_every_number_read(page, "#lesson-text")
    return shown, int(text.get_attribute("data-step")), text.get_attribute("data-run")


def assert_facts(chapter: str, shown: dict, run: RunTrace, k: int, lab: dict | None = None, bench=()) -> None:
    """Every fact shown agrees with this reading, and the chapter shows exactly the facts this reading says its
    sentences state there (none may vanish or appear unread)."""
    want = facts(chapter, run, k, lab, bench)
    assert set(shown) == set(want), (
        chapter,
        k,
        "shown but not read:",
        set(shown) - set(want),
        "read but not shown:",
        set(want) - set(shown),
    )
    wrong = {name: (shown[name], want[name]) for name in want if not same(shown[name], want[name])}
    assert not wrong, (chapter, k, wrong)
