"""Regenerate the recorded runs shipped in assets/runs/ with the default model: `python -m app.record_assets`.

Each file is `RunTrace.to_json()` of `record_run` on one example prompt (see `examples.RECORDED`), named
`<prompt id>-W<W>N<N>G<G>`, or `<prompt id>-t<temperature>-W<W>N<N>G<G>` for a sampled run. Greedy decoding is
deterministic and sampled runs are seeded, so re-recording changes only the measured times (on the same device and
library versions). `--only NAME` records just that file.
"""

from __future__ import annotations

import argparse

from lade_core import LookaheadConfig, Sampling, load_model, record_run

from .examples import RECORDED, RUNS_DIR, prompt_by_id


def settings(spec: dict) -> tuple[str, LookaheadConfig, Sampling]:
    """(file stem, config, sampling) of one entry of `examples.RECORDED`."""
    config = LookaheadConfig(window=spec["window"], ngram=spec["ngram"], guess=spec["guess"],
                             pool_from_prompt=spec.get("pool_from_prompt", False))
    sampling = Sampling(temperature=spec.get("temperature", 0.0), top_p=spec.get("top_p", 1.0),
                        seed=spec.get("seed", 0))
    mode = "" if sampling.greedy else f"-t{sampling.temperature:g}"
    return f"{spec['id']}{mode}-W{config.window}N{config.ngram}G{config.guess}", config, sampling


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None, help="hub id or local folder (default: the embedded model)")
    parser.add_argument("--only", default=None, help="record only the run with this file stem")
    args = parser.parse_args()
    specs = [(settings(spec), spec) for spec in RECORDED]
    if args.only and args.only not in {name for (name, _, _), _ in specs}:
        parser.error(f"no recorded run is called {args.only!r}")
    lm = load_model(args.model)
    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    for (name, config, sampling), spec in specs:
        if args.only and name != args.only:
            continue
        run = record_run(lm, prompt_by_id(spec["id"]), config, spec["max_new_tokens"], sampling=sampling, title=name)
        (RUNS_DIR / f"{name}.json").write_text(run.to_json())
        print(f"{name}: lookahead {len(run.lookahead.tokens)} tokens in {len(run.lookahead.steps)} steps, "
              f"autoregressive {len(run.greedy.steps)} steps, identical={run.lookahead.tokens == run.greedy.tokens}")


if __name__ == "__main__":
    main()
