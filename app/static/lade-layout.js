// @ts-check
// How the stage lays out each mode (`Lade.layout.render`), from its state:
// - lesson: the chapter's words in one column and its focused views beside them with a compact step control (at
//   1024 px and wider, both in the first screen; narrower, the views right after the text); nothing else on screen;
// - explorer: the run bar, the live race, the playback bar, every view in its section, the honest note, sharing;
// - lab: the speed lab, drawn from the lab's data and the run on screen;
// - embeds: one view or group with one compact row of controls, or one chapter as a slide (`chapterSlide`, the
//   lesson's slide in Present too), zoomed up or down to fit the frame at a slide's type (`fit`), and measured off
//   screen for "Link or embed" (`measure`).
// Regions whose inputs did not change are left alone, so stepping redraws only the views.
const LadeLayout = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fill } = Lade.dom;

  // A slide's type: body text a 30th of the frame's height in an embed (18 px in a 960x540 frame, 24 px at 1280x720,
  // 13.5 px at 720x405), a 40th of the screen's in Present (18 px at 1280x720, 27 px at 1920x1080): the stage's 14 px
  // body text (captions too, on a slide: lade.css) scaled up or down to it. No text on a slide is smaller than
  // SMALLEST of its body text (14 px at 960x540).
  const BODY_PX = 14,
    SLIDE_LINES = 30,
    PRESENT_LINES = 40,
    SMALLEST = 14 / 18;
  /** The zoom that sets a slide's body text at its frame's type. @param {number} height @param {number} [lines] */
  const slideZoom = (height, lines = SLIDE_LINES) => height / lines / BODY_PX;
  // marks drawn small on purpose, and text nobody sees, left out of a slide's type (`textSizes`)
  const NOT_READ = ".sr-only, [hidden], svg, sub, .icon, .dot, script, style, .ask .beat-off, .reveal > .off";
  /** A chapter slide's forms, tried in this order: its words above its view or beside it, its question with its words
   * or after them (a second reveal, lade-slide.js). */
  const FORMS = [
    { side: false, ask: false },
    { side: true, ask: false },
    { side: false, ask: true },
    { side: true, ask: true },
  ];
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

  /** An element's zoom as drawn, with every ancestor's (`currentCSSZoom`; undefined in a browser without it).
   * @param {Element} el @returns {number} */
  const zoomOf = (el) => el.currentCSSZoom || 1;

  /** The sizes of the text a reader reads in `box` as drawn (zoom included), smallest first: words, captions, cells,
   * tokens, controls. `all`: every mark and label too, as a printed page holds them (an SVG's text at the scale it is
   * drawn), not text for screen readers only. @param {Element} box @param {boolean} [all] */
  function textSizes(box, all = false) {
    /** @type {number[]} */
    const out = [],
      walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const n = /** @type {Text} */ (walk.currentNode),
        p = n.parentElement;
      if (!p || !n.data.trim() || !p.getClientRects().length || p.closest(all ? NOT_PRINTED : NOT_READ)) continue;
      // an SVG's text at the scale its drawing has on the page (its viewBox, its transforms), times the page's zoom
      const graphic = p instanceof SVGGraphicsElement ? p : null,
        ctm = graphic && graphic.ownerSVGElement ? graphic.getCTM() : null,
        // a ctm is had only where the graphic is in an SVG
        scale = ctm
          ? Math.hypot(ctm.a, ctm.b) *
            zoomOf(/** @type {SVGSVGElement} */ (/** @type {SVGGraphicsElement} */ (graphic).ownerSVGElement))
          : zoomOf(p);
      out.push(parseFloat(getComputedStyle(p).fontSize) * scale);
    }
    return out.sort((a, b) => a - b);
  }

  // A printed page: the width and height that A4 and Letter both hold inside the page's 12 mm margins (lade.css
  // @page), in CSS pixels, and the smallest text a page may print (7 pt, in CSS pixels).
  const PAGE = { width: 700, height: 960 },
    PRINT_PX = 7 / 0.75,
    NOT_PRINTED = ".sr-only, [hidden], script, style";

  /** Shrink the wide grids in `root` (what its scroll boxes hold) to a printed page's width, never so far that any of
   * their text prints under 7 pt. Returns the grids it zoomed and those still wider than a page.
   * @param {Element} root */
  function printWidth(root) {
    /** @type {HTMLElement[]} */
    const zoomed = [],
      over = [];
    for (const el of /** @type {NodeListOf<HTMLElement>} */ (root.querySelectorAll(".scroll > :not(.sr-only)"))) {
      const wide = el.scrollWidth;
      if (wide <= PAGE.width) continue;
      const least = textSizes(el, true)[0] || BODY_PX,
        z = Math.max(PAGE.width / wide, Math.min(1, PRINT_PX / least));
      el.style.setProperty("zoom", z.toFixed(3));
      zoomed.push(el);
      if (wide * z > PAGE.width + 1) over.push(el);
    }
    return { zoomed, over };
  }

  /** How many printed pages `section` takes from a new page: its blocks in turn, a view or table moved whole to the
   * next page where it does not fit the rest of this one (lade.css: they do not break inside). @param {Element} section */
  function printPages(section) {
    let pages = 1,
      used = 0;
    for (const block of section.children) {
      const r = block.getBoundingClientRect(),
        style = getComputedStyle(block),
        tall = r.height + parseFloat(style.marginTop) + parseFloat(style.marginBottom);
      if (!r.height) continue;
      if (block.matches(".view, table, figure") && used > 0 && used + tall > PAGE.height) {
        pages += 1;
        used = 0;
      }
      used += tall;
      while (used > PAGE.height) {
        pages += 1;
        used -= PAGE.height;
      }
    }
    return pages;
  }

  /** Zoom a box up or down to fit `width` x `height` pixels: the slide's type where the box fits at it, else the
   * largest zoom that fits. A chapter is tried in each of its FORMS and keeps the first that has the slide's type,
   * else the one whose type is largest. `frame`: the frame's height and `lines` how many lines of body text it
   * holds, which set the type. Returns {zoom, px: the median text as drawn, least: the smallest, want: the slide's
   * type, readable: whether it has it, ask: whether the chapter's question is a second reveal}.
   * @param {HTMLElement} box @param {number} width @param {number} height @param {number} frame
   * @param {number} [lines] */
  function fit(box, width, height, frame, lines = SLIDE_LINES) {
    const want = slideZoom(frame, lines),
      forms = box.classList.contains("chapter") ? FORMS : FORMS.slice(0, 1);
    const use = (/** @type {{side: boolean, ask: boolean}} */ form) => {
      box.classList.toggle("side", form.side);
      box.classList.toggle("ask", form.ask);
    };
    // the first form that fits at the slide's type, else the one that fits largest
    let best = forms.find((form) => {
      use(form);
      return fitsAt(box, want, width, height);
    });
    if (!best) {
      const tried = forms.map((form) => {
        use(form);
        return { form, zoom: largest(box, width, height, want) };
      });
      best = tried.reduce((a, b) => (b.zoom > a.zoom + 1e-6 ? b : a)).form;
    }
    use(best);
    const zoom = largest(box, width, height, want),
      sizes = textSizes(box),
      round = (/** @type {number} */ x) => Math.round(x * 10) / 10;
    const px = round(sizes.length ? sizes[Math.floor(sizes.length / 2)] : zoom * BODY_PX),
      least = round(sizes.length ? sizes[0] : px),
      wanted = round(want * BODY_PX);
    box.dataset.zoom = zoom.toFixed(3);
    box.dataset.px = String(px);
    const readable = zoom >= want - 1e-6 && least >= wanted * SMALLEST - 0.05;
    return { zoom, px, least, want: wanted, readable, ask: best.ask };
  }

  /** Fit the slide on screen (an embed, the lesson in Present) to its window, after a draw and when a slide deck
   * resizes the frame; a page around the stage that still takes room (a margin, a host's frame, Gradio's header) is
   * taken off the height. A chapter's form decides its beats: the stage keeps it (`slideAsks`) and tells the host.
   * @param {Stage} stage */
  function refit(stage) {
    const box = /** @type {HTMLElement | null} */ (stage.main.querySelector(":scope > .embed-box")),
      s = stage.state;
    if (!box || !Lade.slide.kind(s)) return;
    const root = document.scrollingElement || document.documentElement,
      frame = window.innerHeight,
      lines = s.embed ? SLIDE_LINES : PRESENT_LINES,
      top = s.embed ? 0 : Math.max(0, stage.main.getBoundingClientRect().top + root.scrollTop),
      height = frame - top - INSET.y;
    let width = stage.main.clientWidth,
      got = fit(box, width, height, frame, lines);
    // the page still scrolls (something of the page's own below the slide): the slide gives up that much height
    const over = root.scrollHeight - root.clientHeight;
    if (over > 0) got = fit(box, width, box.getBoundingClientRect().height - over, frame, lines);
    // a scroll bar the slide was too tall for before this fit is gone now: fit the width it left
    if (stage.main.clientWidth !== width) {
      width = stage.main.clientWidth;
      got = fit(box, width, height, frame, lines);
    }
    if (box.classList.contains("chapter") && got.ask !== stage.slideAsks) {
      stage.slideAsks = got.ask;
      Lade.slide.tell(stage);
    }
  }

  /** @param {Stage} stage @param {State} before @param {Run | null} run */
  function render(stage, before, run) {
    const s = stage.state;
    stage.openLink.hidden = !s.embed;
    if (!run) return;
    if (Lade.slide.kind(s)) return embed(stage, before, run);
    if (s.mode === "lesson") return lesson(stage, before, run);
    if (s.mode === "lab") return lab(stage, run);
    return explorer(stage, before, run);
  }

  /** @param {Stage} stage @param {string} cls @param {...Kid} children */
  function region(stage, cls, ...children) {
    let box = /** @type {HTMLElement | null} */ (stage.main.querySelector(`:scope > .${cls}`));
    if (!box || stage.main.children.length !== 1) {
      box = h("div", { class: cls });
      fill(stage.main, box);
    }
    return children.length ? fill(box, ...children) : box;
  }

  // On a phone (lade.css's 480 px) a chapter shows these views zoomed: drawn whole they are read only shrunk (the
  // mask's labels at 6 px) or a column at a time (the trajectories); the window and the methods table reflow instead.
  const PHONE = "(max-width: 480px)",
    PHONE_ZOOMED = ["mask-view", "trajectory-view"];
  /** The views a chapter draws zoomed here: its own (`zoomed`), and on a phone the dense ones. @param {string[]} own */
  const zoomedHere = (own) => (window.matchMedia(PHONE).matches ? [...own, ...PHONE_ZOOMED] : own);

  /** @param {Stage} stage @param {State} before @param {Run} run */
  function lesson(stage, before, run) {
    const s = stage.state,
      ctx = stage.lessonContext(run),
      parts = Lade.lessonView.view(ctx);
    const again =
      before.mode === "lesson" &&
      !before.embed &&
      !before.present &&
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
      /** @type {HTMLElement} */ (stage.main.querySelector(":scope > .lesson-grid")).classList.toggle(
        "no-views",
        !focus.length,
      );
    } else {
      const words = /** @type {HTMLElement} */ (stage.main.querySelector(".lesson-words"));
      words.replaceChildren(
        .../** @type {HTMLElement[]} */ (
          [parts.head, parts.where, parts.text, parts.question, parts.nav].filter(Boolean)
        ),
        shareBox(stage, "Link or embed this chapter"),
      );
    }
    shareBody(stage, { run, state: s, boot: stage.boot, actions: stage.actions, standalone: stage.standalone });
    stage.drawViews(run, focus, parts.lanes, undefined, undefined, zoomedHere(parts.zoomed));
  }

  /** @param {Stage} stage @param {State} before @param {Run} run */
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
          h(
            "p",
            { class: "explain" },
            h("b", {}, "What am I looking at? "),
            sec.note === "outputs" ? Lade.notes.outputsNote(run) : Lade.notes.SECTIONS[sec.note],
          ),
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
    const raceBox = /** @type {HTMLElement} */ (stage.main.querySelector(".race-box"));
    if (s.live && s.current === s.live) fill(raceBox, Lade.page.race(run, s.liveStatus, s.liveNote));
    else raceBox.replaceChildren();
    shareBody(stage, ctx);
    stage.drawViews(run, stage.boot.views.ids);
  }

  /** "Link or embed": the address and an embed's code, opened on demand (the state's `share`). @param {Stage} stage
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
   * @param {Stage} stage @param {PageContext} ctx */
  function shareBody(stage, ctx) {
    const body = /** @type {HTMLElement | null} */ (stage.main.querySelector(".share-body")),
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

  /** @param {Stage} stage @param {Run} run */
  function lab(stage, run) {
    const asked = stage.labStatus(run);
    region(
      stage,
      "lab-page",
      Lade.lab.view({ run, state: stage.state, boot: stage.boot, actions: stage.actions, asked }),
    );
  }

  /**
   * What an embed shows, for the state `s`: a chapter condensed (its heading, this step's paragraph, its question and
   * its first focused view) or a view or group, with one compact row of controls. `own`: the stage's own view
   * containers and step controls (the embed on screen); otherwise fresh ones, laid out off screen to be measured.
   * @param {Stage} stage @param {Run} run @param {State} s @param {boolean} own
   * @returns {{children: Kid[], draw: () => void}}
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
    if (Lade.slide.kind(s) === "chapter") return chapterSlide(stage, run, s, containers);
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

  /**
   * A chapter as a slide (an embed of it, or the lesson in Present): its heading, the paragraph that states this
   * step's facts, its question (after the words, as a second reveal, where the form `fit` chose asks for it) and its
   * main view whole. An embed has no control that would turn it into another chapter; Present keeps Back and Next.
   * @param {Stage} stage @param {Run} run @param {State} s @param {(ids: string[]) => Record<string, HTMLElement>} containers
   * @returns {{children: Kid[], draw: () => void}}
   */
  function chapterSlide(stage, run, s, containers) {
    const parts = Lade.lessonView.brief({ ...stage.lessonContext(run), state: s }),
      focus = parts.focus.filter((/** @type {string} */ id) => stage.views[id]).slice(0, 1),
      into = containers(focus);
    for (const id of focus) into[id].classList.add("lesson-focus");
    const title = parts.head.querySelector("h2"),
      turn = s.embed ? null : parts.head.querySelector(".turn"),
      tryIt = s.embed ? parts.nav.querySelector("#lesson-try") : null;
    const count = Lade.lesson.CHAPTERS.length;
    // the beat not shown keeps its room (`.beat-off`: hidden, not gone), so the slide does not move between beats
    const shown = s.asked || (s.answered && s.answered.chapter === s.chapter) ? "question" : "words";
    parts.text.classList.toggle("beat-off", shown === "question");
    if (parts.question) parts.question.classList.toggle("beat-off", shown === "words");
    return {
      children: [
        h(
          "div",
          { class: "embed-words", dataset: { beat: shown } },
          h(
            "div",
            { class: "slide-head" },
            h("span", { class: "muted" }, `Chapter ${s.chapter} of ${count}`),
            title,
            turn,
            tryIt,
          ),
          h("div", { class: "slide-beats" }, parts.text, parts.question),
        ),
        focus.map((/** @type {string} */ id) => into[id]),
      ],
      draw: () => stage.drawViews(run, focus, parts.lanes, into === stage.views ? undefined : into, s.k, true),
    };
  }

  /** An embed, or the lesson's slide in Present. @param {Stage} stage @param {State} before @param {Run} run */
  function embed(stage, before, run) {
    const s = stage.state,
      chapter = Lade.slide.kind(s) === "chapter";
    stage.playbar.classList.add("compact");
    stage.openLink.href = chapter
      ? Lade.links.url({ lesson: s.chapter })
      : Lade.links.url({ run: run.handle, step: s.k, view: (s.embed && s.embed.view) || "outputs" });
    // a view or group is built once per run (building it again would move its views out of the box on screen); a
    // chapter's words change with its step
    const same =
      !chapter &&
      before.embed &&
      before.embed.view === (s.embed && s.embed.view) &&
      before.current === s.current &&
      stage.main.querySelector(":scope > .embed-box");
    const old = stage.main.querySelector(":scope > .embed-box"),
      form = old ? [...old.classList].filter((c) => c === "side" || c === "ask") : [];
    const parts = same ? null : embedParts(stage, run, s, true);
    if (parts) region(stage, "embed-box", ...parts.children).classList.add(...form); // the last fit's form until refit
    const box = /** @type {HTMLElement} */ (stage.main.querySelector(":scope > .embed-box"));
    box.classList.toggle("chapter", chapter);
    box.classList.toggle("present", !s.embed);
    if (parts) parts.draw();
    else stage.redraw();
    requestAnimationFrame(() => refit(stage));
  }

  /**
   * How the embed of `what` ("chapter", a view or a group) at step `k` fits a frame of `width` x `height` pixels:
   * laid out off screen in this page as the embed lays itself out, and fitted by the embed's own rule (`fit`).
   * @param {Stage} stage @param {Run} run @param {string} what @param {number} k @param {number} width @param {number} height
   */
  function measure(stage, run, what, k, width, height) {
    /** @type {State} */
    const s = {
      ...stage.state,
      k,
      answered: null,
      asked: false,
      embed: what === "chapter" ? { lesson: true, from: k } : { view: what, from: k, to: k },
    };
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
    // beside the stage, so the page's styles around it (Gradio's) apply as they do to the embed in its frame
    stage.root.append(host);
    parts.draw();
    const got = fit(box, width - INSET.x, height - INSET.y, height);
    host.remove();
    stage.redraw(); // a view's drawing is built once and moved where it is drawn: back on screen
    return got;
  }

  /** The zoom of the lesson's slide type in Present, for the screen it is on. */
  const presentZoom = () => slideZoom(window.innerHeight, PRESENT_LINES);

  return { render, refit, measure, slideZoom, presentZoom, textSizes, PAGE, printWidth, printPages, PHONE };
})();
window.Lade.layout = LadeLayout;
