"""Regenerate the recorded runs shipped in assets/runs/ with the default model: `python -m app.record_assets`.

Each file is `RunTrace.to_json()` of `record_run` on one example prompt (see `examples.RECORDED`). Greedy decoding
is deterministic, so re-recording changes only the measured times.
"""

from __future__ import annotations

import argparse

from lade_core import LookaheadConfig, load_model, record_run

from .examples import RECORDED, RUNS_DIR, prompt_by_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None, help="hub id or local folder (default: the embedded model)")
    args = parser.parse_args()
    lm = load_model(args.model)
    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    for spec in RECORDED:
        config = LookaheadConfig(window=spec["window"], ngram=spec["ngram"], guess=spec["guess"])
        name = f"{spec['id']}-W{config.window}N{config.ngram}G{config.guess}"
        run = record_run(lm, prompt_by_id(spec["id"]), config, spec["max_new_tokens"], title=name)
        (RUNS_DIR / f"{name}.json").write_text(run.to_json())
        print(f"{name}: lookahead {len(run.lookahead.tokens)} tokens in {len(run.lookahead.steps)} steps, "
              f"greedy {len(run.greedy.steps)} steps, identical={run.lookahead.tokens == run.greedy.tokens}")


if __name__ == "__main__":
    main()
