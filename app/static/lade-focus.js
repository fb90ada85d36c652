// @ts-check
// Focus and announcements (`Lade.focus`): where focus goes after a change, kept across a redraw, and what a screen
// reader is told of the step shown.
const LadeFocus = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { plural } = Lade.dom;

  /** Focus the stage's main region. @param {Stage} stage */
  function main(stage) {
    stage.main.focus();
  }

  /** @param {Stage} stage @param {string} where "chapter" (its heading), "answer", "chapter-tab" / "mode-tab" (the tab chosen),
   * "explorer" (the run's title), "main" (the stage's main region, where the arrows step) */
  function move(stage, where) {
    const target =
      where === "chapter"
        ? stage.root.querySelector("#lesson-title")
        : where === "answer"
          ? stage.root.querySelector("#lesson-answer")
          : where === "chapter-tab"
            ? stage.root.querySelector(".chapters [aria-selected=true]")
            : where === "mode-tab"
              ? stage.root.querySelector(".modes [aria-selected=true]")
              : where === "explorer"
                ? stage.root.querySelector(".run-title")
                : where === "main"
                  ? stage.main
                  : null;
    if (target) {
      if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      /** @type {HTMLElement} */ (target).focus({ preventScroll: where === "main" });
    }
  }

  /** Where focus is, as something a redraw can find again (a view's region keeps its label). @param {Stage} stage */
  function key(stage) {
    const el = document.activeElement;
    if (!el || !stage.main.contains(el) || el.id) return null;
    const view = el.closest(".view"),
      label = el.getAttribute("aria-label");
    return view && label ? { view: view.id, label } : null;
  }

  /** @param {Stage} stage @param {{view: string, label: string} | null} key */
  function restore(stage, key) {
    if (!key || (document.activeElement && stage.main.contains(document.activeElement))) return;
    const box = stage.views[key.view];
    const again =
      box && [...box.querySelectorAll("[aria-label]")].find((el) => el.getAttribute("aria-label") === key.label);
    if (again) /** @type {HTMLElement} */ (again).focus({ preventScroll: true });
  }

  /** Tell screen readers what the step shown accepted (quiet while playing; one summary when Play stops).
   * @param {Stage} stage @param {boolean} [stopped] */
  function announce(stage, stopped = false) {
    clearTimeout(stage.announceTimer);
    stage.announceTimer = window.setTimeout(
      () => {
        const run = stage.run(),
          s = stage.state;
        if (!run || s.mode === "lab") return;
        // the lane the page shows: a chapter that shows greedy alone (chapter 1) speaks of greedy
        const ch = s.mode === "lesson" ? Lade.lesson.CHAPTERS[s.chapter - 1] : null,
          lane = ch && ch.lanes && !ch.lanes.includes("parallel") ? ch.lanes[0] : "parallel";
        const steps = run.lane(lane).steps,
          step = steps.length ? steps[run.clock(lane, s.k)] : null,
          n = run.numbers(lane, s.k);
        const got = step
          ? `${run.laneName(lane)} step ${step.index} accepted ${plural(step.accepted.length, "token")}: ` +
            `${Lade.dom.spoken(run.joined(step.accepted))}.`
          : "";
        stage.liveRegion.textContent =
          `${stopped ? "Paused at" : "Step"} ${s.k} of ${run.lastStep()}. ${got} ` +
          `${plural(n.tokens, "token")} written so far.`;
      },
      stopped ? 50 : 250,
    );
  }

  return { main, move, key, restore, announce };
})();
window.Lade.focus = LadeFocus;
