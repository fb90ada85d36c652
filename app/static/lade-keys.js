// @ts-check
// Keys (`Lade.keys`): the page's keys (← → step, Home / End, Space play) and a clicker's PageDown / PageUp, taken by
// the stage only where the element that has focus does not use them.
const LadeKeys = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);

  /** Whether a key press belongs to the element that has focus, not the stage: for `key`, a control that uses it
   * (text and range inputs, menus, tabs and scroll boxes use arrows; a button, a link and a summary use Space and
   * Enter but not arrows, so an arrow on them still steps). The clicker's PageUp and PageDown step wherever focus is,
   * except in a field that types or scrolls. @param {Element | null} el @param {string} key */
  function owned(el, key) {
    if (!el || el === document.body) return false;
    if (el.closest("#sidebar")) return true;
    const typing = "input, select, textarea, [contenteditable]";
    if (key === "PageUp" || key === "PageDown") return !!el.closest(`${typing}, [role=region]`);
    if (key === " " || key === "Enter")
      return !!el.closest(`${typing}, button, a[href], summary, [role=tab], [role=region], [tabindex='0']`);
    return !!el.closest(`${typing}, [role=tab], [role=region], [tabindex='0']`);
  }

  /** A key pressed anywhere on the page, for `stage`. @param {Stage} stage @param {KeyboardEvent} ev */
  function onKey(stage, ev) {
    if (!stage.root.isConnected || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === "Escape" && stage.state.embed) return Lade.slide.letGo(); // keys do not leave a focused frame
    if (stage.state.mode === "lab" || owned(document.activeElement, ev.key)) return;
    const slide = !!stage.state.embed; // an embed's arrows walk its slide's beats and stay on it
    const moves = {
      ArrowLeft: () => (slide ? Lade.slide.press(stage, -1, false) : stage.go(stage.state.k - 1)),
      ArrowRight: () => (slide ? Lade.slide.press(stage, 1, false) : stage.go(stage.state.k + 1)),
      Home: () => stage.go(0),
      End: () => stage.go(Infinity),
      " ": () => stage.toggle(),
      PageDown: () => click(stage, 1),
      PageUp: () => click(stage, -1),
    };
    const move = moves[/** @type {keyof typeof moves} */ (ev.key)];
    if (!move || !stage.run()) return;
    ev.preventDefault();
    move();
  }

  /** A clicker's press (PageDown 1, PageUp -1): on a slide (an embed, the lesson in Present) its next or previous
   * beat (Lade.slide); in the page a chapter's open question is revealed first, then the steps move, and past the
   * last step (or before the first) the lesson turns the chapter. @param {Stage} stage @param {1 | -1} way */
  function click(stage, way) {
    const run = stage.run(),
      s = stage.state;
    if (!run) return;
    if (Lade.slide.kind(s)) return Lade.slide.press(stage, way);
    const ch = s.mode === "lesson" ? Lade.lesson.CHAPTERS[s.chapter - 1] : null;
    if (way > 0 && ch && ch.predict && !s.answered) {
      return stage.answer(ch.predict.answer(run, s.k, stage.lessonContext(run)).option);
    }
    const k = s.k + way;
    if (k >= 0 && k <= run.lastStep()) return stage.go(k);
    if (ch) {
      const n = s.chapter + way;
      if (n >= 1 && n <= Lade.lesson.CHAPTERS.length) stage.chapter(n);
    }
  }

  return { owned, onKey, click };
})();
window.Lade.keys = LadeKeys;
