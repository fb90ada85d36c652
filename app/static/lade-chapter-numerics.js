// @ts-check
// The verification chapter's numerics paragraph (`Lade.chapterNumerics`): what was measured in bf16 against fp32
// (is it really identical?), where the page carries that measurement.
const LadeChapterNumerics = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt } = Lade.dom;

  /** What was measured in bf16 (issue: is it really identical?), if the page carries it. @param {LessonContext} ctx
   * @param {typeof Lade.dom.fact} fact @param {typeof Lade.dom.P} P */
  function numerics(ctx, fact, P) {
    const n = ctx.lab && ctx.lab.numerics;
    if (!n) return null;
    const f32 = n.float32,
      bf = n.bfloat16;
    const parted = bf.rows.filter((r) => !r.identical && r.first_divergence !== null && r.logit_gap !== null);
    const ex = parted.find((r) => r.prompt === ctx.run.t.prompt) || parted[0];
    /** @type {HTMLElement[]} */
    const out = [
      P(
        "Is it really identical? Measured on ",
        f32.machine === bf.machine
          ? Lade.curves.cpuWords(f32.machine)
          : [Lade.curves.cpuWords(f32.machine), " (fp32) and ", Lade.curves.cpuWords(bf.machine), " (bf16)"],
        ": in fp32 lookahead's text was ",
        "identical to greedy's on ",
        fact("fp32_identical", f32.identical),
        " of ",
        fact("fp32_prompts", f32.prompts),
        " benchmark prompts; in bf16 on ",
        fact("bf16_identical", bf.identical),
        " of ",
        fact("bf16_prompts", bf.prompts),
        ".",
      ),
    ];
    if (ex) {
      const more = [];
      const same = ex.wide_first_divergence === ex.first_divergence;
      more.push(
        P(
          "On the prompt “",
          h("span", { class: "source" }, `${ex.prompt.slice(0, 60)}${ex.prompt.length > 60 ? "…" : ""}`),
          "” in bf16 the texts part at token #",
          fact("bf16_divergence", Number(ex.first_divergence)),
          ...(Number(ex.logit_gap) === 0
            ? [
                ", where the model's two most likely tokens are tied (a logit gap of ",
                fact("bf16_gap", 0),
                " after bf16's rounding, so either is the argmax): greedy goes on “",
              ]
            : [
                ", where the model's two most likely tokens differ by ",
                fact("bf16_gap", fmt(Number(ex.logit_gap), 4)),
                " in logit: greedy goes on “",
              ]),
          h("span", { class: "tk" }, Lade.dom.proseText(ex.greedy_text)),
          "”, lookahead “",
          h("span", { class: "tk" }, Lade.dom.proseText(ex.lookahead_text)),
          "”. ",
          ex.wide_first_divergence === null
            ? "Greedy fed its own tokens in one wider pass agrees with itself there."
            : [
                `Greedy itself, fed its own tokens in one wider pass, first differs at token #`,
                fact("bf16_wide", ex.wide_first_divergence),
                same ? ": the same place. A wider pass rounds bf16 differently; the algorithm changed nothing." : ".",
              ],
        ),
      );
      const reproduced = parted.filter((r) => r.wide_first_divergence === r.first_divergence).length;
      more.push(
        P(
          "Over the ",
          fact("bf16_parted", parted.length),
          " prompts whose bf16 texts parted, greedy's own wider pass first differs at the same token on ",
          fact("bf16_reproduced", reproduced),
          reproduced === parted.length
            ? ": every divergence is the wider pass's rounding."
            : [
                "; on the others it parts elsewhere or not at all, so this control accounts for ",
                fact("bf16_reproduced", reproduced),
                " of the ",
                fact("bf16_parted", parted.length),
                " divergences, not all of them.",
              ],
        ),
      );
      out.push(Lade.dom.More("Where bf16 parted from greedy", ...more));
    }
    return out;
  }

  return { numerics };
})();
window.Lade.chapterNumerics = LadeChapterNumerics;
