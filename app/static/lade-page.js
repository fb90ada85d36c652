// @ts-check
// The page's parts around the views (`Lade.page`), each drawn from the state and the run: the run bar (title,
// caption, settings, prompt, gallery menu), the live race box, the share panel (links and iframe code), the
// explorer's sections, and the links the page reads and writes (`?run=&step=&view=&embed=1`, `?lesson=K`).
const LadePage = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fmt, plural, pct } = Lade.dom;

  /** The explorer's sections: each one's views by rows, and its note ("outputs": the run's own, `outputsNote`).
   * @type {{id: string, title: string, note: "outputs" | keyof typeof LadeNotes.SECTIONS, rows: string[][]}[]} */
  const SECTIONS = [
    {
      id: "sec-outputs",
      title: "Side by side: the same text, fewer steps",
      note: "outputs",
      rows: [["ar-output", "la-output"], ["counter"], ["relatives-view"], ["progress-plot"]],
    },
    {
      id: "sec-chain",
      title: "One step: window → pool → verification",
      note: "chain",
      rows: [["window-view", "pool-view"], ["verify-view"], ["pool-plot"]],
    },
    {
      id: "sec-trajectory",
      title: "The trajectories the window keeps",
      note: "trajectory",
      rows: [["trajectory-view"]],
    },
    { id: "sec-mask", title: "The attention mask that makes it one forward pass", note: "mask", rows: [["mask-view"]] },
  ];
  const EMBED_SIZES = [
    [720, 405],
    [960, 540],
    [1280, 720],
  ];

  /** @param {PageContext} ctx */
  function runbar(ctx) {
    const { run, boot, state } = ctx,
      entry = boot.gallery.find((g) => g.name === run.handle);
    const menu = ctx.standalone
      ? null
      : h(
          "label",
          { class: "menu" },
          h("span", { class: "sr-only" }, "Open a gallery run"),
          h(
            "select",
            {
              id: "gallery-menu",
              onchange: (/** @type {Event} */ ev) => {
                const name = /** @type {HTMLSelectElement} */ (ev.target).value;
                if (name) ctx.actions.open(name, "interesting");
              },
            },
            h("option", { value: "" }, "Gallery: open a recorded run…"),
            boot.gallery.map((g) => h("option", { value: g.name, selected: g.name === state.current }, g.title)),
          ),
        );
    return h(
      "div",
      { class: "runbar" },
      h(
        "h2",
        { class: "run-title" },
        entry ? entry.title : Lade.dom.label(run.title),
        entry && entry.caption ? h("span", { class: "caption" }, " — ", entry.caption) : null,
      ),
      h(
        "p",
        { class: "run-settings", id: "run-settings" },
        "On screen: ",
        run.settingsText(),
        ". ",
        Lade.notes.runSummary(run),
      ),
      h(
        "details",
        { class: "prompt" },
        h("summary", {}, "Prompt"),
        h("div", { class: "prompt-text" }, Lade.dom.proseText(run.t.prompt)),
      ),
      menu,
      ctx.standalone
        ? null
        : boot.source === "site"
          ? liveLink(boot, "run-yourself")
          : h(
              "button",
              { class: "small primary", id: "run-yourself", onclick: () => ctx.actions.sidebar() },
              "⚙ Run your own, or open a run",
            ),
      ctx.standalone
        ? null
        : h(
            "button",
            { class: "small", id: "teach-this", onclick: () => ctx.actions.teach() },
            "Open the lesson on this run",
          ),
    );
  }

  /** A span of seconds in words (45 s, 12 min, 3.5 h). @param {number} s */
  const duration = (s) => (s < 90 ? `${s} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);

  /** What a link to a run the server holds (a live or opened run) can promise, from the store's own state
   * (`runs/<handle>/held.json`, app/store.py `RunStore.held`): never a fixed time, which the store does not keep.
   * @param {Held | null} held null: the server did not answer @returns {string} */
  function heldWords(held) {
    if (!held || typeof held.runs !== "number")
      return " The server did not say how long it keeps this run: download the trace to keep it.";
    if (!held.held) return " The server no longer holds this run: the link will not open it; open the file again.";
    const bounds =
      `${held.most_runs} runs or ${held.most_mib} MiB in all (${held.client_runs} runs or ` +
      `${held.client_mib} MiB of one network address's, which everyone behind that address shares: a class behind ` +
      "one router is one address)";
    // whether a restart keeps it (app/store.py: a persistent folder, or memory only)
    const restart = held.persistent
      ? " The server keeps runs on disk, so a restart of the server keeps this one."
      : " The server keeps runs in memory only: a restart of the server (a Space restarts after it sleeps and on " +
        "every update) drops this run, and the link will not open it then.";
    if (typeof held.next_out_opened_s !== "number")
      return (
        ` It opens this run while the server holds it.${restart} The server holds ${plural(held.runs, "run")} now and drops the least ` +
        `recently opened only when a new run would pass ${bounds}. Download the trace to keep it.`
      );
    return (
      ` It opens this run while the server holds it.${restart} The server is at its bounds (${bounds}): each new run may now ` +
      `drop the run opened least recently, which was last opened ${duration(held.next_out_opened_s)} ago; how long ` +
      "this link works depends on how many runs others open. Download the trace to keep it."
    );
  }

  /** A static site's link to a server that runs live races (none without `--live-url`). @param {Boot} boot @param {string} id */
  function liveLink(boot, id) {
    return boot.live_url
      ? h(
          "a",
          { class: "button small primary", id, href: boot.live_url, target: "_blank", rel: "noopener" },
          "Run it live ↗",
        )
      : null;
  }

  /** The live race: one bar per lane on one clock, where the lanes stand (`status`, the server's) while it runs, and
   * once every lane is done, who finished first, with the server's `note` on why it took longer than the expected wait
   * promised, where it did. @param {Run} run @param {string} status @param {string} note */
  function race(run, status, note) {
    const lanes = run.lanes(),
      done = lanes.every((l) => !run.running(l.id));
    const most = done ? Math.max(1, ...lanes.map((l) => l.run.tokens.length)) : run.t.max_new_tokens;
    const rows = lanes.map((l) => {
      const n = run.numbers(l.id, Infinity),
        over = !run.running(l.id);
      return h(
        "div",
        { class: `lane lane-${l.id}`, dataset: { lane: l.method, tokens: n.tokens, done: over ? "1" : "0" } },
        h("span", { class: "lane-name" }, run.laneName(l.id)),
        h(
          "span",
          {
            class: "bar",
            role: "meter",
            "aria-valuemin": 0,
            "aria-valuemax": most,
            "aria-valuenow": n.tokens,
            "aria-label": `${run.laneName(l.id)}: ${n.tokens} of ${most} tokens`,
          },
          h("span", { class: "fill", style: `width:${(100 * Math.min(1, n.tokens / most)).toFixed(1)}%` }),
        ),
        h(
          "span",
          { class: "lane-num" },
          `${plural(n.tokens, "token")} · ${plural(n.steps, "step")} · ${fmt(n.seconds)} s`,
          // a success mark only on a lane that finished: a lane stopped before its end says by what
          over ? ` · ${run.ended(l.id) === "finished" ? "✓ " : ""}${Lade.raceWords.laneHow(run, l.id)}` : " · running",
        ),
      );
    });
    return h(
      "div",
      { class: "race", id: "race", role: "group", "aria-label": "Live race" },
      h("p", { class: "race-title" }, done ? finish(run) : status),
      done && note ? h("p", { class: "race-note" }, note) : null,
      rows,
    );
  }

  /** Who finished first and by how much, and whether the texts are the same; for a race stopped before its end,
   * how each lane ended and its text over the tokens both lanes wrote (`Lade.raceWords.stoppedRace`).
   * @param {Run} run */
  function finish(run) {
    if (run.lanes().some((l) => run.ended(l.id) === "stopped"))
      return Lade.raceWords
        .stoppedRace(run)
        .map((s) => s.text)
        .join(" ");
    const lanes = run
      .lanes()
      .map((l) => ({ id: l.id, name: run.laneName(l.id), word: run.laneWord(l.id), time: run.time(l.id) }));
    lanes.sort((a, b) => a.time - b.time);
    const [first, second] = lanes;
    // each lane's text against greedy's (`Run.against`): identical, or where it parts from it
    const parted = run.lanes().filter((l) => l.id !== "baseline" && run.against(l.id).verdict !== "identical");
    const same = !run.greedy
      ? "This race samples: each lane draws its own text from the model's distribution."
      : !parted.length
        ? "The texts are identical, token for token."
        : parted.map((l) => `${run.laneName(l.id)}'s text ${Lade.raceWords.textAgainst(run, l.id)}.`).join(" ");
    const sp = run.d.speed; // the one noise rule's verdicts and band (app.speed), once the run is whole
    if (!sp || !second) return `Finished. ${first.name} finished first on the machine that ran them. ${same}`;
    // the band's words, as plain text in a banner (flattened as a plain list: Kid nests without end)
    const words = (/** @type {Kid[]} */ parts) => /** @type {unknown[]} */ (parts).flat(Infinity).join("");
    const band = words(Lade.notes.bandWords(sp.band, (_name, value) => String(value)));
    const vsGreedy = lanes
      .filter((l) => sp.lanes[l.id])
      .map(
        (l, i) =>
          `${i ? l.word : l.name} ran at ${fmt(sp.lanes[l.id].speedup)}x greedy's speed (${sp.lanes[l.id].verdict})`,
      )
      .join("; ");
    // the finishing order, each lane against the next: "about together" inside the band, else by how much
    const tied = lanes.slice(1).map((next, i) => next.time <= sp.band.ratio * lanes[i].time);
    const pairs = lanes.slice(1).map((next, i) => {
      const ahead = lanes[i],
        apart = next.time - ahead.time;
      const name = i === 0 ? ahead.name : ahead.word;
      return tied[i]
        ? `${name} and ${next.word} finished about together, ${fmt(apart)} s apart`
        : `${name} finished ${i === 0 ? "first, " : ""}${fmt(apart)} s (${pct(apart / Math.max(next.time, 1e-9))}) before ${next.word}`;
    });
    return (
      `Finished. ${vsGreedy}. On the machine that ran them: ${pairs.join("; ")}` +
      (tied.includes(true) ? `: ${band}. ` : ". ") +
      same
    );
  }

  /** Links and iframe code for the run and step shown (gallery runs only), the embed chosen to fit its frame by
   * measurement. @param {ShareContext} ctx */
  function share(ctx) {
    const { run, state, boot } = ctx,
      entry = boot.gallery.find((g) => g.name === run.handle);
    const which = h(
      "select",
      { "aria-label": "view to save as a picture" },
      boot.views.ids.map((id) => h("option", { value: id }, boot.views.titles[id] || id)),
    );
    const pictures = h(
      "p",
      { class: "pictures" },
      "A picture of a view at this step, for slides (made in your browser): ",
      which,
      " ",
      h(
        "button",
        { class: "small", id: "save-picture", onclick: () => Lade.pictures.save(which.value, run.handle, state.k) },
        "Save",
      ),
    );
    if (!entry || ctx.standalone) {
      return [
        h(
          "p",
          { class: "muted" },
          ctx.standalone
            ? "This is a standalone file; share the file itself."
            : "Links open the gallery's runs. To share this run, download its trace (others open it with “Open a saved run”) or export it as one HTML file.",
        ),
        pictures,
      ];
    }
    // what to embed (this chapter, or one view or group of this run at this step) in which frame, and its code
    const lessonOn = state.mode === "lesson",
      chapter = Lade.lesson.CHAPTERS[state.chapter - 1];
    const title = (/** @type {string} */ id) => boot.views.titles[id] || id;
    /** @type {string[][]} [value, label], in the order the panel prefers them: the chapter, its own views, groups, views */
    const choices = [
      ...(lessonOn ? [["chapter", `chapter ${state.chapter}, with its question`]] : []),
      ...(lessonOn ? chapter.focus.filter((id) => boot.views.ids.includes(id)).map((id) => [id, title(id)]) : []),
      ...Object.keys(boot.views.groups).map((g) => [g, title(g)]),
      ...boot.views.ids.filter((id) => !lessonOn || !chapter.focus.includes(id)).map((id) => [id, title(id)]),
    ];
    const labelOf = (/** @type {string} */ v) => (choices.find(([c]) => c === v) || [v, v])[1];
    const what = h(
      "select",
      { id: "embed-what", "aria-label": "what to embed" },
      choices.map(([v, label]) => h("option", { value: v }, label)),
    );
    const size = h(
      "select",
      { id: "embed-size", "aria-label": "frame size" },
      EMBED_SIZES.map(([w, hgt], i) => h("option", { value: `${w}x${hgt}`, selected: i === 1 }, `${w} × ${hgt}`)),
    );
    const code = h("pre", { class: "snippet", id: "embed-code", tabindex: 0 });
    const fits = h("p", { class: "muted", id: "embed-fit", role: "status" });
    const keys = h("p", { class: "muted", id: "embed-keys" });
    // a view's slide shows a span of steps: the chapter's (from where it opens to the step its answer reveals) in the
    // lesson, the step on screen in the explorer; the visitor may widen it
    const startK = lessonOn ? Lade.lesson.chapterStart(chapter, run).k : state.k,
      chapterState = { ...state, embed: { lesson: true, from: startK }, answered: null, asked: false },
      lessonCtx = {
        run,
        state: chapterState,
        actions: ctx.actions,
        lab: boot.lab,
        boot,
        links: { explorer: () => "" },
      },
      chapterBeats = (/** @type {boolean} */ asks) => Lade.slide.beats(chapterState, run, lessonCtx, asks),
      spanOf = lessonOn ? chapterBeats(false) : [{ k: state.k }];
    const stepInput = (/** @type {string} */ id, /** @type {number} */ k) =>
      h("input", { type: "number", id, min: 0, max: run.lastStep(), value: k, class: "step-input" });
    const from = stepInput("embed-from", spanOf[0].k),
      to = stepInput("embed-to", spanOf[spanOf.length - 1].k);
    const span = h(
      "p",
      { class: "muted embed-span" },
      h("label", {}, "A view's slide shows steps ", from),
      " ",
      h("label", {}, "to ", to),
    );
    const link = h(
      "pre",
      { class: "snippet", id: "page-link", tabindex: 0 },
      Lade.links.url(Lade.links.write(state), true),
    );
    // how each choice fits each frame, measured in this page as the embed lays itself out (Lade.layout.fit)
    /** @type {Map<string, Fitted>} */
    const measured = new Map();
    const measure = (/** @type {string} */ v, /** @type {number} */ w, /** @type {number} */ hgt) => {
      const k = v === "chapter" ? startK : +from.value,
        key = `${v} ${w}x${hgt} ${k}`;
      if (!measured.has(key)) measured.set(key, ctx.measure(v, k, w, hgt));
      return /** @type {Fitted} */ (measured.get(key));
    };
    let chosen = false; // the visitor picked what to embed: keep it, say whether it fits
    const write = () => {
      const [w, hgt] = size.value.split("x").map(Number),
        frame = `a ${w} × ${hgt} frame`;
      /** @type {Fitted} */
      let got;
      if (!chosen) {
        const first = choices.find(([v]) => measure(v, w, hgt).readable);
        const pick = first
          ? first[0]
          : choices.map(([v]) => v).sort((a, b) => measure(b, w, hgt).px - measure(a, w, hgt).px)[0];
        what.value = pick;
        got = measure(pick, w, hgt);
        const [top] = choices[0],
          passed =
            first && top !== pick
              ? `; ${labelOf(top)} does not (its text would shrink to ${measure(top, w, hgt).px} px)`
              : "";
        fits.textContent = first
          ? `Chosen to fit: ${labelOf(pick)} fits ${frame} with its text at ${got.px} px (a 30th of the frame's height), as measured in this page${passed}.`
          : `Nothing here fits ${frame} with its text at ${got.want} px; ${labelOf(pick)} comes closest, its text shrunk to ${got.px} px.`;
      } else {
        got = measure(what.value, w, hgt);
        const others = choices
          .filter(([v]) => v !== what.value && measure(v, w, hgt).readable)
          .map(([, label]) => label);
        fits.textContent = got.readable
          ? `${labelOf(what.value)} fits ${frame} with its text at ${got.px} px, as measured in this page.`
          : `${labelOf(what.value)} does not fit ${frame} with its text at ${got.want} px: it shrinks its text to ${got.px} px. ` +
            (others.length ? `These fit: ${others.join(", ")}.` : "Nothing here fits it.");
      }
      // the embed takes this page's theme (the Theme menu: a dark slide deck wants a dark embed)
      const look = Lade.theme.write(state.theme),
        isChapter = what.value === "chapter",
        fromK = Math.max(0, Math.min(run.lastStep(), Math.round(+from.value) || 0)),
        toK = Math.max(fromK, Math.min(run.lastStep(), Math.round(+to.value) || 0));
      span.hidden = isChapter;
      const src = isChapter
        ? Lade.links.url({ lesson: state.chapter, embed: 1, ...look })
        : Lade.links.url({ run: entry.name, step: fromK, view: what.value, embed: 1, from: fromK, to: toK, ...look });
      const beats = isChapter
        ? chapterBeats(!!got.ask)
        : Array.from({ length: toK - fromK + 1 }, (_, i) => ({ k: fromK + i, asked: false, option: null }));
      // the frame, then the deck's key forwarder (Lade.slide.FORWARDER): one per page is enough, more do no harm
      code.textContent =
        `<iframe src="${src}" width="${w}" height="${hgt}" style="border:0" loading="lazy" data-lade-slide title="Lookahead decoding: ${isChapter ? `lesson, chapter ${state.chapter}` : entry.title}"></iframe>\n` +
        `<script>${Lade.slide.FORWARDER}<${"/"}script>`; // (a page's own script must not hold the end tag whole)
      keys.textContent =
        `A clicker walks this slide in ${Lade.slide.presses(beats, isChapter)}. The script after the frame hands the ` +
        "deck's PageDown and PageUp to the embed on screen while it has steps left, so nobody needs to click into the frame.";
    };
    what.addEventListener("change", () => {
      chosen = true;
      write();
    });
    size.addEventListener("change", write);
    for (const input of [from, to]) input.addEventListener("change", write);
    write();
    return [
      h(
        "div",
        { class: "snippet-row" },
        h("p", { class: "muted" }, "The address of what is on screen ", copy(link)),
        link,
      ),
      h(
        "div",
        { class: "snippet-row" },
        h(
          "p",
          { class: "muted" },
          h("label", {}, "Embed ", what),
          " ",
          h("label", {}, "in a frame of ", size),
          " ",
          copy(code),
        ),
        span,
        fits,
        code,
        keys,
      ),
      pictures,
    ];
  }

  /** A button that copies the text of `source` and says so. @param {HTMLElement} source */
  function copy(source) {
    const button = h("button", { type: "button", class: "small copy" }, "Copy");
    button.addEventListener("click", () => {
      const done = (/** @type {string} */ word) => {
        button.textContent = word;
        window.setTimeout(() => (button.textContent = "Copy"), 2000);
      };
      const text = source.textContent || "";
      if (navigator.clipboard && window.isSecureContext)
        navigator.clipboard.writeText(text).then(
          () => done("Copied"),
          () => done("Select and copy"),
        );
      else {
        const range = document.createRange();
        range.selectNodeContents(source);
        const sel = window.getSelection();
        if (sel) {
          sel.removeAllRanges();
          sel.addRange(range);
        }
        done("Selected: press Ctrl+C");
      }
    });
    return button;
  }

  return { SECTIONS, runbar, race, finish, share, liveLink, heldWords };
})();
window.Lade.page = LadePage;
