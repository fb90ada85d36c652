// @ts-check
// A CPU's measured cost curves as the page reads them (`Lade.curves`): the one the run's own machine measured in the
// process that recorded it (the lab's run data carries it), the ones shipped with the page (boot.lab), how far a
// forward stays about as cheap as one token on either, and the machine each names. The lab, the honest note and the
// chapters that draw a CPU curve ask here.
const LadeCurves = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h } = Lade.dom;

  /** The most tokens a forward carries for at most 10% more than one token, on a measured curve ([tokens, cost]).
   * @param {number[][]} points */
  function flatUpTo(points) {
    let most = 1;
    for (const [tokens, cost] of points) if (cost <= 1.1) most = Math.max(most, tokens);
    return most;
  }

  /** The CPU that measured a curve, in a sentence: the machine the curve records (its processor, at the threads it
   * ran), or, where it records none, that it is not recorded (`machine_name`, lade_core/machine.py).
   * @param {string | null | undefined} name */
  const cpuWords = (name) =>
    name ? ["the ", h("span", { class: "source" }, name)] : "a CPU whose machine is not recorded";
  /** The same as a label (a chart's line, a menu's option). @param {string | null | undefined} name */
  const cpuLabel = (name) => (name ? `CPU: ${name}` : "CPU (machine not recorded)");
  /** The CPU curve the run's own machine measured in the process that recorded it, as its payload carries it
   * (labdata `machine_curve`), with that machine's name and description; null where the run recorded none.
   * @param {Run} run */
  const ownCurve = (run) => {
    const own = run.d.machine_curve;
    if (!own) return null;
    const points = own.curve.tokens.map((t, i) => [t, own.curve.relative[i]]);
    return { points, name: own.machine_name || null, description: own.machine };
  };

  /** The shipped CPU curve at `batch` (1: the single-sequence one) as [tokens, relative cost] points.
   * @param {LabPage} page @param {number} [batch] */
  const cpuPoints = (page, batch = 1) => {
    const curve =
      page && page.cpu
        ? batch === 1
          ? page.cpu.single
          : page.cpu.batched && page.cpu.batched.curves[String(batch)]
        : null;
    return curve ? curve.tokens.map((/** @type {number} */ t, /** @type {number} */ i) => [t, curve.relative[i]]) : [];
  };

  return { flatUpTo, cpuWords, cpuLabel, ownCurve, cpuPoints };
})();
window.Lade.curves = LadeCurves;
