// @ts-check
// The stage (`Lade.stage`): the one owner of the page's state, in the Gradio page, the static site, every embed and
// the HTML export. All state is declared once (`initialState`) and changed through one method (`set`), which draws
// once; the lesson, the views and the page's parts are drawn from the state and never write it (their buttons call
// the actions below). Runs come from a source (lade-sources.js), pulled by handle; stepping (buttons, slider, keys,
// Play at up to 30 steps/s) asks no one. The stage's other jobs each have a file: its parts (lade-frame.js), the
// address and history (lade-address.js), print (lade-print.js), Present (lade-present.js), sharing
// (lade-share.js), keys and the clicker (lade-keys.js, with lade-slide.js), focus and announcements
// (lade-focus.js) and the Gradio page around it (lade-host.js).
const LadeStage = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { fill } = Lade.dom;
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
    liveNote: "",
    share: false,
    present: false,
    theme: Lade.theme.read(new URLSearchParams(location.search)),
    lab: { device: "h100", size: "7B", devices: 1, batch: 1 },
  });

  class Stage {
    /** @param {HTMLElement} root @param {{boot: Boot, source: Source}} options */
    constructor(root, { boot, source }) {
      this.root = root;
      this.boot = boot;
      this.source = source;
      /** @type {Map<string, Run>} */
      this.runs = new Map();
      /** @type {Map<string, {asking: Promise<void>, why: string}>} each run's lab figures asked of its address, by
       * handle: the one asking, and "asking" until it settles, then why there are none ("" once they came) */
      this.labs = new Map();
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
      /** @type {Run | undefined} the run and its version the explorer last drew whole (lade-layout.js) */
      this.shownRun = undefined;
      /** @type {number | undefined} */
      this.shownVersion = undefined;
      this.shareTimer = 0; // "Link or embed"'s pending write (lade-layout.js `shareBody`)
      // the page's parts (lade-frame.js), filled by render
      const built = Lade.frame.build(this);
      this.tabs = built.tabs;
      this.skip = built.skip;
      this.keysHint = built.keysHint;
      this.presentButton = built.presentButton;
      this.themeMenu = built.themeMenu;
      this.notice = built.notice;
      this.racePanel = built.racePanel;
      this.raceButton = built.raceButton;
      this.liveRegion = built.liveRegion;
      this.main = built.main;
      this.slider = built.slider;
      this.playButton = built.playButton;
      this.stepLabel = built.stepLabel;
      this.speedMenu = built.speedMenu;
      this.openLink = built.openLink;
      this.playbar = built.playbar;
      this.frame = built.frame;
      document.addEventListener("keydown", (ev) => Lade.keys.onKey(this, ev));
      Lade.slide.listen(this);
      // a slide deck resizes its frames (full screen, overview): the embed fits its new size; and the page around a
      // slide settles after it was first fitted (Gradio's parts appear and go): it fits what is left
      window.addEventListener("resize", () => Lade.layout.refit(this));
      // a window turned from a phone's width to a wider one (or back) draws its views for that width
      window.matchMedia(Lade.layout.PHONE).addEventListener("change", () => this.set({}));
      const settle = new ResizeObserver(() => Lade.layout.refit(this));
      for (let el = /** @type {Element | null} */ (root); el; el = el.parentElement) settle.observe(el);
      Lade.print.watch(this); // a printed page: as much of the screen as paper holds
      this.actions = {
        go: (/** @type {number} */ k) => this.go(k),
        chapter: (/** @type {number} */ n, /** @type {string | undefined} */ how) => {
          this.chapter(n, how);
        },
        answer: (/** @type {number} */ option) => this.answer(option),
        explore: () => this.set({ mode: "explorer" }, "explorer"),
        open: (/** @type {string} */ handle, /** @type {OpenAt} */ step) => this.open(handle, step),
        teach: () => this.teach(),
        sidebar: () => Lade.host.openSidebar(),
        lab: (/** @type {Partial<LabInputs>} */ patch) => this.set({ lab: { ...this.state.lab, ...patch } }),
        mode: (/** @type {Mode} */ mode) => this.mode(mode),
        printLesson: () => Lade.print.lesson(this),
      };
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
      Lade.share.fileLinks(this);
      Lade.address.write(this, before);
      if (focus) Lade.focus.move(this, focus);
      // the step shown is announced when it moves, and when the run under it grew or was pulled whole again at the
      // same clock step (a live race ends with a lane's last step beneath greedy's: the news must be the run's now)
      const shown = /** @type {[Run, number, number] | null} */ (run ? [run, run.version, next.k] : null),
        was = this.announced;
      this.announced = shown;
      if (shown && !next.playing && (!was || shown.some((x, i) => x !== was[i]))) Lade.focus.announce(this);
      if (before.playing && !next.playing) Lade.focus.announce(this, true);
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
      const got = await (Lade.sources.local(handle)
        ? Lade.raceKeep.load(handle)
        : this.source.load(handle, null)
      ).catch((/** @type {Error} */ err) => ({ error: `Could not load the run: ${err.message}` }));
      const payload = got && got.payload;
      if (!got || !payload) {
        this.set({ notice: (got && got.error) || `The run ${Lade.links.shown(handle)} is not in this page.` });
        return null;
      }
      const run = new Lade.Run(payload, handle);
      this.runs.set(handle, run);
      return run;
    }

    /** Open a run in the explorer (or `mode`) at `step`: a number, "last", "interesting" or null (its opening step).
     * @param {string} handle @param {OpenAt} step @param {Partial<State>} [extra] @param {boolean} [fromServer] */
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
      const got = await Lade.sources.postRun(file);
      if (got.error || !got.handle) return this.set({ notice: got.error || "Could not open that file." });
      return this.open(got.handle, null, {}, true);
    }

    /** One handout of the whole lesson for print (lade-print.js); its chapters' count. */
    handout() {
      return Lade.print.handout(this);
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

    // -- messages from the server ------------------------------------------------------------------------------------
    /** The stage component's value (app/stage.py), as its JSON text: open a run, follow a live race, or show a notice.
     * @param {string | StageValue | null} value */
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
      const said = done ? { liveNote: status } : { liveStatus: status, liveNote: "" };
      this.set(first ? { live: handle, liveStatus: "", notice: "", ...said } : said);
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
          const payload = got.payload;
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

    /** The lab figures of a run the lab or the lesson shows, asked of its address once (the server computes them when
     * asked; a static site holds them as files) and drawn when they come. A run raced in this page, an export's (it
     * carries them) and a run still recording are not asked. Settles when they came (or did not).
     * @param {Run} run @returns {Promise<void>} */
    askLab(run) {
      const handle = run.handle,
        asked = this.labs.get(handle);
      if (asked) return asked.asking;
      if (run.d.lab || this.source.kind === "inline" || Lade.sources.local(handle)) return Promise.resolve();
      if (run.t.parallel.steps.length < 2 || this.stillRunning(handle)) return Promise.resolve();
      const entry = { asking: Promise.resolve(), why: "asking" };
      entry.asking = Lade.sources.fetchLab(handle).then((got) => {
        if (got.lab) run.d.lab = got.lab;
        entry.why = got.lab ? "" : got.error || "";
        if (this.run() === run && this.readsLab()) this.set({}); // drawn again only where they are read
      });
      this.labs.set(handle, entry);
      return entry.asking;
    }

    /** Whether what is on screen reads the run's lab figures: the lab, a chapter that says so (`Chapter.lab`). */
    readsLab() {
      const s = this.state,
        ch = s.mode === "lesson" ? Lade.lesson.CHAPTERS[s.chapter - 1] : null;
      return s.mode === "lab" || !!(ch && ch.lab);
    }

    /** Where a run's lab figures stand, for the lab while it has none: "asking" until they come, else why there are
     * none (a run still recording, a race run in this page, the answer of the run's address). @param {Run} run */
    labStatus(run) {
      if (this.stillRunning(run.handle))
        return "The lab predicts from a whole run: its figures come when this run has ended.";
      if (Lade.sources.local(run.handle))
        return (
          "A race run in this browser has no lab figures: the lab's predictions are computed by the project's Python, " +
          "for the gallery's runs and the runs a server holds (download this race and open it there)."
        );
      const asked = this.labs.get(run.handle);
      return asked && asked.why;
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
        links: { explorer: () => Lade.links.url({ run: run.handle, step: this.state.k }) },
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
      const keep = Lade.focus.key(this);
      Lade.layout.render(this, before, run);
      Lade.focus.restore(this, keep);
      if (run && this.readsLab()) this.askLab(run);
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
  }

  /** The test hook: the page's stage, for tests and tools (the one global the renderer sets). @param {Stage} stage */
  const hook = (stage) => {
    window.ladeStage = stage;
    return stage;
  };

  return {
    Stage,
    /** gr.HTML's js_on_load: mount the stage once, then follow the component's value. */
    mount(
      /** @type {HTMLElement} */ element,
      /** @type {{value: string | null}} */ props,
      /** @type {(name: string, then: () => void) => void} */ watch,
    ) {
      const host = /** @type {HTMLElement} */ (element.querySelector(".lade-host") || element);
      const stage = hook(new Stage(host, { boot: Lade.sources.readBoot(), source: Lade.sources.server() }));
      Lade.address.follow(stage, () => stage.apply(props.value));
      Lade.address.followHistory(stage, () => stage.chapter(1, "none"));
      watch("value", () => stage.apply(props.value));
      Lade.host.openFiles(stage);
      Lade.host.closeSidebarOnRun();
      Lade.host.keepSettingsInRange();
      Lade.host.tameSidebarWhenThere();
      return stage;
    },
    /** A static site: the boot in the page, runs in files beside it. @param {HTMLElement} host */
    mountSite(host) {
      const boot = Lade.sources.readBoot(),
        stage = hook(new Stage(host, { boot, source: Lade.sources.site(boot) }));
      Lade.address.follow(stage, () => stage.chapter(1, "none"));
      Lade.address.followHistory(stage, () => stage.chapter(1, "none"));
      return stage;
    },
    /** The HTML export: one run, no server. @param {HTMLElement} host @param {Payload} payload @param {string} name */
    mountStandalone(host, payload, name) {
      const boot = Lade.sources.readBoot(),
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
