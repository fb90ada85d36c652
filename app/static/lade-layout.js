// @ts-check
// How the stage lays out each mode (`Lade.layout.render`), from its state:
// - lesson: the chapter's words in one column and its focused views beside them with a compact step control (at
//   1024 px and wider, both in the first screen; narrower, the views right after the text); nothing else on screen;
// - explorer: the run bar, the live race, the playback bar, every view in its section, the honest note, sharing;
// - lab: the speed lab, drawn from the lab's data and the run on screen;
// - embeds: one view or group, or one chapter condensed, with one compact row of controls, fitted to the frame.
// Regions whose inputs did not change are left alone, so stepping redraws only the views.
const LadeLayout = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fill } = Lade.dom;

  /** Scale a box down (CSS zoom) until it fits `height` pixels, never below 55%. @param {HTMLElement} box @param {number} height */
  function fit(box, height) {
    box.style.removeProperty("zoom");
    const need = box.scrollHeight;
    if (need > height && height > 0) box.style.setProperty("zoom", String(Math.max(0.55, height / need)));
  }

  /** @param {any} stage @param {State} before @param {Run | null} run */
  function render(stage, before, run) {
    const s = stage.state;
    stage.openLink.hidden = !s.embed;
    if (!run) return;
    if (s.embed) return embed(stage, before, run);
    if (s.mode === "lesson") return lesson(stage, before, run);
    if (s.mode === "lab") return lab(stage, run);
    return explorer(stage, before, run);
  }

  /** @param {any} stage @param {string} cls @param {...any} children */
  function region(stage, cls, ...children) {
    let box = stage.main.querySelector(`:scope > .${cls}`);
    if (!box || stage.main.children.length !== 1) {
      box = h("div", { class: cls });
      fill(stage.main, box);
    }
    return children.length ? fill(box, ...children) : box;
  }

  /** @param {any} stage @param {State} before @param {Run} run */
  function lesson(stage, before, run) {
    const s = stage.state,
      ctx = stage.lessonContext(run),
      parts = Lade.lessonView.view(ctx);
    const again =
      before.mode === "lesson" &&
      !before.embed &&
      before.chapter === s.chapter &&
      before.current === s.current &&
      stage.main.querySelector(":scope > .lesson-grid");
    const focus = parts.focus.filter((id) => stage.views[id]);
    stage.playbar.classList.add("compact");
    if (!again) {
      const views = h(
        "div",
        { class: "lesson-views", role: "group", "aria-label": "This chapter's views" },
        focus.length ? stage.playbar : null,
        focus.map((id) => {
          stage.views[id].classList.add("lesson-focus");
          return stage.views[id];
        }),
      );
      for (const id of Object.keys(stage.views))
        if (!focus.includes(id)) stage.views[id].classList.remove("lesson-focus");
      region(
        stage,
        "lesson-grid",
        h(
          "div",
          { class: "lesson-words" },
          parts.head,
          parts.where,
          parts.text,
          parts.question,
          parts.nav,
          shareBox(stage, "Link or embed this chapter"), // on a phone, after the views (lade.css)
        ),
        focus.length ? views : null,
      );
      stage.main.querySelector(":scope > .lesson-grid").classList.toggle("no-views", !focus.length);
    } else {
      const words = stage.main.querySelector(".lesson-words");
      words.replaceChildren(
        ...[parts.head, parts.where, parts.text, parts.question, parts.nav].filter(Boolean),
        shareBox(stage, "Link or embed this chapter"),
      );
    }
    shareBody(stage, { run, state: s, boot: stage.boot, actions: stage.actions, standalone: stage.standalone });
    stage.drawViews(run, focus, parts.lanes);
  }

  /** @param {any} stage @param {State} before @param {Run} run */
  function explorer(stage, before, run) {
    const s = stage.state,
      ctx = { run, state: s, boot: stage.boot, actions: stage.actions, standalone: stage.standalone };
    const again =
      before.mode === "explorer" &&
      !before.embed &&
      before.current === s.current &&
      stage.main.querySelector(":scope > .explorer") &&
      stage.shownRun === run && // a live run pulled whole again is a new object at version 0: draw it afresh
      stage.shownVersion === run.version;
    stage.playbar.classList.remove("compact");
    if (!again) {
      stage.shownVersion = run.version;
      stage.shownRun = run;
      for (const id of Object.keys(stage.views)) stage.views[id].classList.remove("lesson-focus");
      const sections = Lade.page.SECTIONS.map((sec) =>
        h(
          "section",
          { id: sec.id, class: "sec", "aria-labelledby": `${sec.id}-title` },
          h("h2", { id: `${sec.id}-title` }, sec.title),
          h("p", { class: "explain" }, h("b", {}, "What am I looking at? "), Lade.notes.SECTIONS[sec.note]),
          sec.rows.map((row) =>
            h(
              "div",
              { class: `vrow n${row.length}` },
              row.map((id) => stage.views[id]),
            ),
          ),
        ),
      );
      region(
        stage,
        "explorer",
        Lade.page.runbar(ctx),
        h("div", { class: "race-box" }),
        stage.playbar,
        sections,
        h("div", { id: "honest-note" }, Lade.notes.honestNote(run, stage.boot)),
        shareBox(stage, "Link or embed this view"),
      );
    }
    const raceBox = stage.main.querySelector(".race-box");
    if (s.live && s.current === s.live) fill(raceBox, Lade.page.race(run, s.liveStatus));
    else raceBox.replaceChildren();
    shareBody(stage, ctx);
    stage.drawViews(run, stage.boot.views.ids);
  }

  /** "Link or embed": the address and an embed's code, opened on demand (the state's `share`). @param {any} stage
   * @param {string} label */
  function shareBox(stage, label) {
    return h(
      "details",
      {
        class: "share",
        open: stage.state.share || null,
        ontoggle: (/** @type {Event} */ ev) => {
          const open = /** @type {HTMLDetailsElement} */ (ev.target).open;
          if (open !== stage.state.share) stage.set({ share: open });
        },
      },
      h("summary", {}, label),
      h("div", { class: "share-body" }),
    );
  }

  /** @param {any} stage @param {PageContext} ctx */
  function shareBody(stage, ctx) {
    const body = stage.main.querySelector(".share-body");
    if (stage.state.share && body) fill(body, Lade.page.share(ctx));
  }

  /** @param {any} stage @param {Run} run */
  function lab(stage, run) {
    region(stage, "lab-page", Lade.lab.view({ run, state: stage.state, boot: stage.boot, actions: stage.actions }));
  }

  /** @param {any} stage @param {State} before @param {Run} run */
  function embed(stage, before, run) {
    const s = stage.state,
      groups = stage.boot.views.groups;
    stage.playbar.classList.add("compact");
    if (s.embed && s.embed.lesson) {
      const parts = Lade.lessonView.brief(stage.lessonContext(run)),
        focus = parts.focus.filter((id) => stage.views[id]).slice(0, 1);
      stage.openLink.href = Lade.page.links.url({ lesson: s.chapter });
      for (const id of focus) stage.views[id].classList.add("lesson-focus");
      const box = region(
        stage,
        "embed-box",
        h("div", { class: "embed-words" }, parts.head, parts.text, parts.question), // predict, then reveal: a click
        focus.map((id) => stage.views[id]),
        h("div", { class: "embed-controls" }, parts.nav, focus.length ? stage.playbar : null),
      );
      stage.drawViews(run, focus, parts.lanes);
      requestAnimationFrame(() => fit(box, window.innerHeight - 4));
      return;
    }
    const view = (s.embed && s.embed.view) || "outputs";
    const ids = (Object.hasOwn(groups, view) ? groups[view] : [view]).filter((id) => Object.hasOwn(stage.views, id));
    stage.openLink.href = Lade.page.links.url({ run: run.handle, step: s.k, view });
    const same = before.embed && before.current === s.current && stage.main.querySelector(":scope > .embed-box");
    const box = same
      ? stage.main.querySelector(":scope > .embed-box")
      : region(
          stage,
          "embed-box",
          stage.playbar,
          h(
            "div",
            { class: `embed-views n${ids.length}` },
            ids.map((id) => stage.views[id]),
          ),
        );
    stage.drawViews(run, ids);
    requestAnimationFrame(() => fit(box, window.innerHeight - 4));
  }

  return { render };
})();
window.Lade.layout = LadeLayout;
