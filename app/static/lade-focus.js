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

  /** Where focus is, as something a redraw can find again: an element by its id (the chapter's title, a tab, drawn
   * anew by a redraw of the same chapter, as when its run's lab figures come), else a view's region by its label.
   * @param {Stage} stage @returns {{id: string} | {view: string, label: string} | null} */
  function key(stage) {
    const el = document.activeElement;
    if (!el || !stage.main.contains(el)) return null;
    if (el.id) return { id: el.id };
    const view = el.closest(".view"),
      label = el.getAttribute("aria-label");
    return view && label ? { view: view.id, label } : null;
  }

  /** Focus what `key` names again, where the redraw took focus away with the element that had it.
   * @param {Stage} stage @param {ReturnType<typeof key>} key */
  function restore(stage, key) {
    if (!key || (document.activeElement && stage.main.contains(document.activeElement))) return;
    const again =
      "id" in key
        ? document.getElementById(key.id)
        : stage.views[key.view] &&
          [...stage.views[key.view].querySelectorAll("[aria-label]")].find(
            (el) => el.getAttribute("aria-label") === key.label,
          );
    if (again && stage.main.contains(again)) /** @type {HTMLElement} */ (again).focus({ preventScroll: true });
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
