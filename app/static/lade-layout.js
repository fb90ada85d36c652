// @ts-check
// How the stage lays out each mode (`Lade.layout.render`), from its state:
// - lesson: the chapter's words in one column and its focused views beside them with a compact step control (at
//   1024 px and wider, both in the first screen; narrower, the views right after the text); nothing else on screen;
// - explorer: the run bar, the live race, the playback bar, every view in its section, the honest note, sharing;
// - lab: the speed lab, drawn from the lab's data and the run on screen;
// - embeds: one view or group, or one chapter condensed, with one compact row of controls, zoomed up or down to fit
//   the frame at a slide's type (`fit`), and measured off screen for "Link or embed" (`measure`).
// Regions whose inputs did not change are left alone, so stepping redraws only the views.
const LadeLayout = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fill } = Lade.dom;

  // A slide's type: body text a 30th of the frame's height (18 px in a 960x540 frame, 24 px at 1280x720, 13.5 px at
  // 720x405), the stage's 14 px body text (captions too, in an embed: lade.css) scaled up or down to it.
  const BODY_PX = 14,
    SLIDE_LINES = 30;
  /** The zoom that sets an embed's body text at its frame's slide type. @param {number} height */
  const slideZoom = (height) => height / SLIDE_LINES / BODY_PX;
  /** The embedded stage's padding around its box (lade.css `.lade-stage.embedded`), both sides together. */
  const INSET = { x: 8, y: 4 };

  /** Whether `box`, zoomed by `z` and laid out `width / z` CSS pixels wide, fits `width` x `height` pixels with no
   * sideways scroll box inside it cut off. @param {HTMLElement} box @param {number} z @param {number} width
   * @param {number} height */
  function fitsAt(box, z, width, height) {
    box.style.setProperty("zoom", String(z));
    box.style.width = `${width / z}px`;
    const cut = [...box.querySelectorAll(".scroll")].some((el) => el.scrollWidth > el.clientWidth + 1);
    return !cut && box.scrollWidth <= box.clientWidth + 1 && box.getBoundingClientRect().height <= height;
  }

  /** The largest zoom, up to `want`, at which `box` fits (found by halving, at least 0.4); the box is left at it.
   * @param {HTMLElement} box @param {number} width @param {number} height @param {number} want */
  function largest(box, width, height, want) {
    if (fitsAt(box, want, width, height)) return want;
    let lo = 0.4,
      hi = want;
    for (let i = 0; i < 8; i++) {
      const mid = (lo + hi) / 2;
      if (fitsAt(box, mid, width, height)) lo = mid;
      else hi = mid;
    }
    fitsAt(box, lo, width, height);
    return lo;
  }

  /** Zoom a box up or down to fit `width` x `height` pixels: the slide's type where the box fits at it, else the
   * largest zoom that fits. A chapter is tried with its words above its view and beside it, and keeps the form whose
   * type is larger. `frame`: the frame's height, which sets the type. Returns {zoom, px: its body text, want: the
   * slide's, readable: whether it has the slide's type}.
   * @param {HTMLElement} box @param {number} width @param {number} height @param {number} frame */
  function fit(box, width, height, frame) {
    const want = slideZoom(frame),
      forms = box.classList.contains("chapter") ? [false, true] : [false];
    const tried = forms.map((side) => {
      box.classList.toggle("side", side);
      return { side, zoom: largest(box, width, height, want) };
    });
    const best = tried.reduce((a, b) => (b.zoom > a.zoom + 1e-6 ? b : a));
    box.classList.toggle("side", best.side);
    const zoom = best === tried[tried.length - 1] ? best.zoom : largest(box, width, height, want);
    const px = Math.round(zoom * BODY_PX * 10) / 10;
    box.dataset.zoom = zoom.toFixed(3);
    box.dataset.px = String(px);
    return { zoom, px, want: Math.round(want * BODY_PX * 10) / 10, readable: zoom >= want - 1e-6 };
  }

  /** Fit the embed on screen to its window (after a draw, and when a slide deck resizes the frame); a page around
   * the stage that still takes room (a margin, a host's frame) is taken off the height. @param {any} stage */
  function refit(stage) {
    const box = stage.main.querySelector(":scope > .embed-box");
    if (!box || !stage.state.embed) return;
    const root = document.scrollingElement || document.documentElement,
      width = stage.main.clientWidth,
      height = window.innerHeight - INSET.y;
    fit(box, width, height, window.innerHeight);
    const over = root.scrollHeight - root.clientHeight;
    if (over > 0) fit(box, width, height - over, window.innerHeight);
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

  /** "Link or embed"'s body for what is on screen. Its embed is measured (a few layouts per choice, a third of a
   * second in all), so it is written when stepping pauses, not on every step or frame of Play.
   * @param {any} stage @param {PageContext} ctx */
  function shareBody(stage, ctx) {
    const body = stage.main.querySelector(".share-body"),
      s = stage.state;
    window.clearTimeout(stage.shareTimer);
    if (!s.share || !body) return;
    const key = `${s.mode} ${s.chapter} ${s.current} ${s.k}`;
    if (body.dataset.key === key && body.childElementCount) return;
    const measured = (
      /** @type {string} */ what,
      /** @type {number} */ k,
      /** @type {number} */ w,
      /** @type {number} */ hgt,
    ) => measure(stage, ctx.run, what, k, w, hgt);
    stage.shareTimer = window.setTimeout(
      () => {
        if (!body.isConnected || stage.state.playing) return;
        body.dataset.key = key;
        fill(body, Lade.page.share({ ...ctx, measure: measured }));
      },
      body.childElementCount ? 300 : 0,
    );
  }

  /** @param {any} stage @param {Run} run */
  function lab(stage, run) {
    region(stage, "lab-page", Lade.lab.view({ run, state: stage.state, boot: stage.boot, actions: stage.actions }));
  }

  /**
   * What an embed shows, for the state `s`: a chapter condensed (its heading, this step's paragraph, its question and
   * its first focused view) or a view or group, with one compact row of controls. `own`: the stage's own view
   * containers and step controls (the embed on screen); otherwise fresh ones, laid out off screen to be measured.
   * @param {any} stage @param {Run} run @param {State} s @param {boolean} own
   * @returns {{children: any[], draw: () => void}}
   */
  function embedParts(stage, run, s, own) {
    const groups = stage.boot.views.groups,
      playbar = own ? stage.playbar : /** @type {HTMLElement} */ (stage.playbar.cloneNode(true));
    if (!own) {
      // the step controls as an embed shows them: compact, with its link to the app
      playbar.classList.add("compact");
      for (const a of playbar.querySelectorAll(".open-app")) /** @type {HTMLElement} */ (a).hidden = false;
    }
    /** @param {string[]} ids */
    const containers = (ids) =>
      own ? stage.views : Object.fromEntries(ids.map((id) => [id, h("div", { class: "view", dataset: { view: id } })]));
    if (s.embed && s.embed.lesson) {
      const parts = Lade.lessonView.brief({ ...stage.lessonContext(run), state: s }),
        focus = parts.focus.filter((/** @type {string} */ id) => stage.views[id]).slice(0, 1),
        into = containers(focus);
      for (const id of focus) into[id].classList.add("lesson-focus");
      return {
        children: [
          h("div", { class: "embed-words" }, parts.head, parts.text, parts.question), // predict, then reveal: a click
          focus.map((/** @type {string} */ id) => into[id]),
          h("div", { class: "embed-controls" }, parts.nav, focus.length ? playbar : null),
        ],
        draw: () => stage.drawViews(run, focus, parts.lanes, own ? undefined : into, s.k, true),
      };
    }
    const view = (s.embed && s.embed.view) || "outputs";
    const ids = (Object.hasOwn(groups, view) ? groups[view] : [view]).filter((id) => Object.hasOwn(stage.views, id)),
      into = containers(ids);
    return {
      children: [
        playbar,
        h(
          "div",
          { class: `embed-views n${ids.length}` },
          ids.map((id) => into[id]),
        ),
      ],
      draw: () => stage.drawViews(run, ids, null, own ? undefined : into, s.k, true),
    };
  }

  /** @param {any} stage @param {State} before @param {Run} run */
  function embed(stage, before, run) {
    const s = stage.state,
      lesson = !!(s.embed && s.embed.lesson);
    stage.playbar.classList.add("compact");
    stage.openLink.href = lesson
      ? Lade.page.links.url({ lesson: s.chapter })
      : Lade.page.links.url({ run: run.handle, step: s.k, view: (s.embed && s.embed.view) || "outputs" });
    const parts = embedParts(stage, run, s, true);
    // a view or group is built once per run; a chapter's words change with its step
    const same =
      !lesson &&
      before.embed &&
      before.embed.view === (s.embed && s.embed.view) &&
      before.current === s.current &&
      stage.main.querySelector(":scope > .embed-box");
    if (!same) region(stage, "embed-box", ...parts.children);
    stage.main.querySelector(":scope > .embed-box").classList.toggle("chapter", lesson);
    parts.draw();
    requestAnimationFrame(() => refit(stage));
  }

  /**
   * How the embed of `what` ("chapter", a view or a group) at step `k` fits a frame of `width` x `height` pixels:
   * laid out off screen in this page as the embed lays itself out, and fitted by the embed's own rule (`fit`).
   * @param {any} stage @param {Run} run @param {string} what @param {number} k @param {number} width @param {number} height
   */
  function measure(stage, run, what, k, width, height) {
    /** @type {State} */
    const s = { ...stage.state, k, answered: null, embed: what === "chapter" ? { lesson: true } : { view: what } };
    const parts = embedParts(stage, run, s, false),
      box = h("div", { class: what === "chapter" ? "embed-box chapter" : "embed-box" }, parts.children);
    const host = h(
      "div",
      {
        class: "lade-stage embedded",
        "aria-hidden": "true",
        style: `position:fixed;left:${-2 * width}px;top:0;width:${width}px;height:${height}px;visibility:hidden`,
      },
      box,
    );
    document.body.append(host);
    parts.draw();
    const got = fit(box, width - INSET.x, height - INSET.y, height);
    host.remove();
    stage.redraw(); // a view's drawing is built once and moved where it is drawn: back on screen
    return got;
  }

  return { render, refit, measure, slideZoom };
})();
window.Lade.layout = LadeLayout;
