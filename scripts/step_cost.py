"""What one lookahead step costs at W, N as its verification branch fills: 0, 1, 2, ... G candidates.

Each point is one real `LM.step_forward` with that step's layout, mask, positions and logits rows, on top of a cached
prefix, timed as the median of several runs interleaved with greedy steps on the same cache (one of each in
turn, so the ratio is measured under the same machine load). The g = 0 point is the floor a step at this W, N cannot
go under on this device: the
lookahead branch alone. Writes one JSON file.

    python -m scripts.step_cost -W 15 -N 5 --guesses 0,2,4,8,15 --rounds 3 \
        --out assets/bench/step-cost-15-5.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lade_core import load_model
from lade_core.layout import StepLayout
from lade_core.measure.costcurve import interleaved_medians


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", "-W", type=int, default=15)
    ap.add_argument("--ngram", "-N", type=int, default=5)
    ap.add_argument("--guesses", default="0,2,4,8,15", help="numbers of candidates to time")
    ap.add_argument("--prefix", type=int, default=150, help="tokens already in the KV cache")
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--rounds", type=int, default=2, help="measure everything this many times")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lm = load_model()
    cache = lm.new_cache()
    lm.prefill(cache, [(7 * i) % 1000 + 10 for i in range(args.prefix)])

    def greedy():
        lm.decode_one(cache, 42, args.prefix)
        lm.sync()
        cache.crop(-1)

    def step(g: int):
        layout = StepLayout.plain(args.ngram - 1, args.window, g, args.ngram - 1)
        tokens = [(13 * i) % 1000 + 10 for i in range(layout.size)]

        def run():
            lm.step_forward(cache, tokens, layout)
            lm.sync()
            cache.crop(-layout.size)

        return layout.size, run

    guesses = [int(x) for x in args.guesses.split(",")]
    steps = {g: step(g) for g in guesses}
    rounds = []
    for _ in range(args.rounds):
        fns = {"greedy": greedy, **{g: run for g, (_, run) in steps.items()}}
        medians = interleaved_medians(fns, args.repeats)
        greedy_s = medians["greedy"]
        points = [{"candidates": g, "tokens": steps[g][0], "seconds": medians[g]} for g in guesses]
        rounds.append({"greedy_s": greedy_s, "points": points})
        print(
            f"greedy step {1000 * greedy_s:.1f} ms; W={args.window} N={args.ngram}: "
            + ", ".join(f"g={p['candidates']} ({p['tokens']} tokens) {p['seconds'] / greedy_s:.2f}x" for p in points),
            flush=True,
        )
    result = {
        "command": "python -m scripts.step_cost " + " ".join(sys.argv[1:]),
        "model": lm.name,
        "device": str(lm.device),
        "kernels": lm.kernels,
        "window": args.window,
        "ngram": args.ngram,
        "prefix": args.prefix,
        "rounds": rounds,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
