// @ts-check
// The lesson drawn (`Lade.lessonView`): a chapter as a column of words (its heading, where it opens and why, its
// text, its question) beside its focused views, from the page's state alone. It never changes state itself: every
// button calls one of the stage's actions (`go`, `chapter`, `answer`, `explore`).
const LadeLessonView = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fill } = Lade.dom;
  const { CHAPTERS, chapterStart } = Lade.lesson;

  /** The chapter list: one Tab stop, arrows move between chapters (the tabs pattern). @param {LessonContext} ctx */
  function chapterList(ctx) {
    const n = ctx.state.chapter;
    const tabs = CHAPTERS.map((c, i) =>
      h(
        "button",
        {
          class: `pill ${i + 1 === n ? "on" : ""}`,
          role: "tab",
          id: `chapter-tab-${i + 1}`,
          "aria-selected": i + 1 === n ? "true" : "false",
          tabindex: i + 1 === n ? 0 : -1,
          "aria-label": `Chapter ${i + 1}: ${c.title}`,
          title: c.title,
          onclick: () => ctx.actions.chapter(i + 1),
        },
        String(i + 1),
      ),
    );
    const list = h("div", { class: "chapters", role: "tablist", "aria-label": "Chapters" }, tabs);
    list.addEventListener("keydown", (/** @type {KeyboardEvent} */ ev) => {
      const moves = { ArrowRight: n + 1, ArrowLeft: n - 1, Home: 1, End: CHAPTERS.length };
      const to = moves[/** @type {keyof typeof moves} */ (ev.key)];
      if (!to) return;
      ev.preventDefault();
      ev.stopPropagation();
      ctx.actions.chapter(Math.max(1, Math.min(CHAPTERS.length, to)), "chapter-tab");
    });
    return list;
  }

  /** The question, then (once answered) what the trace says. @param {LessonContext} ctx @param {Chapter} ch */
  function question(ctx, ch) {
    if (!ch.predict) return null;
    const { run, state } = ctx,
      answered = state.answered && state.answered.chapter === state.chapter ? state.answered : null;
    const answer = answered ? ch.predict.answer(run, answered.k, ctx) : null;
    // a question's options are a scale; it runs up in even chapters and down in odd ones, so the trace's answer is
    // not mostly the first one, as it was when every scale ran up; each option keeps its index on the scale
    const order = ch.predict.options.map((_, i) => i);
    if (state.chapter % 2) order.reverse();
    const options = order.map((i) => {
      const label = /** @type {Prediction} */ (ch.predict).options[i];
      const right = answer && i === answer.option,
        chosen = answered && i === answered.option;
      return h(
        "button",
        {
          class: `option ${right ? "right" : chosen ? "wrong" : ""}`,
          dataset: { option: i },
          "aria-disabled": answered ? "true" : null,
          onclick: () => {
            if (!answered) ctx.actions.answer(i);
          },
        },
        right ? "✓ " : chosen ? "✗ " : "",
        label,
        right ? " (the trace's answer)" : chosen ? " (your answer)" : "",
      );
    });
    const said =
      answer && answered
        ? h(
            "p",
            { class: "answer", id: "lesson-answer", tabindex: -1, role: "status", dataset: { option: answer.option } },
            // a clicker's reveal on a slide chose nothing (option -1, lade-slide.js): the trace's answer alone
            answered.option === answer.option ? "✓ Right. " : answered.option < 0 ? "" : "✗ Not this time. ",
            "The trace says: ",
            answer.text,
          )
        : null;
    const choices = h("div", { class: "options" }, options);
    // on a slide the answer takes the options' place and the room of the larger of the two is kept from the start
    // (the one not shown is hidden, `.off`), so the slide's type holds through the reveal (lade-layout.js `fit`)
    const slide = Lade.slide.kind(state) === "chapter";
    const place = slide
      ? h(
          "div",
          { class: "reveal" },
          choices,
          said || h("p", { class: "answer" }, "The trace says: ", ch.predict.answer(run, state.k, ctx).text),
        )
      : null;
    if (place) (said ? choices : /** @type {HTMLElement} */ (place.lastChild)).classList.add("off");
    return h(
      "div",
      { class: "predict", id: "lesson-predict", role: "group", "aria-labelledby": "lesson-question" },
      h("p", { id: "lesson-question" }, h("b", {}, "Predict, then reveal: "), ch.predict.question),
      place || [choices, said],
    );
  }

  /**
   * The chapter's words: {head, text, question, nav} for the stage to place (beside or above the focused views).
   * @param {LessonContext} ctx
   */
  function view(ctx) {
    const { run, state } = ctx,
      n = state.chapter,
      ch = CHAPTERS[n - 1],
      start = chapterStart(ch, run);
    const embed = !!(state.embed && state.embed.lesson);
    const where = start.first
      ? null
      : h(
          "p",
          { class: "muted rule" },
          `This chapter opens on ${start.wanted}; this run has no such `,
          `step, so it opens on ${start.rule} (step ${start.k}).`,
        );
    const text = h(
      "div",
      { id: "lesson-text", dataset: { chapter: n, run: run.handle, step: state.k, start: start.k } },
      ch.text(run, state.k, ctx),
    );
    // Back and Next sit with the chapter list, before the text: a keyboard reaches them in a few presses.
    const turn = h(
      "span",
      { class: "turn" },
      h(
        "button",
        {
          id: "lesson-prev",
          "aria-disabled": n === 1 ? "true" : null,
          onclick: () => n > 1 && ctx.actions.chapter(n - 1),
        },
        "◀ Back",
      ),
      h(
        "button",
        {
          id: "lesson-next",
          class: "primary",
          "aria-disabled": n === CHAPTERS.length ? "true" : null,
          onclick: () => n < CHAPTERS.length && ctx.actions.chapter(n + 1),
        },
        "Next ▶",
      ),
    );
    const head = h(
      "div",
      { class: "lesson-head" },
      h("span", { class: "muted" }, `Chapter ${n} of ${CHAPTERS.length}`),
      embed ? null : chapterList(ctx),
      turn,
      h("h2", { id: "lesson-title", tabindex: -1 }, ch.title),
    );
    const nav = h(
      "div",
      { class: "lesson-nav" },
      embed
        ? h(
            "a",
            { id: "lesson-try", class: "button", href: ctx.links.explorer(), target: "_blank", rel: "noopener" },
            "Try it yourself ↗",
          )
        : h("button", { id: "lesson-try", onclick: () => ctx.actions.explore() }, "Try it yourself →"),
      embed ? null : " ",
      embed
        ? null
        : h(
            "button",
            { type: "button", id: "print-lesson", class: "small", onclick: () => ctx.actions.printLesson() },
            "Print the whole lesson",
          ),
      // only where the chapter reads the reader's run (chapters 2 and 6 read their own race or Jacobi run)
      state.own && run.handle === state.own
        ? h("span", { class: "muted" }, " On your run: ", Lade.dom.label(run.title), ".")
        : null,
    );
    return {
      ...{ head, where, text, question: question(ctx, ch), nav },
      ...{ focus: ch.focus, zoomed: ch.zoomed || [], lanes: ch.lanes || null },
    };
  }

  /** A chapter condensed for a slide: its heading and the paragraph that states this step's facts. @param {LessonContext} ctx */
  function brief(ctx) {
    const parts = view(ctx),
      paragraphs = [...parts.text.querySelectorAll("p")];
    // the paragraph about the step on screen, else the first that states a fact
    const keep =
      paragraphs.find((p) => p.querySelector('.fact[data-fact="step"]')) ||
      paragraphs.find((p) => p.querySelector(".fact")) ||
      paragraphs[0];
    fill(parts.text, keep || "");
    return parts;
  }

  return { view, brief };
})();
window.Lade.lessonView = LadeLessonView;
