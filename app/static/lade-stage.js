// @ts-check
// The stage (`Lade.stage`): the one owner of the page's state, in the Gradio page, the static site, every embed and
// the HTML export. All state is declared once (`initialState`) and changed through one method (`set`), which draws
// once; the lesson, the views and the page's parts are drawn from the state and never write it (their buttons call
// the actions below). Runs come from a source (`runs/<handle>.json` on the server or beside a static site, or the export's
// one inline run), pulled by handle; stepping (buttons, slider, keys, Play at up to 30 steps/s) asks no one.
const LadeStage = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fill, plural } = Lade.dom;
  const MAX_SPEED = 30;
  /** @param {number} ms @returns {Promise<true>} */
  const pause = (ms) => new Promise((done) => setTimeout(() => done(true), ms));

  /** @returns {State} */
  const initialState = () => ({
    current: null,
    k: 0,
    mode: "lesson",
    chapter: 1,
    embed: null,
    own: null,
    answered: null,
    asked: false,
    playing: false,
    speed: 6,
    notice: "",
    live: null,
    liveStatus: "",
    share: false,
    present: false,
    theme: Lade.theme.read(new URLSearchParams(location.search)),
    lab: { device: "h100", size: "7B", devices: 1, batch: 1 },
  });

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

  class Stage {
    /** @param {HTMLElement} root @param {{boot: Boot, source: Source}} options */
    constructor(root, { boot, source }) {
      this.root = root;
      this.boot = boot;
      this.source = source;
      /** @type {Map<string, Run>} */
      this.runs = new Map();
      this.state = initialState();
      Lade.theme.follow(() => this.state.theme);
      this.renders = 0;
      this.pulling = false;
      this.announceTimer = 0;
      /** @type {[Run, number, number] | null} the run, its version and the step last announced (or to be) */
      this.announced = null;
      this.standalone = source.kind === "inline";
      this.landed = false; // the address the page opened on is shown: every change after it is the reader's own
      this.restoring = false; // following Back or Forward: the address is already the state's
      /** @type {Record<string, HTMLElement>} the views' containers, one per view id, moved between layouts */
      this.views = {};
      /** @type {{run: Run, ids: string[], lanes: string[] | null, compact: boolean | string[]} | null} what drawViews
       * last put on screen */
      this.drawn = null;
      this.slideAsks = false; // the slide on screen shows its question after its words (lade-layout.js chose it)
      this.handoutPages = 0; // the printed pages of the last handout (`handout`)
      this.build();
      document.addEventListener("keydown", (ev) => this.onKey(ev));
      Lade.slide.listen(this);
      // a slide deck resizes its frames (full screen, overview): the embed fits its new size; and the page around a
      // slide settles after it was first fitted (Gradio's parts appear and go): it fits what is left
      window.addEventListener("resize", () => Lade.layout.refit(this));
      // a window turned from a phone's width to a wider one (or back) draws its views for that width
      window.matchMedia(Lade.layout.PHONE).addEventListener("change", () => this.set({}));
      const settle = new ResizeObserver(() => Lade.layout.refit(this));
      for (let el = /** @type {Element | null} */ (root); el; el = el.parentElement) settle.observe(el);
      // printing: a closed <details> shows what it holds (the chapter's secondary words), a wide grid (the
      // trajectories, a wide window) is shrunk to a printed page's width but never under 7 pt, and a dense view too
      // wide even so prints its zoomed variant (Lade.layout.printWidth); all undone after, however many times the
      // browser asked to print
      /** @type {{opened: HTMLDetailsElement[], zoomed: HTMLElement[], dense: boolean} | null} */
      let printing = null;
      window.addEventListener("beforeprint", () => {
        if (printing) return;
        const opened = [...this.root.querySelectorAll("details:not([open]):not(.share)")].map((d) => {
          /** @type {HTMLDetailsElement} */ (d).open = true;
          return /** @type {HTMLDetailsElement} */ (d);
        });
        let fitted = Lade.layout.printWidth(this.main);
        const views = fitted.over.map((el) => el.closest(".view")),
          dense = [...new Set(views.map((v) => (v ? v.id : "")))].filter(Boolean);
        const drawn = this.drawn;
        if (dense.length && drawn) {
          this.drawViews(drawn.run, dense, drawn.lanes, undefined, undefined, true);
          this.drawn = drawn; // afterwards the screen is drawn as it was
          fitted = { zoomed: [...fitted.zoomed, ...Lade.layout.printWidth(this.main).zoomed], over: [] };
        }
        printing = { opened, zoomed: fitted.zoomed, dense: dense.length > 0 };
      });
      window.addEventListener("afterprint", () => {
        this.handoutDone();
        if (!printing) return;
        for (const d of printing.opened) d.open = false;
        for (const el of printing.zoomed) el.style.removeProperty("zoom");
        if (printing.dense) this.redraw();
        printing = null;
      });
      this.actions = {
        go: (/** @type {number} */ k) => this.go(k),
        chapter: (/** @type {number} */ n, /** @type {string | undefined} */ how) => {
          this.chapter(n, how);
        },
        answer: (/** @type {number} */ option) => this.answer(option),
        explore: () => this.set({ mode: "explorer" }, "explorer"),
        open: (/** @type {string} */ handle, /** @type {any} */ step) => this.open(handle, step),
        teach: () => this.teach(),
        sidebar: () => this.openSidebar(),
        lab: (/** @type {Partial<LabInputs>} */ patch) => this.set({ lab: { ...this.state.lab, ...patch } }),
        mode: (/** @type {Mode} */ mode) => this.mode(mode),
        printLesson: () => this.printLesson(),
      };
    }

    // -- structure (built once; the regions are filled by render) ---------------------------------------------------
    build() {
      const tab = (/** @type {Mode} */ mode, /** @type {string} */ label) =>
        h(
          "button",
          {
            role: "tab",
            class: "mode",
            id: `mode-${mode}`,
            dataset: { mode },
            "aria-controls": "lade-main",
            // Enter or Space on a tab (no pointer: `detail` 0) keeps focus on the tab list, where arrows move between
            // tabs; a pointer's click leaves focus where the arrows step
            onclick: (/** @type {MouseEvent} */ ev) => this.mode(mode, ev.detail === 0),
          },
          label,
        );
      this.tabs = h(
        "div",
        { class: "modes", role: "tablist", "aria-label": "Parts of the app" },
        tab("lesson", "Lesson"),
        tab("explorer", "Explorer"),
        tab("lab", "Speed lab"),
      );
      this.tabs.addEventListener("keydown", (/** @type {KeyboardEvent} */ ev) => {
        const order = /** @type {Mode[]} */ (["lesson", "explorer", "lab"]),
          i = order.indexOf(this.state.mode);
        const to = { ArrowRight: order[(i + 1) % 3], ArrowLeft: order[(i + 2) % 3], Home: order[0], End: order[2] }[
          ev.key
        ];
        if (!to) return;
        ev.preventDefault();
        ev.stopPropagation();
        this.mode(/** @type {Mode} */ (to), true);
      });
      this.skip = h(
        "a",
        {
          class: "skip",
          href: "#lade-main",
          onclick: (/** @type {Event} */ ev) => {
            ev.preventDefault();
            this.focusMain();
          },
        },
        "Skip to the content",
      );
      this.keysHint = h(
        "p",
        { class: "keys muted" },
        "Keys: ← → step (in a row of tabs they move between the tabs), Home / End first / last, Space play (not in a " +
          "field), PageDown / PageUp a clicker's next / back.",
      );
      this.presentButton = h(
        "button",
        { type: "button", id: "present", class: "small", "aria-pressed": "false", onclick: () => this.present() },
        "Present",
      );
      // light or dark, normal or high contrast (Lade.theme): the frame around the page follows too
      this.themeMenu = h(
        "select",
        {
          id: "theme",
          onchange: (/** @type {Event} */ ev) =>
            this.set({ theme: Lade.theme.fromChoice(/** @type {HTMLSelectElement} */ (ev.target).value) }),
        },
        Lade.theme.CHOICES.map(([value, label]) => h("option", { value }, label)),
      );
      this.notice = h("p", { class: "notice", role: "status", hidden: true });
      // "Race it in your browser", where the engine's files are beside the page (boot.engine)
      this.racePanel = this.boot.engine && !this.standalone ? Lade.browserRace.panel(this) : null;
      this.raceButton = this.racePanel
        ? h(
            "button",
            {
              type: "button",
              id: "race-browser",
              class: "small primary",
              "aria-expanded": "false",
              "aria-controls": "browser-race",
              onclick: () => this.toggleRace(),
            },
            "Race it in your browser",
          )
        : null;
      if (this.racePanel) this.racePanel.hidden = true;
      this.liveRegion = h("p", { class: "sr-only", "aria-live": "polite", id: "lade-live" });
      this.main = h("div", { id: "lade-main", class: "stage-main", tabindex: -1, role: "tabpanel" });
      this.slider = h("input", {
        type: "range",
        id: "step-slider",
        min: 0,
        max: 1,
        value: 0,
        step: 1,
        "aria-label": "Step",
        oninput: () => this.go(+this.slider.value),
      });
      this.playButton = h(
        "button",
        { id: "play", class: "primary", onclick: () => this.toggle(), "aria-keyshortcuts": "Space" },
        "▶ Play",
      );
      this.stepLabel = h("span", { class: "step-label", "aria-hidden": "true" });
      this.speedMenu = h(
        "select",
        {
          class: "speed",
          "aria-label": "Play speed",
          onchange: (/** @type {Event} */ ev) =>
            this.set({ speed: +(/** @type {HTMLSelectElement} */ (ev.target).value) }),
        },
        [1, 2, 4, 6, 10, 20, 30].map((s) => h("option", { value: s, selected: s === 6 }, `${s} steps/s`)),
      );
      this.openLink = h(
        "a",
        { class: "button small open-app", target: "_blank", rel: "noopener", hidden: true },
        "Open in the app ↗",
      );
      this.playbar = h(
        "div",
        { class: "playbar", role: "group", "aria-label": "Step controls" },
        h(
          "button",
          { id: "step-prev", onclick: () => this.go(this.state.k - 1), "aria-keyshortcuts": "ArrowLeft" },
          "◀ Step",
        ),
        this.playButton,
        h(
          "button",
          { id: "step-next", onclick: () => this.go(this.state.k + 1), "aria-keyshortcuts": "ArrowRight" },
          "Step ▶",
        ),
        this.slider,
        this.stepLabel,
        this.speedMenu,
        this.openLink,
      );
      for (const id of this.boot.views.ids) this.views[id] = h("div", { id, class: "view", dataset: { view: id } });
      this.frame = h(
        "div",
        { class: "lade-stage" },
        this.skip,
        h(
          "div",
          { class: "stage-head" },
          this.tabs,
          this.boot.source === "site" ? Lade.page.liveLink(this.boot, "run-live") : null,
          this.raceButton,
          this.standalone
            ? null
            : h(
                "button",
                { type: "button", id: "copy-link", class: "small", onclick: () => this.copyLink() },
                "Copy link",
              ),
          this.presentButton,
          h("label", { class: "theme-menu" }, "Theme ", this.themeMenu),
          this.keysHint,
        ),
        this.racePanel,
        this.notice,
        this.liveRegion,
        this.main,
      );
      this.tabs.hidden = this.standalone;
      this.main.addEventListener("mouseover", (ev) => {
        const el = /** @type {Element} */ (ev.target).closest("[data-link]");
        this.highlight(el ? /** @type {HTMLElement} */ (el).dataset.link || null : null);
      });
      this.main.addEventListener("mouseleave", () => this.highlight(null));
      fill(this.root, this.frame);
    }

    /** Show or hide "Race it in your browser"; focus its prompt when shown (`focus`: not when an address opens it,
     * which would take focus from a page around an embed). @param {boolean} [focus] */
    toggleRace(focus = true) {
      const panel = /** @type {HTMLElement} */ (this.racePanel),
        open = panel.hidden;
      panel.hidden = !open;
      /** @type {HTMLElement} */ (this.raceButton).setAttribute("aria-expanded", String(open));
      if (open && focus) /** @type {HTMLElement} */ (panel.querySelector("textarea")).focus();
    }

    /** Hold a run made in this page (a race in the browser) under `handle` and show its last step in the explorer.
     * @param {string} handle @param {Payload} payload */
    hold(handle, payload) {
      const first = !this.runs.has(handle),
        run = new Lade.Run(payload, handle);
      this.runs.set(handle, run);
      // as a live race is followed: shown when it starts, then kept current only while the visitor is on it
      if (first || this.state.current === handle)
        this.set({ mode: "explorer", current: handle, k: run.lastStep(), ...(first ? { notice: "" } : {}) });
    }

    // -- state: the one writer -------------------------------------------------------------------------------------
    /** @param {Partial<State>} patch @param {string} [focus] where focus goes after this change ("chapter", "explorer", "answer") */
    set(patch, focus) {
      const before = this.state;
      const next = { ...before, ...patch };
      const run = next.current ? this.runs.get(next.current) : null,
        [lo, hi] = (run && Lade.slide.bounds(this, next)) || [0, run ? run.lastStep() : 0];
      next.k = run ? Math.max(lo, Math.min(Math.round(next.k), hi)) : 0;
      if (patch.playing === undefined && (next.mode !== before.mode || next.current !== before.current))
        next.playing = false;
      this.state = next;
      this.render(before);
      this.fileLinks();
      this.address(before);
      if (focus) this.moveFocus(focus);
      // the step shown is announced when it moves, and when the run under it grew or was pulled whole again at the
      // same clock step (a live race ends with a lane's last step beneath greedy's: the news must be the run's now)
      const shown = /** @type {[Run, number, number] | null} */ (run ? [run, run.version, next.k] : null),
        was = this.announced;
      this.announced = shown;
      if (shown && !next.playing && (!was || shown.some((x, i) => x !== was[i]))) this.announce();
      if (before.playing && !next.playing) this.announce(true);
      Lade.slide.tell(this);
    }

    run() {
      return this.state.current ? this.runs.get(this.state.current) || null : null;
    }

    /** The run `handle`, from this page or its source (null, with a notice, if it cannot be had); `fresh`: ask the
     * source again (a live run this page holds partly). @param {string} handle @param {boolean} [fresh] */
    async load(handle, fresh = false) {
      if (this.runs.has(handle) && !fresh) return /** @type {Run} */ (this.runs.get(handle));
      /** @type {Loaded} */
      const got = await (local(handle) ? Lade.raceKeep.load(handle) : this.source.load(handle, null)).catch(
        (/** @type {Error} */ err) => ({ error: `Could not load the run: ${err.message}` }),
      );
      const payload = got && (got.payload || (got.payload_text ? JSON.parse(got.payload_text) : null));
      if (!got || !payload) {
        this.set({ notice: (got && got.error) || `The run ${Lade.page.shown(handle)} is not in this page.` });
        return null;
      }
      const run = new Lade.Run(payload, handle);
      this.runs.set(handle, run);
      return run;
    }

    /** Open a run in the explorer (or `mode`) at `step`: a number, "last", "interesting" or null (its opening step).
     * @param {string} handle @param {any} step @param {Partial<State>} [extra] @param {boolean} [fromServer] */
    async open(handle, step, extra = {}, fromServer = false) {
      const run = await this.load(handle, fromServer && this.stillRunning(handle));
      if (!run) return false;
      const k = step === "last" ? run.lastStep() : typeof step === "number" ? step : run.interestingStep();
      this.set({ mode: "explorer", notice: "", ...extra, current: handle, k, answered: null });
      return true;
    }

    /** Open a trace file the visitor chose: the server keeps it (`postRun`) and it opens at its address like any
     * run, at its opening step; a file it cannot open leaves the page as it was, with the server's one-line reason.
     * @param {Blob} file */
    async openFile(file) {
      const got = await postRun(file);
      if (got.error || !got.handle) return this.set({ notice: got.error || "Could not open that file." });
      return this.open(got.handle, null, {}, true);
    }

    /** The address follows the state (`Lade.page.links.write`): a new chapter, mode or run is a new history entry,
     * a step or view replaces the entry, so reload, Back and Forward and a copied address land where the reader
     * was. Opening the page's own address replaces (whatever it named), so the first change after it pushes and
     * Back returns to it. Not written while playing (browsers throttle the history), nor in the HTML export (one
     * file, one run), and an embed only replaces (a slide's Back is the host's). @param {State} before */
    address(before) {
      const s = this.state;
      if (this.standalone || s.playing || (!s.current && s.mode !== "lab")) return;
      // a run raced in this page has no address to reload it from, unless this browser keeps it (lade-race-keep.js)
      if (s.current && local(s.current) && !Lade.raceKeep.kept(s.current)) return;
      const url = Lade.page.links.url(Lade.page.links.write(s), true);
      if (url === location.href) return;
      const moved = before.mode !== s.mode || before.chapter !== s.chapter || before.current !== s.current;
      try {
        if (moved && this.landed && !this.restoring && !s.embed) history.pushState(null, "", url);
        else history.replaceState(null, "", url);
      } catch {
        // an address the page may not write (a sandboxed frame): the state stays, unaddressed
      }
    }

    /** The whole lesson as one handout, then the browser's print dialog (the handout goes once printed); the page
     * says how many pages it takes. */
    async printLesson() {
      await this.handout();
      const n = this.handoutPages;
      this.set({
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
     * in its zoomed variant); the page prints only it (lade.css) until `handoutDone`. Built in the page, off screen
     * and inert, a printed page wide, so that its pages can be counted (`handoutPages`).
     */
    async handout() {
      this.handoutDone();
      const { PAGE, printWidth, printPages } = Lade.layout;
      const book = h("div", { class: "handout", inert: "", "aria-hidden": "true", style: `width:${PAGE.width}px` });
      this.frame.append(book);
      let pages = 0;
      for (const [i, ch] of Lade.lesson.CHAPTERS.entries()) {
        const handle = this.chapterRun(ch),
          run = handle ? await this.load(handle) : null;
        if (!run) continue;
        const k = Lade.lesson.chapterStart(ch, run).k;
        /** @type {State} */
        const s = {
          ...this.state,
          ...{ mode: "lesson", chapter: i + 1, current: handle, k, answered: null, embed: null, present: false },
        };
        const parts = Lade.lessonView.view({ ...this.lessonContext(run), state: s }),
          focus = parts.focus.filter((/** @type {string} */ id) => this.views[id]),
          into = Object.fromEntries(focus.map((id) => [id, h("div", { class: "view lesson-focus" })]));
        const page = h("section", { class: "handout-chapter" }, parts.head, parts.where, parts.text, parts.question);
        book.append(page);
        // paper has no controls: gone before the page is measured (lade.css hides the same in any print)
        for (const el of page.querySelectorAll(".chapters, .turn, .options, button:not(.term), select, input"))
          el.remove();
        for (const d of page.querySelectorAll("details")) /** @type {HTMLDetailsElement} */ (d).open = true;
        // a copy of what was drawn (a drawing built once per layout moves to wherever it is drawn next)
        const copy = (/** @type {string} */ id, /** @type {boolean} */ zoomed) => {
          this.drawViews(run, [id], parts.lanes, into, k, zoomed || parts.zoomed.includes(id));
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
      this.redraw();
      this.handoutPages = pages;
      document.body.classList.add("lade-handout");
      return book.children.length;
    }

    /** The handout printed (or not): gone, and the page prints what is on screen again. */
    handoutDone() {
      for (const book of this.frame.querySelectorAll(":scope > .handout")) book.remove();
      document.body.classList.remove("lade-handout");
    }

    /** Presenter mode on or off: large type for a projector, and the whole screen where the browser allows it. */
    present() {
      const on = !this.state.present;
      this.set({ present: on });
      const doc = document.documentElement;
      if (on && doc.requestFullscreen && !document.fullscreenElement) doc.requestFullscreen().catch(() => {});
      if (!on && document.fullscreenElement && document.exitFullscreen) document.exitFullscreen().catch(() => {});
    }

    /** Copy the address of what is on screen (the chapter and step, or the run, step and mode), and say it. */
    copyLink() {
      const kept = !!this.state.current && Lade.raceKeep.kept(this.state.current);
      if (this.state.current && local(this.state.current) && !kept) {
        this.set({
          notice:
            "A run raced in your browser lives only in this page: keep it in this browser for a link, or download its trace.",
        });
        return;
      }
      const url = Lade.page.links.url(Lade.page.links.write(this.state), true),
        handle = this.state.current;
      // a gallery run is always there; a live or opened run only while the server still holds it: the page asks
      // the server how full its store is and says what that means for the link (Lade.page.heldWords)
      const other = handle && this.source.kind === "server" && !this.boot.gallery.some((g) => g.name === handle);
      const held = other
        ? fetch(`runs/${encodeURIComponent(handle)}/held.json`)
            .then((res) => (res.ok ? res.json() : null))
            .then(Lade.page.heldWords, () => Lade.page.heldWords(null))
        : Promise.resolve(kept ? " It opens this race in this browser only, which keeps it in its storage." : "");
      const copied =
        navigator.clipboard && window.isSecureContext
          ? navigator.clipboard.writeText(url).then(
              () => true,
              () => false,
            )
          : Promise.resolve(false);
      Promise.all([copied, held]).then(([ok, words]) =>
        this.set({ notice: `${ok ? "Link copied" : "Copy this link"}: ${url}${words}` }),
      );
    }

    /** The server page's file links (its sidebar) point at the run on screen, at its address (app/routes.py). */
    fileLinks() {
      if (this.source.kind !== "server") return;
      const handle = this.state.current,
        base = handle ? `runs/${encodeURIComponent(handle)}/` : null;
      for (const [id, file] of [
        ["download-trace", "trace.json"],
        ["export-html", "replay.html"],
      ]) {
        const link = document.getElementById(id);
        if (!link) continue;
        if (base) {
          if (link.getAttribute("href") !== base + file) link.setAttribute("href", base + file);
          link.removeAttribute("aria-disabled");
        } else {
          link.removeAttribute("href");
          link.setAttribute("aria-disabled", "true");
        }
      }
    }

    // -- actions -----------------------------------------------------------------------------------------------------
    /** @param {number} k */
    go(k) {
      if (this.run()) this.set({ k, playing: false });
    }

    /** @param {Mode} mode @param {boolean} [fromTab] */
    mode(mode, fromTab = false) {
      if (mode === "lesson") return this.chapter(this.state.chapter || 1, fromTab ? "mode-tab" : "chapter");
      this.set({ mode }, fromTab ? "mode-tab" : "main");
    }

    /** The run a chapter reads: the lesson's own, or the reader's after "Open the lesson on this run". @param {Chapter} ch */
    chapterRun(ch) {
      if (ch.role === "lookahead" && this.state.own) return this.state.own;
      return this.boot.lesson[ch.role] || this.state.current;
    }

    /** Open chapter n at its starting step. @param {number} n @param {string} [how] where focus goes: "chapter" (its
     * heading, after Next or Back), "chapter-tab" / "mode-tab" (stays on that tab list), "none" (the page opened it)
     * @param {Partial<State>} [extra] more of the state to set with it (an embed) */
    async chapter(n, how = "chapter", extra = {}) {
      const chapters = Lade.lesson.CHAPTERS,
        ch = chapters[Math.max(1, Math.min(chapters.length, n)) - 1];
      const handle = this.chapterRun(ch),
        run = handle ? await this.load(handle) : null;
      if (!run) return;
      const start = Lade.lesson.chapterStart(ch, run);
      this.set(
        {
          ...extra,
          mode: "lesson",
          chapter: chapters.indexOf(ch) + 1,
          current: handle,
          k: start.k,
          answered: null,
          asked: false,
        },
        how === "none" ? undefined : how,
      );
    }

    /** @param {number} option */
    answer(option) {
      const ch = Lade.lesson.CHAPTERS[this.state.chapter - 1],
        run = this.run();
      if (!ch.predict || !run) return;
      const answer = ch.predict.answer(run, this.state.k, this.lessonContext(run));
      this.set(
        {
          answered: { chapter: this.state.chapter, k: this.state.k, option },
          k: answer.step === undefined ? this.state.k : answer.step,
        },
        "answer",
      );
    }

    teach() {
      const run = this.run();
      this.set({ own: run && run.method === "lookahead" ? run.handle : null });
      this.chapter(1);
    }

    openSidebar() {
      const sidebar = document.querySelector("#sidebar");
      const toggle =
        sidebar &&
        /** @type {HTMLElement | null} */ (
          sidebar.parentElement && sidebar.parentElement.querySelector(".sidebar-toggle, .toggle-button")
        );
      if (sidebar && !sidebar.classList.contains("open") && toggle) toggle.click();
    }

    toggle() {
      this.state.playing ? this.set({ playing: false }) : this.play();
    }

    play() {
      const run = this.run();
      if (!run) return;
      const [lo, hi] = Lade.slide.bounds(this, this.state) || [0, run.lastStep()];
      this.set({ playing: true, k: this.state.k >= hi ? lo : this.state.k });
      let last = performance.now(),
        owed = 0;
      const tick = (/** @type {number} */ now) => {
        if (!this.state.playing) return;
        owed += ((now - last) / 1000) * Math.min(this.state.speed, MAX_SPEED);
        last = now;
        if (owed >= 1) {
          const n = Math.floor(owed);
          owed -= n;
          const end = this.state.k + n >= hi;
          this.set({ k: this.state.k + n, playing: !end });
          if (end) return;
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    }

    /** @param {KeyboardEvent} ev */
    onKey(ev) {
      if (!this.root.isConnected || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      if (ev.key === "Escape" && this.state.embed) return Lade.slide.letGo(); // keys do not leave a focused frame
      if (this.state.mode === "lab" || owned(document.activeElement, ev.key)) return;
      const slide = !!this.state.embed; // an embed's arrows walk its slide's beats and stay on it
      const moves = {
        ArrowLeft: () => (slide ? Lade.slide.press(this, -1, false) : this.go(this.state.k - 1)),
        ArrowRight: () => (slide ? Lade.slide.press(this, 1, false) : this.go(this.state.k + 1)),
        Home: () => this.go(0),
        End: () => this.go(Infinity),
        " ": () => this.toggle(),
        PageDown: () => this.click(1),
        PageUp: () => this.click(-1),
      };
      const move = moves[/** @type {keyof typeof moves} */ (ev.key)];
      if (!move || !this.run()) return;
      ev.preventDefault();
      move();
    }

    /** A clicker's press (PageDown 1, PageUp -1): on a slide (an embed, the lesson in Present) its next or previous
     * beat (Lade.slide); in the page a chapter's open question is revealed first, then the steps move, and past the
     * last step (or before the first) the lesson turns the chapter. @param {1 | -1} way */
    click(way) {
      const run = this.run(),
        s = this.state;
      if (!run) return;
      if (Lade.slide.kind(s)) return Lade.slide.press(this, way);
      const ch = s.mode === "lesson" ? Lade.lesson.CHAPTERS[s.chapter - 1] : null;
      if (way > 0 && ch && ch.predict && !s.answered) {
        return this.answer(ch.predict.answer(run, s.k, this.lessonContext(run)).option);
      }
      const k = s.k + way;
      if (k >= 0 && k <= run.lastStep()) return this.go(k);
      if (ch) {
        const n = s.chapter + way;
        if (n >= 1 && n <= Lade.lesson.CHAPTERS.length) this.chapter(n);
      }
    }

    // -- messages from the server ------------------------------------------------------------------------------------
    /** The stage component's value (app/stage.py): open a run, follow a live race, or show a notice. @param {any} value */
    apply(value) {
      let msg = value;
      if (typeof msg === "string") {
        try {
          msg = JSON.parse(msg);
        } catch {
          return;
        }
      }
      if (!msg || typeof msg !== "object") return;
      if (typeof msg.notice === "string") this.set({ notice: msg.notice });
      if (typeof msg.live === "string") return this.follow(msg.live, String(msg.status || ""), !!msg.done);
      const embed = msg.embed && typeof msg.embed === "object" ? msg.embed : this.state.embed;
      const extra = {
        mode: /** @type {Mode} */ (msg.mode === "lesson" ? "lesson" : "explorer"),
        embed,
        ...(typeof msg.notice === "string" ? { notice: msg.notice } : {}),
      };
      if (typeof msg.run === "string") return this.open(msg.run, msg.step, extra, true);
      if (msg.mode === "lesson") {
        return this.chapter(typeof msg.chapter === "number" ? msg.chapter : 1, "none", { embed });
      }
    }

    /** A live race is recording under `handle`: pull what this page lacks, show its last step. @param {string} handle
     * @param {string} status @param {boolean} done */
    async follow(handle, status, done) {
      const first = this.state.live !== handle;
      this.set(first ? { live: handle, liveStatus: status, notice: "" } : { liveStatus: status });
      if (this.pulling) {
        this.pullAgain = true;
        return;
      }
      this.pulling = true;
      let tries = 0;
      try {
        do {
          this.pullAgain = false;
          const run = this.runs.get(handle);
          const got = await this.source.load(handle, run ? run.have() : null);
          if (got.error) {
            this.set({ notice: got.error });
            break;
          }
          const payload = got.payload || (got.payload_text ? JSON.parse(got.payload_text) : null);
          if (payload) this.runs.set(handle, new Lade.Run(payload, handle));
          else if (got.delta && run) run.append(got.delta);
          const shown = this.runs.get(handle);
          if (shown && (first || this.state.current === handle))
            this.set({ mode: "explorer", current: handle, k: shown.lastStep() });
          tries += 1;
        } while (this.pullAgain || (done && tries < 5 && this.stillRunning(handle) && (await pause(200))));
      } finally {
        this.pulling = false;
      }
    }

    /** Whether a run this page has still has a lane recording. @param {string} handle */
    stillRunning(handle) {
      const run = this.runs.get(handle);
      return !!run && run.lanes().some((l) => run.running(l.id));
    }

    // -- drawing -----------------------------------------------------------------------------------------------------
    /** @param {Run} run @returns {LessonContext} */
    lessonContext(run) {
      return {
        run,
        state: this.state,
        actions: this.actions,
        lab: this.boot.lab,
        boot: this.boot,
        links: { explorer: () => Lade.page.links.url({ run: run.handle, step: this.state.k }) },
      };
    }

    /** @param {State} before */
    render(before) {
      const s = this.state,
        run = this.run();
      this.renders += 1;
      document.body.dataset.ladeMode = s.embed ? "embed" : s.mode;
      // presenter mode: everything larger for a projector (body text about 24 px on a 1920-wide screen)
      document.body.classList.toggle("lade-present", s.present && !s.embed);
      this.frame.style.setProperty("--present-zoom", String(Math.max(1, Math.min(2.2, window.innerWidth / 1100))));
      this.frame.style.setProperty("--slide-zoom", Lade.layout.presentZoom().toFixed(3)); // the lesson's, in Present
      this.presentButton.setAttribute("aria-pressed", s.present ? "true" : "false");
      if (s.theme !== before.theme) Lade.theme.apply(s.theme); // not on every step: `follow` applied the first
      this.themeMenu.value = Lade.theme.toChoice(s.theme);
      this.root.dataset.mode = s.mode;
      this.frame.classList.toggle("embedded", !!s.embed);
      for (const b of this.tabs.querySelectorAll("[role=tab]")) {
        const on = /** @type {HTMLElement} */ (b).dataset.mode === s.mode;
        b.setAttribute("aria-selected", on ? "true" : "false");
        b.setAttribute("tabindex", on ? "0" : "-1");
        b.classList.toggle("on", on);
      }
      this.main.setAttribute("aria-labelledby", `mode-${s.mode}`);
      this.notice.hidden = !s.notice;
      this.notice.textContent = s.notice;
      this.playButton.textContent = s.playing ? "⏸ Pause" : "▶ Play";
      if (run) {
        // a slide's controls reach its span only (Lade.slide)
        const [lo, hi] = Lade.slide.bounds(this, s) || [0, run.lastStep()];
        this.slider.min = String(lo);
        this.slider.max = String(Math.max(hi, lo + 1));
        this.slider.disabled = hi === lo;
        this.slider.value = String(s.k);
        this.slider.setAttribute("aria-valuetext", `step ${s.k} of ${run.lastStep()}`);
        this.stepLabel.textContent = `clock step ${s.k} / ${run.lastStep()}`; // the race's clock: its slowest lane's
      }
      const keep = this.focusKey();
      Lade.layout.render(this, before, run);
      this.restoreFocus(keep);
      this.root.dataset.step = String(s.k);
      this.root.dataset.run = s.current || "";
    }

    /** The views of `ids` for the run at the state's step, into their containers (compact in an embed). `into`, `k`
     * and `compact`: other containers, step and form (an embed measured off screen, a chapter of the handout);
     * `compact` may name the views to draw zoomed (a chapter's `zoomed`).
     * @param {Run} run @param {string[]} ids @param {string[] | null} [lanes]
     * @param {Record<string, HTMLElement>} [into] @param {number} [k] @param {boolean | string[]} [compact] */
    drawViews(run, ids, lanes = null, into = undefined, k = undefined, compact = !!this.state.embed) {
      if (!into) this.drawn = { run, ids, lanes, compact };
      for (const id of ids) {
        const view = Lade.views.render[id],
          zoomed = Array.isArray(compact) ? compact.includes(id) : compact;
        if (view)
          fill((into || this.views)[id], view({ run, k: k === undefined ? this.state.k : k, lanes, compact: zoomed }));
      }
    }

    /** The views on screen drawn again (a drawing built once per layout is moved wherever it is drawn). */
    redraw() {
      const d = this.drawn;
      if (d) this.drawViews(d.run, d.ids, d.lanes, undefined, undefined, d.compact);
    }

    /** Linked highlighting: a window column or a candidate hovered lights up its n-gram in the pool, and the other
     * way round. @param {string | null} link */
    highlight(link) {
      for (const el of this.main.querySelectorAll(".linked")) el.classList.remove("linked");
      const run = this.run(),
        step = run && run.step(this.state.k);
      if (!link || !run || !step) return;
      const links = new Set([link]);
      if (link.startsWith("col:") && run.window(step).full)
        links.add(`ngram:${run.column(step, +link.slice(4)).join(",")}`);
      if (link.startsWith("cand:"))
        links.add(`ngram:${[step.input_token, ...step.candidates[+link.slice(5)]].join(",")}`);
      for (const l of links)
        for (const el of this.main.querySelectorAll(`[data-link="${CSS.escape(l)}"]`)) el.classList.add("linked");
    }

    // -- focus and announcements ---------------------------------------------------------------------------------------
    focusMain() {
      this.main.focus();
    }

    /** @param {string} where "chapter" (its heading), "answer", "chapter-tab" / "mode-tab" (the tab chosen),
     * "explorer" (the run's title), "main" (the stage's main region, where the arrows step) */
    moveFocus(where) {
      const target =
        where === "chapter"
          ? this.root.querySelector("#lesson-title")
          : where === "answer"
            ? this.root.querySelector("#lesson-answer")
            : where === "chapter-tab"
              ? this.root.querySelector(".chapters [aria-selected=true]")
              : where === "mode-tab"
                ? this.root.querySelector(".modes [aria-selected=true]")
                : where === "explorer"
                  ? this.root.querySelector(".run-title")
                  : where === "main"
                    ? this.main
                    : null;
      if (target) {
        if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
        /** @type {HTMLElement} */ (target).focus({ preventScroll: where === "main" });
      }
    }

    /** Where focus is, as something a redraw can find again (a view's region keeps its label). */
    focusKey() {
      const el = document.activeElement;
      if (!el || !this.main.contains(el) || el.id) return null;
      const view = el.closest(".view"),
        label = el.getAttribute("aria-label");
      return view && label ? { view: view.id, label } : null;
    }

    /** @param {{view: string, label: string} | null} key */
    restoreFocus(key) {
      if (!key || (document.activeElement && this.main.contains(document.activeElement))) return;
      const box = this.views[key.view];
      const again =
        box && [...box.querySelectorAll("[aria-label]")].find((el) => el.getAttribute("aria-label") === key.label);
      if (again) /** @type {HTMLElement} */ (again).focus({ preventScroll: true });
    }

    /** Tell screen readers what the step shown accepted (quiet while playing; one summary when Play stops). @param {boolean} [stopped] */
    announce(stopped = false) {
      clearTimeout(this.announceTimer);
      this.announceTimer = window.setTimeout(
        () => {
          const run = this.run(),
            s = this.state;
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
          this.liveRegion.textContent =
            `${stopped ? "Paused at" : "Step"} ${s.k} of ${run.lastStep()}. ${got} ` +
            `${plural(n.tokens, "token")} written so far.`;
        },
        stopped ? 50 : 250,
      );
    }
  }

  /**
   * A run by its one address, `runs/<handle>.json` beside the page, on the server (app/routes.py) and on a static
   * site alike: a payload, or (a live run on the server) what the page lacks of it since the steps it has.
   * @param {string} handle @param {Record<string, number> | null} since @returns {Promise<Loaded>}
   */
  async function fetchRun(handle, since) {
    const query = since ? `?since=${encodeURIComponent(JSON.stringify(since))}` : "";
    let res;
    try {
      res = await fetch(`runs/${encodeURIComponent(handle)}.json${query}`);
    } catch {
      return { error: `Could not reach the server for the run ${Lade.page.shown(handle)}.` };
    }
    const body = await res.json().catch(() => null);
    if (!res.ok || !body) {
      return { error: (body && body.error) || `Could not load the run ${Lade.page.shown(handle)} (${res.status}).` };
    }
    return body.trace && body.derived ? { payload: body } : body;
  }

  /**
   * Post a trace file to the server's `runs` (app/routes.py), its JSON as the body: the handle it is kept under, or
   * the server's sentence saying why it cannot be opened.
   * @param {Blob} file @returns {Promise<{ handle?: string, error?: string }>}
   */
  async function postRun(file) {
    let res;
    try {
      res = await fetch("runs", { method: "POST", body: file, headers: { "Content-Type": "application/json" } });
    } catch {
      return { error: "Could not reach the server to open that file." };
    }
    const body = await res.json().catch(() => null);
    if (res.ok && body && typeof body.handle === "string") return { handle: body.handle };
    return {
      error: (body && typeof body.error === "string" && body.error) || `Could not open that file (${res.status}).`,
    };
  }

  /** The sidebar's "Open a saved run" (app/ui.py): its button opens the file chooser, the chosen file opens on the
   * stage. Listened for on the document: Gradio may draw the sidebar before or after the stage. @param {Stage} stage */
  function openFiles(stage) {
    document.addEventListener("click", (ev) => {
      const button = ev.target instanceof Element ? ev.target.closest("#open-run") : null;
      const input = /** @type {HTMLInputElement | null} */ (document.getElementById("open-run-file"));
      if (button && input) input.click();
    });
    document.addEventListener("change", (ev) => {
      const input = /** @type {HTMLInputElement} */ (ev.target);
      if (input.id !== "open-run-file" || !input.files || !input.files[0]) return;
      const file = input.files[0];
      input.value = ""; // the same file may be chosen again
      stage.openFile(file);
    });
  }

  /** Whether a run lives only in this page (raced in the browser, lade-browser-race.js). @param {string} handle */
  const local = (handle) => handle.startsWith("browser-");

  /** The page's source of runs on the server: every run at its one address. @returns {Source} */
  const serverSource = () => ({ kind: "server", load: fetchRun });

  /** A static site's source: the gallery's runs at the same addresses, as files. @param {Boot} boot @returns {Source} */
  const siteSource = (boot) => ({
    kind: "site",
    load: async (handle) =>
      boot.gallery.some((g) => g.name === handle)
        ? fetchRun(handle, null)
        : { error: `No gallery run is called ${Lade.page.shown(handle)}.` },
  });

  /** The boot document in the page's head. @returns {Boot} */
  const readBoot = () => {
    if (Lade.boot) return Lade.boot;
    const el = document.getElementById("lade-boot");
    return /** @type {Boot} */ (JSON.parse((el && el.textContent) || "{}"));
  };

  /** Open what the address asks for, or `fallback`; the page has then landed (`Stage.address`). @param {Stage} stage
   * @param {() => any} fallback */
  async function follow(stage, fallback) {
    const link = Lade.page.links.read(location.search, stage.boot, Lade.lesson.CHAPTERS.length);
    await land(stage, link, fallback);
    const dropped = Lade.raceKeep.dropped(); // a race this tab ran and did not keep, before a reload
    if (dropped) stage.set({ notice: dropped });
    stage.landed = true;
    // `?race=1`: "Race it in your browser" open, where this page has the engine's files (a lecturer's link, an embed)
    if (link.race && stage.racePanel && stage.racePanel.hidden) stage.toggleRace(false);
  }

  /** Open the chapter, run or mode `link` names, else `fallback`. @param {Stage} stage @param {Link} link
   * @param {() => any} fallback */
  async function land(stage, link, fallback) {
    if (link.notice) stage.set({ notice: link.notice });
    if (link.present) stage.set({ present: true });
    const theme = stage.state.theme;
    if (link.theme && (link.theme.scheme !== theme.scheme || link.theme.contrast !== theme.contrast))
      stage.set({ theme: link.theme });
    // an embed's slide spans `from` to `to` (a chapter's: from where it opens to its answer), at `step` within it
    const from = link.embed && typeof link.from === "number" ? link.from : null;
    if (link.lesson) {
      await stage.chapter(link.lesson, "none", { embed: link.embed ? { lesson: true } : null });
      const at = from !== null ? from : link.step;
      if (typeof at === "number") stage.go(at);
      if (link.embed) stage.set({ embed: { lesson: true, from: stage.state.k } });
      return;
    }
    if (link.run) {
      const embed = link.embed ? { view: link.view || "outputs" } : null;
      const extra = { embed, notice: link.notice, ...(link.mode ? { mode: link.mode } : {}) };
      if (link.mode === "lab") Object.assign(extra, { lab: { ...stage.state.lab, ...link.lab } });
      const step = typeof link.step === "number" ? link.step : from;
      if (!(await stage.open(link.run, step, extra, true)) || !embed) return;
      const start = from !== null ? from : stage.state.k,
        to = typeof link.to === "number" ? Math.max(start, link.to) : start;
      stage.set({ embed: { ...embed, from: start, to }, k: stage.state.k });
      return;
    }
    await fallback();
  }

  /** Back and Forward restore what the address says (no new history entry while restoring). @param {Stage} stage
   * @param {() => any} fallback */
  function followHistory(stage, fallback) {
    window.addEventListener("popstate", async () => {
      stage.restoring = true;
      try {
        await follow(stage, fallback);
      } finally {
        stage.restoring = false;
      }
    });
  }

  /** Keep Gradio's sidebar out of the Tab order while it is closed (`inert`), and move focus into it when it opens. */
  function tameSidebar() {
    const sidebar = document.querySelector("#sidebar"),
      content = sidebar && sidebar.querySelector(".sidebar-content");
    if (!sidebar || !content) return false;
    const sync = () => {
      const open = sidebar.classList.contains("open");
      if (content.hasAttribute("inert") === !open) return;
      content.toggleAttribute("inert", !open);
      if (open) {
        const first = /** @type {HTMLElement | null} */ (content.querySelector("textarea, input, select, button"));
        if (first) first.focus();
      }
    };
    new MutationObserver(sync).observe(sidebar, { attributes: true, attributeFilter: ["class"] });
    sync();
    return true;
  }

  /** The test hook: the page's stage, for tests and tools (the one global the renderer sets). @param {Stage} stage */
  const hook = (stage) => {
    window.ladeStage = stage;
    return stage;
  };

  return {
    Stage,
    /** gr.HTML's js_on_load: mount the stage once, then follow the component's value. */
    mount(/** @type {HTMLElement} */ element, /** @type {any} */ props, /** @type {any} */ watch) {
      const host = /** @type {HTMLElement} */ (element.querySelector(".lade-host") || element);
      const stage = hook(new Stage(host, { boot: readBoot(), source: serverSource() }));
      follow(stage, () => stage.apply(props.value));
      followHistory(stage, () => stage.chapter(1, "none"));
      watch("value", () => stage.apply(props.value));
      openFiles(stage);
      if (!tameSidebar()) {
        // Gradio may mount the sidebar after the stage: watch the page until it is there
        const seen = new MutationObserver(() => {
          if (tameSidebar()) seen.disconnect();
        });
        seen.observe(document.body, { childList: true, subtree: true });
        window.setTimeout(() => seen.disconnect(), 30000);
      }
      return stage;
    },
    /** A static site: the boot in the page, runs in files beside it. @param {HTMLElement} host */
    mountSite(host) {
      const boot = readBoot(),
        stage = hook(new Stage(host, { boot, source: siteSource(boot) }));
      follow(stage, () => stage.chapter(1, "none"));
      followHistory(stage, () => stage.chapter(1, "none"));
      return stage;
    },
    /** The HTML export: one run, no server. @param {HTMLElement} host @param {Payload} payload @param {string} name */
    mountStandalone(host, payload, name) {
      const boot = readBoot(),
        stage = hook(new Stage(host, { boot, source: { kind: "inline", load: async () => ({ payload }) } }));
      stage.open(name, typeof boot.step === "number" ? boot.step : null, {}, true).then(() => {
        const run = stage.run(),
          entry = boot.gallery.find((g) => g.name === name);
        // the tab cannot isolate text: it gets the run's title with its invisible characters named
        if (run) document.title = Lade.dom.labelText(entry ? entry.title : run.title);
      });
      return stage;
    },
  };
})();
window.Lade.stage = LadeStage;
