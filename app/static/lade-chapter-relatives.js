// @ts-check
// The lesson's relatives chapter (`Lade.chapterRelatives`): why lookahead needs no draft model, on a race of one
// prompt across the methods (prompt lookup, early exit, a draft model), in words chosen by the race's own numbers.
const LadeChapterRelatives = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, pct, cite } = Lade.dom;

  /** Where this race's lookahead lanes get their candidates, in words chosen by their settings. @param {Run} run */
  function lookaheadSource(run) {
    const la = run.lanes().filter((l) => l.method === "lookahead");
    const config = (/** @type {string} */ id) => run.settings(id).config;
    if (la.some((l) => l.kind === Lade.dom.HYBRID)) {
      return (
        "This race's lookahead lane also verifies prompt lookup's copies of the text: it is a hybrid (named " +
        "“Lookahead + prompt lookup” here), and the verification view labels its copied candidates."
      );
    }
    const pools = new Set(la.map((l) => config(l.id).pool));
    if (pools.size === 1 && pools.has("paper")) {
      return "Lookahead needs neither: its guesses come from the model itself (here its window's n-grams only, as in the paper).";
    }
    return (
      "Lookahead needs neither: its guesses come from the model itself and from n-grams of the text it has read (this " +
      `race's pool also takes the ${[...pools]
        .filter((p) => p !== "paper")
        .map((p) => (p === "prompt" ? "prompt's" : "answer's"))
        .join(" and ")}).`
    );
  }

  /**
   * @typedef {{ id: string, kind: string, word: string, steps: number, compression: number,
   *   speedup?: number | null, cost: number, forward: number, verdict?: string | null,
   *   setting: { window: number, ngram: number, guess: number } | null }} RaceLane
   * @typedef {{ lanes: RaceLane[], greedy: { word: string, steps: number }, fastest: string[] | null,
   *   band: Band | null, identical: number }} Race
   */

  /** The race on screen, as chapter 6 words a race. @param {Run} run @returns {Race} */
  function raceOf(run) {
    const sp = run.d.speed,
      base = run.meanStep("baseline");
    const same = run.greedy && run.lanes().every((l) => l.run.tokens.join() === run.baseline.tokens.join());
    return {
      lanes: run
        .lanes()
        .filter((l) => l.id !== "baseline")
        .map((l) => ({
          id: l.id,
          kind: l.kind,
          word: run.laneWord(l.id),
          steps: l.run.steps.length,
          compression: run.compression(l.id),
          speedup: sp ? sp.lanes[l.id].speedup : null,
          verdict: sp ? sp.lanes[l.id].verdict : null,
          cost: base ? run.meanStep(l.id) / base : 0,
          forward: run.meanForward("baseline") ? run.meanForward(l.id) / run.meanForward("baseline") : 0,
          setting: l.method === "lookahead" ? run.settings(l.id).config : null,
        })),
      greedy: { word: run.laneWord("baseline"), steps: run.baseline.steps.length },
      fastest: sp ? sp.fastest : null,
      band: sp ? sp.band : null,
      identical: same ? run.lanes().length : 0,
    };
  }

  /** The lab's summary of the second race (app/render/boot.py second_race), as chapter 6 words a race.
   * @param {SecondRace} s @returns {Race} */
  function raceOfSummary(s) {
    // the summary has every lane of the race, greedy's among them (boot.py `second_race`)
    const greedy = /** @type {SecondRaceLane} */ (s.lanes.find((l) => l.id === "baseline"));
    return {
      lanes: s.lanes
        .filter((l) => l.id !== "baseline")
        .map((l) => ({ ...l, word: l.name, cost: l.step_cost, forward: l.forward_cost })),
      greedy: { word: greedy.name, steps: greedy.steps },
      fastest: s.fastest,
      band: s.band,
      identical: s.identical,
    };
  }

  /** A race's tokens per step, who needed the fewest steps and who was fastest on the clock, and, where the fewest
   * steps did not win the clock, the step cost that is why. `key` prefixes the facts' names (one race per prefix).
   * @param {Race} race @param {Kid[]} intro @param {string} key @param {typeof Lade.dom.fact} fact
   * @param {typeof Lade.dom.P} P */
  function raceWords(race, intro, key, fact, P) {
    const others = race.lanes,
      byId = (/** @type {string} */ id) => /** @type {RaceLane} */ (others.find((l) => l.id === id));
    const fewest = others.reduce((a, b) => (b.steps < a.steps ? b : a));
    const fastest = race.fastest ? race.fastest.map(byId) : [];
    const list = (/** @type {RaceLane[]} */ ls) =>
      ls.map((l, i) => (i ? (i === ls.length - 1 ? " and " : ", ") : "") + l.word).join("");
    const clock = !fastest.length
      ? ["the clock's verdict comes when the race ends."]
      : fastest.length > 1
        ? [
            "on the clock ",
            fact(`${key}fastest`, list(fastest)),
            " were about as fast (",
            fact(`${key}fastest_speed`, fmt(fastest[0].speedup || 0)),
            "x to ",
            fact(`${key}second_speed`, fmt(fastest[fastest.length - 1].speedup || 0)),
            "x greedy's speed): ",
            Lade.notes.bandWords(/** @type {Band} */ (race.band), (name, value) => fact(`${key}${name}`, value)),
            ".",
          ]
        : fastest[0].verdict === "slower than greedy"
          ? [
              "on the clock none beat greedy: the fastest of them, ",
              fact(`${key}fastest`, fastest[0].word),
              ", ran at ",
              fact(`${key}fastest_speed`, fmt(fastest[0].speedup || 0)),
              "x greedy's speed.",
            ]
          : [
              "fastest on the clock: ",
              fact(`${key}fastest`, fastest[0].word),
              ", at ",
              fact(`${key}fastest_speed`, fmt(fastest[0].speedup || 0)),
              `x greedy's speed (${fastest[0].verdict || "judged when the race ends"}).`,
            ];
    const why =
      fastest.length && !fastest.includes(fewest)
        ? [
            ` ${fewest.word[0].toUpperCase()}${fewest.word.slice(1)}'s fewer steps each took `,
            fact(`${key}fewest_cost`, fmt(fewest.cost)),
            "x a greedy step's time, ",
            fewest.forward >= 0.9 * fewest.cost
              ? ["nearly all of it its wider forward pass (", fact(`${key}fewest_forward`, fmt(fewest.forward)), "x)."]
              : [
                  "its forward pass ",
                  fact(`${key}fewest_forward`, fmt(fewest.forward)),
                  "x a greedy forward and the rest the engine's own work around it (building the step, the pool, verifying).",
                ],
          ]
        : [];
    return [
      P(
        ...intro,
        others.map((l, i) => [
          i ? (i === others.length - 1 ? " and " : ", ") : "",
          l.word,
          l.setting && !key // the second race runs the same setting: said once
            ? [
                " (W = ",
                fact(`${key}W`, l.setting.window),
                ", N = ",
                fact(`${key}N`, l.setting.ngram),
                ", G = ",
                fact(`${key}G`, l.setting.guess),
                ")",
              ]
            : "",
          " wrote ",
          fact(`${key}tps_${l.kind}`, fmt(l.compression)),
          " tokens per step",
        ]),
        ", against 1 for greedy. ",
        race.identical
          ? ["All ", fact(`${key}identical_lanes`, race.identical), " texts are identical to greedy's."]
          : "",
      ),
      P(
        "Fewest steps: ",
        fact(`${key}fewest`, fewest.word),
        " (",
        others.map((l, i) => [i ? ", " : "", `${l.word} `, fact(`${key}steps_${l.kind}`, l.steps)]),
        `; ${race.greedy.word} `,
        fact(`${key}steps_greedy`, race.greedy.steps),
        "); ",
        clock,
        why,
      ),
    ];
  }

  /** The relatives chapter: why lookahead needs no draft model, on a race of one prompt across the methods. @type {Chapter} */
  const relatives = {
    title: "Why not a draft model?",
    role: "race",
    focus: ["relatives-view", "progress-plot"],
    start: [{ rule: "the race's last step", at: (run) => run.lastStep() }],
    text: (run, _k, ctx) => {
      const fact = Lade.dom.fact,
        P = Lade.dom.P,
        others = run.lanes().filter((l) => l.id !== "baseline");
      const rate = (/** @type {string} */ id) =>
        run.d.metrics && run.d.metrics[id] ? run.d.metrics[id].draft_acceptance_rate : 0;
      /** @type {HTMLElement[]} */
      const out = [
        P(
          "Speculative decoding lets a small draft guess the next tokens and the large model verify them in one pass, as ",
          "lookahead's verification branch does. But a ",
          Lade.notes.term("draft model"),
          " is a second model to choose, hold in memory ",
          "and run (off-the-shelf ones work; trained ones have more guesses kept). ",
          Lade.notes.term("prompt lookup", "Prompt lookup"),
          " needs no second model but helps only where the answer repeats the prompt or itself. ",
          lookaheadSource(run),
        ),
        ...raceWords(
          raceOf(run),
          [`Raced on one clock on ${Lade.notes.deviceName(run)}, on a prompt whose answer copies code it was given: `],
          "",
          fact,
          P,
        ),
      ];
      const early = others.find((l) => l.method === "early-exit"),
        sp = run.d.speed;
      if (early && sp) {
        out.push(
          Lade.dom.More(
            "The early-exit draft, more closely",
            P(
              "The early-exit draft is this model's own first layers: no extra weights, but this model was not trained to exit ",
              "early",
              run.settings(early.id).draft.schedule === "heuristic"
                ? [
                    ". Its draft length adapts (",
                    cite("methods", ctx.boot.methods.heuristic_schedule.says),
                    ", as ",
                    cite("methods", ctx.boot.methods.heuristic_schedule.whose),
                    " does); still, only ",
                  ]
                : ", so only ",
              fact("early_exit_rate", pct(rate(early.id))),
              " of its draft tokens were kept and it ran at ",
              fact("early_exit_speed", fmt(sp.lanes[early.id].speedup)),
              "x greedy's speed: a draft pays only as ",
              "often as its guesses are right.",
            ),
          ),
        );
      }
      const second = ctx.lab && ctx.lab.second_race;
      if (second)
        out.push(
          ...raceWords(
            raceOfSummary(second),
            [
              "Raced the same way on a prompt whose answer is new text (“",
              Lade.dom.proseText(second.prompt),
              "”, ",
              h("a", { href: Lade.links.url({ run: second.name }) }, "open that race"),
              "): ",
            ],
            "new_",
            fact,
            P,
          ),
        );
      return out;
    },
    predict: {
      question: "In how many of prompt lookup's steps did it accept more tokens than a lookahead step ever can (N)?",
      options: ["none", "1 to 3", "4 or more"],
      answer: (run, k) => {
        const pld = run.lanes().find((l) => l.kind === "pld"),
          plain = run.lanes().find((l) => l.kind === "lookahead");
        if (!pld || !plain)
          return { option: -1, text: "this run races no prompt lookup lane beside the paper's lookahead.", step: k };
        const N = run.settings(plain.id).config.ngram,
          steps = pld.run.steps;
        const longer = steps.filter((s) => s.accepted.length > N).length;
        const most = Math.max(...steps.map((s) => s.accepted.length));
        return {
          option: longer === 0 ? 0 : longer <= 3 ? 1 : 2,
          step: k,
          text:
            `${longer} of its ${steps.length} steps accepted more than N = ${N} tokens (at most ${most} in one step); ` +
            `a lookahead step accepts at most N: ${N - 1} guesses and the model's own next token. Prompt lookup copies ` +
            `up to ${run.settings(pld.id).draft.tokens} tokens of the text at a time: long strides where the answer ` +
            "repeats the prompt, few where the text is new.",
        };
      },
    },
  };

  return { relatives: [relatives] };
})();
window.Lade.chapterRelatives = LadeChapterRelatives;
