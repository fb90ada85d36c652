// The stage: the one place the views live, in the page, in every embed and in the HTML export.
//
// It holds the runs the page has (by name), the run and step on screen and the mode (lesson, explorer, speed lab),
// and draws the views of the step shown. Stepping (buttons, slider, keys ← → Space Home End anywhere on the page,
// Play at up to 30 steps/s) never asks the server anything. The server talks to it with messages (`apply`): open a
// run, stream a live race, show a notice; it talks back with `trigger` events ('opened': a run was opened here, so
// downloads follow; 'applied': an opened run is drawn, so the server may drop its copy of the message) and fetches
// gallery runs it does not have yet through `server.load_gallery(name)`.
(() => {
  "use strict";
  const Lade = (window.Lade = window.Lade || {});
  const { h, fill, plural, fmt } = Lade;

  const VIEW_IDS = Lade.VIEWS.ids, GROUPS = Lade.VIEWS.groups;  // named once, in app/render/views.py
  const SECTIONS = [
    { id: "sec-outputs", title: "Side by side: the same text, fewer steps", note: "outputs",
      rows: [["ar-output", "la-output"], ["counter"], ["progress-plot"]] },
    { id: "sec-chain", title: "One step: window → pool → verification", note: "chain",
      rows: [["window-view", "pool-view"], ["verify-view"], ["pool-plot"]] },
    { id: "sec-trajectory", title: "The trajectories the window keeps", note: "trajectory", rows: [["trajectory-view"]] },
    { id: "sec-mask", title: "The attention mask that makes it one forward pass", note: "mask", rows: [["mask-view"]] },
  ];
  const MAX_SPEED = 30;
  Lade.VIEW_IDS = VIEW_IDS;

  function editable(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)) && el.type !== "range";
  }

  class Stage {
    constructor(root, { trigger = null, server = null, standalone = false } = {}) {
      this.root = root;
      this.trigger = trigger;
      this.server = server;
      this.standalone = standalone;
      this.runs = new Map();
      this.gallery = [];
      this.current = null;
      this.k = 0;
      this.mode = "explorer";
      this.speed = 6;
      this.playing = false;
      this.embed = null;
      this.lessonRoles = {};
      this.lab = null;
      this.focus = null;
      this.renders = 0;
      this.build();
      this.keys = (ev) => this.onKey(ev);
      document.addEventListener("keydown", this.keys);
    }

    // -- structure ----------------------------------------------------------------------------------------------
    build() {
      const modeButton = (mode, label) => h("button", { class: "mode", dataset: { mode }, onclick: () => this.setMode(mode) }, label);
      this.nav = h("nav", { class: "modes", "aria-label": "modes" }, modeButton("lesson", "Lesson"),
        modeButton("explorer", "Explorer"), modeButton("lab", "Speed lab"));
      this.lessonBox = h("div", { class: "lesson-box" });
      this.runbar = h("div", { class: "runbar" });
      this.notice = h("div", { class: "notice", role: "status", hidden: true });
      this.race = h("div", { class: "race", hidden: true });
      this.slider = h("input", { type: "range", id: "step-slider", min: 0, max: 1, value: 0, step: 1, "aria-label": "step",
        oninput: () => this.go(+this.slider.value) });
      this.playButton = h("button", { id: "play", class: "primary", onclick: () => this.toggle(), title: "play / pause (Space)" }, "▶ Play");
      this.stepLabel = h("span", { class: "step-label" });
      const speed = h("select", { class: "speed", "aria-label": "speed", onchange: (ev) => { this.speed = +ev.target.value; } },
        [1, 2, 4, 6, 10, 20, 30].map((s) => h("option", { value: s, selected: s === this.speed }, `${s} steps/s`)));
      this.playbar = h("div", { class: "playbar" },
        h("button", { id: "step-prev", onclick: () => this.go(this.k - 1), title: "previous step (←)" }, "◀ Step"),
        this.playButton, h("button", { id: "step-next", onclick: () => this.go(this.k + 1), title: "next step (→)" }, "Step ▶"),
        this.slider, this.stepLabel, speed, h("span", { class: "keys muted" }, "keys: ← → Space Home End"));
      this.nodes = {};
      for (const id of VIEW_IDS) this.nodes[id] = h("div", { id, class: "view", dataset: { view: id } });
      this.sections = SECTIONS.map((sec) => h("section", { id: sec.id, class: "sec" }, h("h2", {}, sec.title),
        h("div", { class: "explain" }, h("b", {}, "What am I looking at? "), Lade.NOTES[sec.note]),
        sec.rows.map((row) => h("div", { class: `vrow n${row.length}` }, row.map((id) => this.nodes[id])))));
      this.honest = h("div", { id: "honest-note" });
      this.share = h("details", { class: "share" }, h("summary", {}, "Link or embed this view"), h("div", { class: "share-body" }));
      this.share.addEventListener("toggle", () => this.renderShare());
      this.labBox = h("div", { class: "lab-intro" });
      this.body = h("div", { class: "stage-body" }, this.runbar, this.notice, this.race, this.playbar, this.sections,
        this.honest, this.share);
      this.nav.hidden = this.standalone;
      this.frame = h("div", { class: "lade-stage" }, this.nav, this.lessonBox, this.labBox, this.body);
      fill(this.root, this.frame);
    }

    // -- messages from the server --------------------------------------------------------------------------------
    apply(msg) {
      if (typeof msg === "string") {
        try { msg = JSON.parse(msg); } catch (err) { return; }
      }
      if (!msg || typeof msg !== "object") return;
      if (msg.op === "ack") {  // the server dropped its copy of message `of`; nothing to draw
        this.released = msg.of;
        return;
      }
      this.seq = msg.seq;  // the last message applied (tests and tools wait on it)
      if (msg.gallery) this.gallery = msg.gallery;
      if (msg.lesson) this.lessonRoles = msg.lesson;
      if (msg.lab) this.lab = msg.lab;
      for (const [name, payload] of Object.entries(msg.runs || {})) this.runs.set(name, new Lade.Run(payload, name));
      if (msg.embed !== undefined) this.embed = msg.embed;
      if (msg.op === "steps") this.appendLive(msg);
      if (msg.notice !== undefined) this.setNotice(msg.notice);
      if (msg.current && this.runs.has(msg.current)) {
        this.current = msg.current;
        const run = this.run();
        this.k = msg.step === "last" ? run.lastStep() : Math.max(0, Math.min(msg.step || 0, run.lastStep()));
      }
      if (msg.chapter) this.chapter = msg.chapter;
      if (msg.mode) this.setMode(msg.mode);
      else this.render();
      // Gradio keeps a component's last value per session: once an opened run is here, tell the server it may drop it
      if (msg.op === "open" && Object.keys(msg.runs || {}).length && this.trigger) this.trigger("applied", { seq: msg.seq });
    }

    appendLive(msg) {
      const run = this.runs.get(msg.name);
      if (!run) return;
      for (const [lane, part] of Object.entries(msg.lanes)) {
        const method = run.t[lane];
        method.steps.push(...part.steps);
        for (const s of part.steps) method.tokens.push(...s.accepted);
        method.stop_reason = part.stop_reason;
        if (lane === "parallel") run.d.steps.push(...part.derived);
      }
      run.d.layouts.push(...(msg.layouts || []));
      Object.assign(run.t.token_text, msg.token_text || {});
      run.version = (run.version || 0) + 1;
      this.k = run.lastStep();
      this.raceStatus(run, msg);
    }

    raceStatus(run, msg) {
      this.race.hidden = false;
      const lanes = ["parallel", "baseline"].map((lane) => {
        const m = run.t[lane], secs = m.steps.reduce((a, s) => a + s.forward_s + s.overhead_s, 0);
        const frac = Math.min(1, m.tokens.length / run.t.max_new_tokens);
        return h("div", { class: `lane lane-${lane}`, dataset: { lane, tokens: m.tokens.length } },
          h("span", { class: "lane-name" }, run.laneName(lane)),
          h("span", { class: "bar" }, h("span", { class: "fill", style: `width:${(100 * frac).toFixed(1)}%` })),
          h("span", { class: "lane-num" }, `${plural(m.tokens.length, "token")} in ${fmt(secs)} s · ` +
            `${fmt(secs > 0 ? m.tokens.length / secs : 0, 1)} tok/s${m.stop_reason === "running" ? "" : " · done"}`));
      });
      fill(this.race, h("div", { class: "race-title" }, msg.status || "Live race: both methods take turns on one clock; " +
        "the one that has spent less time makes the next step."), lanes);
    }

    setNotice(text) {
      this.notice.hidden = !text;
      this.notice.textContent = text || "";
    }

    // -- state ------------------------------------------------------------------------------------------------------
    run() { return this.current ? this.runs.get(this.current) : null; }

    // the run `name`, fetched from the gallery if this page does not have it yet (null if it cannot be had)
    async loadRun(name) {
      if (this.runs.has(name)) return this.runs.get(name);
      if (!this.server || !this.server.load_gallery) { this.setNotice(`The run ${name} is not in this page.`); return null; }
      try {
        const payload = await this.server.load_gallery(name);
        if (!payload || !payload.trace) throw new Error("no such run");
        this.runs.set(name, new Lade.Run(payload, name));
        return this.runs.get(name);
      } catch (err) {
        this.setNotice(`Could not load the run ${name}.`);
        return null;
      }
    }

    async openRun(name, k, mode = "explorer") {
      if (!(await this.loadRun(name))) return false;
      this.current = name;
      const run = this.run();
      this.k = Math.max(0, Math.min(typeof k === "function" ? k(run) : k || 0, run.lastStep()));
      if (this.trigger && mode === "explorer") this.trigger("opened", { name, step: this.k });
      this.setMode(mode);
      return true;
    }

    setMode(mode) {
      this.mode = mode;
      this.pause();
      document.body.dataset.ladeMode = this.embed ? "embed" : mode;
      this.root.dataset.mode = mode;
      for (const b of this.nav.querySelectorAll("button")) b.classList.toggle("on", b.dataset.mode === mode);
      if (mode === "lesson" && Lade.lesson) Lade.lesson.show(this, this.chapter || 1);
      else this.lessonBox.hidden = true;
      this.labBox.hidden = mode !== "lab";
      if (mode === "lab" && Lade.labIntro) Lade.labIntro(this);
      this.body.hidden = mode === "lab";
      if (mode === "explorer") this.setFocus(null);
      this.render();
    }

    // lesson: the views in focus; the sections without any are hidden, the other views dimmed
    setFocus(ids) {
      this.focus = ids && ids.length ? new Set(ids) : null;
      this.render();
    }

    visibleViews() {
      if (this.embed && this.embed.view) {
        return new Set((GROUPS[this.embed.view] || [this.embed.view]).filter((id) => VIEW_IDS.includes(id)));
      }
      return this.focus || new Set(VIEW_IDS);
    }

    go(k) {
      const run = this.run();
      if (!run) return;
      this.k = Math.max(0, Math.min(Math.round(k), run.lastStep()));
      this.render();
    }

    toggle() { this.playing ? this.pause() : this.play(); }

    play() {
      const run = this.run();
      if (!run) return;
      if (this.k >= run.lastStep()) this.go(0);
      this.playing = true;
      this.playButton.textContent = "⏸ Pause";
      let last = performance.now(), owed = 0;
      const tick = (now) => {
        if (!this.playing) return;
        owed += ((now - last) / 1000) * Math.min(this.speed, MAX_SPEED);
        last = now;
        if (owed >= 1) {
          const n = Math.floor(owed);
          owed -= n;
          this.go(this.k + n);
          if (this.k >= this.run().lastStep()) return this.pause();
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    }

    pause() {
      this.playing = false;
      if (this.playButton) this.playButton.textContent = "▶ Play";
    }

    onKey(ev) {
      if (!this.root.isConnected || this.root.offsetParent === null || editable(document.activeElement)) return;
      if (ev.altKey || ev.ctrlKey || ev.metaKey || this.mode === "lab") return;
      const moves = { ArrowLeft: () => this.go(this.k - 1), ArrowRight: () => this.go(this.k + 1),
        Home: () => this.go(0), End: () => this.go(Infinity), " ": () => this.toggle() };
      if (!moves[ev.key]) return;
      ev.preventDefault();
      if (ev.key !== " ") this.pause();
      moves[ev.key]();
    }

    // -- drawing ----------------------------------------------------------------------------------------------------
    render() {
      const run = this.run();
      this.frame.classList.toggle("embedded", !!this.embed);
      if (!run) return;
      const visible = this.visibleViews();
      this.slider.max = Math.max(run.lastStep(), 1);
      this.slider.value = this.k;
      this.stepLabel.textContent = `step ${this.k} / ${run.lastStep()}`;
      if (this.mode !== "lab") {
        for (const sec of this.sections) {
          const views = [...sec.querySelectorAll(".view")];
          sec.hidden = !views.some((v) => visible.has(v.id));
          for (const v of views) {
            v.hidden = !!this.embed && !visible.has(v.id);  // an embed shows its views only; the lesson dims the rest
            v.classList.toggle("dim", !visible.has(v.id));
            if (!sec.hidden && !v.hidden) Lade.views[v.id]({ run, k: this.k, node: v, stage: this });
          }
        }
        if (run !== this._shown || run.version !== this._shownVersion) this.renderRunbar(run);
        if (this.mode === "lesson" && Lade.lesson) Lade.lesson.refresh(this);
        Lade.fill(this.honest, this.embed || this.focus ? null : Lade.honestNote(run));
        if (this.share.open) this.renderShare();
      }
      this.renders += 1;
      this.root.dataset.step = this.k;
      this.root.dataset.run = this.current;
      if (this.onrender) this.onrender(this);
    }

    // the gallery as a menu: each run opens at its first step that accepted the most tokens
    galleryMenu() {
      if (this.standalone || this.embed || !this.gallery.length) return null;
      const menu = h("select", { id: "gallery-menu", "aria-label": "open a gallery run", onchange: async (ev) => {
        const name = ev.target.value;
        if (!name) return;
        const run = await this.loadRun(name);
        if (run) this.openRun(name, Lade.interestingStep(run));
      } }, h("option", { value: "" }, "Gallery: open a recorded run…"),
        this.gallery.map((g) => h("option", { value: g.name, selected: g.name === this.current }, g.title)));
      return menu;
    }

    renderRunbar(run) {
      this._shown = run;
      this._shownVersion = run.version;
      const entry = this.gallery.find((g) => g.name === this.current);
      fill(this.runbar, h("div", { class: "run-title" }, h("b", {}, entry ? entry.title : run.t.title || this.current),
        entry && entry.caption ? h("span", { class: "caption" }, " — ", entry.caption) : null),
      h("div", { class: "run-settings", id: "run-settings" }, "On screen: ", Lade.settingsText(run), ". ", Lade.runSummary(run)),
      h("details", { class: "prompt" }, h("summary", {}, "Prompt"), h("div", { class: "prompt-text" }, run.t.prompt)),
      this.galleryMenu(),
      this.standalone || this.embed ? null : h("button", { class: "small primary", id: "run-yourself", onclick: () => {
        const sidebar = document.querySelector("#sidebar");
        if (sidebar && !sidebar.classList.contains("open")) sidebar.querySelector(".toggle-button").click();
      } }, "⚙ Run your own, or open a run"),
      this.standalone || this.embed ? null : h("button", { class: "small", id: "teach-this", onclick: () => {
        this.lessonOwn = run.method === "lookahead" ? this.current : null;
        this.chapter = 1;
        this.setMode("lesson");
      } }, "Open the lesson on this run"));
    }

    // -- linked highlighting: hover a window column or a candidate, see it in the other views ------------------------
    linkHover(node) {
      if (node._linked) return;
      node._linked = true;
      node.addEventListener("mouseover", (ev) => {
        const el = ev.target.closest("[data-link]");
        this.highlight(el ? el.dataset.link : null);
      });
      node.addEventListener("mouseleave", () => this.highlight(null));
    }

    highlight(link) {
      for (const el of this.root.querySelectorAll(".linked")) el.classList.remove("linked");
      if (!link) return;
      const run = this.run(), step = run && run.step(this.k);
      const links = new Set([link]);
      if (step && link.startsWith("col:")) { // a column's n-gram, as the pool holds it
        const j = +link.slice(4), column = step.levels_before.map((l) => l[j]).concat([step.new_level[j]]);
        if (step.levels_before.length === run.config.ngram - 1) links.add(`ngram:${column.join(",")}`);
      }
      if (step && link.startsWith("cand:")) { // a candidate, as the pool held it under x
        const c = +link.slice(5);
        links.add(`ngram:${[step.input_token, ...step.candidates[c]].join(",")}`);
      }
      for (const l of links) for (const el of this.root.querySelectorAll(`[data-link="${CSS.escape(l)}"]`)) el.classList.add("linked");
    }

    // -- sharing: links and iframes for the run and step shown (gallery runs only) ---------------------------------
    renderShare() {
      const body = this.share.querySelector(".share-body"), entry = this.gallery.find((g) => g.name === this.current);
      const which = h("select", { "aria-label": "view to save" }, VIEW_IDS.map((id) => h("option", { value: id }, id)));
      const pictures = h("div", { class: "pictures" }, "Picture of a view at this step, for slides (made in your browser): ",
        which, " ", h("button", { class: "small", id: "save-picture", onclick: () => Lade.pictures.save(which.value) }, "Save"));
      if (!entry || this.standalone) {
        return fill(body, h("p", { class: "muted" }, this.standalone ? "This is a standalone file; share the file itself."
          : "Links open the gallery's runs. To share this run, download its trace (others open it with “Open a saved run”) or export it as one HTML file."), pictures);
      }
      const base = `${location.origin}${location.pathname}`;
      const link = (extra) => `${base}?${new URLSearchParams({ run: entry.name, step: this.k, ...extra })}`;
      const rows = [["This run at this step", link({})]];
      for (const [view, height] of [...Object.keys(GROUPS).map((g) => [g, 640]), ...VIEW_IDS.map((v) => [v, 520])]) {
        rows.push([`Only ${view} (720 px column)`, `<iframe src="${link({ view, embed: 1 })}" width="720" height="${height}" style="border:0" loading="lazy"></iframe>`]);
      }
      fill(body, rows.map(([title, code]) => h("div", { class: "snippet-row" }, h("div", { class: "muted" }, title),
        h("pre", { class: "snippet" }, code))), pictures);
    }
  }

  Lade.Stage = Stage;

  // gr.HTML's js_on_load: mount the stage once, then follow the component's value (the server's messages).
  Lade.mount = function mount(element, props, watch, trigger, server) {
    const host = element.querySelector(".lade-host") || element;
    const stage = new Stage(host, { trigger, server });
    window.ladeStage = stage;
    stage.apply(props.value);
    watch("value", () => stage.apply(props.value));
    return stage;
  };

  // the HTML export: one run, no server
  Lade.mountStandalone = function mountStandalone(host, payload, name) {
    const stage = new Stage(host, { standalone: true });
    window.ladeStage = stage;
    stage.apply({ runs: { [name]: payload }, current: name, step: 0, mode: "explorer" });
    return stage;
  };
})();
