// @ts-check
// Print (`Lade.print`): the page as printed (`watch`: a closed <details> opened, a wide view shrunk to the paper or
// drawn zoomed, all undone after), and the whole lesson as one handout (`lesson`, `handout`, `done`).
const LadePrint = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, plural } = Lade.dom;

  /** Print what `stage` shows as well as paper allows, whenever the browser prints. @param {Stage} stage */
  function watch(stage) {
    // printing: a closed <details> shows what it holds (the chapter's secondary words), a wide grid (the
    // trajectories, a wide window) is shrunk to a printed page's width but never under 7 pt, and a dense view too
    // wide even so prints its zoomed variant (Lade.layout.printWidth); all undone after, however many times the
    // browser asked to print
    /** @type {{opened: HTMLDetailsElement[], zoomed: HTMLElement[], dense: boolean} | null} */
    let printing = null;
    window.addEventListener("beforeprint", () => {
      if (printing) return;
      const opened = [...stage.root.querySelectorAll("details:not([open]):not(.share)")].map((d) => {
        /** @type {HTMLDetailsElement} */ (d).open = true;
        return /** @type {HTMLDetailsElement} */ (d);
      });
      let fitted = Lade.layout.printWidth(stage.main);
      const views = fitted.over.map((el) => el.closest(".view")),
        dense = [...new Set(views.map((v) => (v ? v.id : "")))].filter(Boolean);
      const drawn = stage.drawn;
      if (dense.length && drawn) {
        stage.drawViews(drawn.run, dense, drawn.lanes, undefined, undefined, true);
        stage.drawn = drawn; // afterwards the screen is drawn as it was
        fitted = { zoomed: [...fitted.zoomed, ...Lade.layout.printWidth(stage.main).zoomed], over: [] };
      }
      printing = { opened, zoomed: fitted.zoomed, dense: dense.length > 0 };
    });
    window.addEventListener("afterprint", () => {
      done(stage);
      if (!printing) return;
      for (const d of printing.opened) d.open = false;
      for (const el of printing.zoomed) el.style.removeProperty("zoom");
      if (printing.dense) stage.redraw();
      printing = null;
    });
  }

  /** The whole lesson as one handout, then the browser's print dialog (the handout goes once printed); the page
   * says how many pages it takes. @param {Stage} stage */
  async function lesson(stage) {
    await handout(stage);
    const n = stage.handoutPages;
    stage.set({
      notice:
        `The whole lesson prints each chapter from a new page: ${plural(n, "page")} of Letter paper, ` +
        `at most ${n} of A4.`,
    });
    window.print();
  }

  /**
   * One handout of the whole lesson for print: every chapter from a page of its own, opened where the lesson opens
   * it, with its words (the secondary ones too), its question (without the answer: a handout is for predicting) and
   * its views as drawn at that step, each as wide as a printed page holds with no text under 7 pt (a dense view
   * in its zoomed variant); the page prints only it (lade.css) until `done`. Built in the page, off screen
   * and inert, a printed page wide, so that its pages can be counted (`handoutPages`).
   * @param {Stage} stage
   */
  async function handout(stage) {
    done(stage);
    const { PAGE, printWidth, printPages } = Lade.layout;
    const book = h("div", { class: "handout", inert: "", "aria-hidden": "true", style: `width:${PAGE.width}px` });
    stage.frame.append(book);
    let pages = 0;
    for (const [i, ch] of Lade.lesson.CHAPTERS.entries()) {
      const handle = stage.chapterRun(ch),
        run = handle ? await stage.load(handle) : null;
      if (!run) continue;
      if (ch.lab) await stage.askLab(run); // a chapter that reads its run's lab figures
      const k = Lade.lesson.chapterStart(ch, run).k;
      /** @type {State} */
      const s = {
        ...stage.state,
        ...{ mode: "lesson", chapter: i + 1, current: handle, k, answered: null, embed: null, present: false },
      };
      const parts = Lade.lessonView.view({ ...stage.lessonContext(run), state: s }),
        focus = parts.focus.filter((/** @type {string} */ id) => stage.views[id]),
        into = Object.fromEntries(focus.map((id) => [id, h("div", { class: "view lesson-focus" })]));
      const page = h("section", { class: "handout-chapter" }, parts.head, parts.where, parts.text, parts.question);
      book.append(page);
      // paper has no controls: gone before the page is measured (lade.css hides the same in any print)
      for (const el of page.querySelectorAll(".chapters, .turn, .options, button:not(.term), select, input"))
        el.remove();
      for (const d of page.querySelectorAll("details")) /** @type {HTMLDetailsElement} */ (d).open = true;
      // a copy of what was drawn (a drawing built once per layout moves to wherever it is drawn next)
      const copy = (/** @type {string} */ id, /** @type {boolean} */ zoomed) => {
        stage.drawViews(run, [id], parts.lanes, into, k, zoomed || parts.zoomed.includes(id));
        return /** @type {HTMLElement} */ (into[id].cloneNode(true));
      };
      for (const id of focus) {
        const full = page.appendChild(copy(id, false));
        if (printWidth(full).over.length) {
          full.remove();
          printWidth(page.appendChild(copy(id, true)));
        }
      }
      // a printed copy keeps no id but its patterns', each renamed so its cells fill from its own
      for (const el of page.querySelectorAll("[id], [aria-labelledby]")) {
        if (el.closest("defs")) {
          const id = el.id,
            own = `${id}-print-${i + 1}`;
          for (const use of page.querySelectorAll(`[fill="url(#${id})"]`)) use.setAttribute("fill", `url(#${own})`);
          el.id = own;
          continue;
        }
        el.removeAttribute("id");
        el.removeAttribute("aria-labelledby");
      }
      pages += printPages(page);
    }
    stage.redraw();
    stage.handoutPages = pages;
    document.body.classList.add("lade-handout");
    return book.children.length;
  }

  /** The handout printed (or not): gone, and the page prints what is on screen again. @param {Stage} stage */
  function done(stage) {
    for (const book of stage.frame.querySelectorAll(":scope > .handout")) book.remove();
    document.body.classList.remove("lade-handout");
  }

  return { watch, lesson, handout, done };
})();
window.Lade.print = LadePrint;
