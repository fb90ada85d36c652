// @ts-check
// A slide (`Lade.slide`): a chapter or a view on one slide of a deck (an embed, or the lesson in Present), the steps
// it shows and a clicker's walk through them. How a slide is laid out and zoomed is lade-layout.js's.
// - its span: a chapter's, from where it opens (or the step its address names) to the step its answer reveals; a
//   view's or group's, `from` to `to` in its address (the snippet writes them), else the one step it names;
// - its beats, what each press of PageDown shows in turn: a chapter's words with its question, or (where the layout
//   found them too large for one screen) its words, then its question, and then the trace's answer; a view's, each
//   step of its span. PageDown past the last beat tells the host "next" (reveal.js's postMessage API) and gives focus
//   back to it, PageUp before the first "prev"; in Present the lesson turns the chapter instead;
// - its place, posted to the host after every change, for the key forwarder the snippet carries (`FORWARDER`): the
//   deck's own PageDown / PageUp step the slide on screen while it has beats left and move the deck after, so the
//   clicker walks a deck of embeds with nobody clicking into a frame.
const LadeSlide = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);

  /** The slide the state shows: a chapter (an embed of it, or the lesson in Present), a view or group (an embed),
   * or none. @param {State} s @returns {"chapter" | "view" | null} */
  function kind(s) {
    if (s.embed) return s.embed.lesson ? "chapter" : "view";
    return s.present && s.mode === "lesson" ? "chapter" : null;
  }

  /** The step a chapter slide asks its question at: where it opened (an embed), else where it was answered or is.
   * @param {State} s */
  function asksAt(s) {
    if (s.embed && typeof s.embed.from === "number") return s.embed.from;
    return s.answered && s.answered.chapter === s.chapter ? s.answered.k : s.k;
  }

  /**
   * The beats of the slide on screen, in order: the step each shows, whether its question shows (a second reveal
   * where `asks`) and the answer it reveals. `asks`: the slide's layout shows the question after the words (the
   * stage's `slideAsks`, chosen by measurement in lade-layout.js).
   * @param {State} s @param {Run} run @param {LessonContext} ctx @param {boolean} asks
   * @returns {{k: number, asked: boolean, option: number | null}[]}
   */
  function beats(s, run, ctx, asks) {
    const last = run.lastStep(),
      clamp = (/** @type {number} */ k) => Math.max(0, Math.min(last, k));
    if (kind(s) === "view") {
      const embed = /** @type {NonNullable<State["embed"]>} */ (s.embed),
        from = clamp(typeof embed.from === "number" ? embed.from : s.k),
        to = clamp(typeof embed.to === "number" ? Math.max(embed.to, from) : from);
      return Array.from({ length: to - from + 1 }, (_, i) => ({ k: from + i, asked: false, option: null }));
    }
    const ch = Lade.lesson.CHAPTERS[s.chapter - 1],
      k0 = clamp(asksAt(s));
    if (!ch.predict) return [{ k: k0, asked: false, option: null }];
    const answer = ch.predict.answer(run, k0, ctx),
      shown = { k: clamp(answer.step === undefined ? k0 : answer.step), asked: true, option: answer.option };
    const ask = { k: k0, asked: true, option: null };
    return asks ? [{ k: k0, asked: false, option: null }, ask, shown] : [ask, shown];
  }

  /** Which beat the state shows (the nearest before it, for a step between two). @param {State} s
   * @param {{k: number, asked: boolean, option: number | null}[]} list */
  function at(s, list) {
    if (kind(s) === "view") return Math.max(0, Math.min(list.length - 1, s.k - list[0].k));
    if (s.answered && s.answered.chapter === s.chapter) return list.length - 1;
    return s.asked ? list.findIndex((b) => b.asked) : 0;
  }

  /** The slide's beats and the one on screen, for the stage. @param {Stage} stage */
  function place(stage) {
    const run = stage.run(),
      s = stage.state;
    if (!run || !kind(s)) return null;
    const list = beats(s, run, stage.lessonContext(run), !!stage.slideAsks);
    return { list, i: at(s, list) };
  }

  /** The first and last step the slide lets its controls reach (null: no slide, or one that shows any step).
   * @param {Stage} stage @param {State} s */
  function bounds(stage, s) {
    const run = s.current ? stage.runs.get(s.current) : null;
    if (!run || !s.embed) return null;
    const list = beats(s, run, { ...stage.lessonContext(run), state: s }, !!stage.slideAsks);
    return [list[0].k, list[list.length - 1].k];
  }

  /** Tell the page around an embed (a slide deck) to move on: reveal.js's postMessage API reads {method, args}
   * as JSON; other hosts may listen for the same. @param {"next" | "prev"} method */
  function tellHost(method) {
    if (window.parent !== window) window.parent.postMessage(JSON.stringify({ method, args: [], from: "lade" }), "*");
  }

  /** Give focus back to the page around the frame (the slide software's keys work there again). */
  function letGo() {
    const el = /** @type {HTMLElement | null} */ (document.activeElement);
    if (el && el !== document.body) el.blur();
    if (window.parent !== window) window.parent.focus();
  }

  /**
   * A clicker's press (PageDown 1, PageUp -1): the next or previous beat; past the last (or before the first) an
   * embed tells its host and lets go of focus, and Present turns the chapter. `leave`: false for the arrows, which
   * walk the slide but never leave it. @param {Stage} stage @param {1 | -1} way @param {boolean} [leave]
   */
  function press(stage, way, leave = true) {
    const here = place(stage),
      s = stage.state;
    if (!here) return;
    const b = here.list[here.i + way];
    if (b) {
      // revealed by the clicker: nobody chose an option (-1), the page shows the trace's answer alone
      const answered = b.option === null ? null : { chapter: s.chapter, k: here.list[0].k, option: -1 };
      return stage.set({ k: b.k, asked: b.asked, answered, playing: false });
    }
    if (!leave) return;
    if (s.embed) {
      tellHost(way > 0 ? "next" : "prev");
      return letGo();
    }
    const n = s.chapter + way;
    if (n >= 1 && n <= Lade.lesson.CHAPTERS.length) stage.chapter(n);
  }

  /** Post the slide's place to the host's key forwarder (an embed in a frame only). @param {Stage} stage */
  function tell(stage) {
    if (window.parent === window || !stage.state.embed) return;
    const here = place(stage);
    if (here) window.parent.postMessage({ lade: "slide", beat: here.i, beats: here.list.length }, "*");
  }

  /** Step when the host's forwarder says a press is this slide's (only from the page around the frame).
   * @param {Stage} stage */
  function listen(stage) {
    window.addEventListener("message", (ev) => {
      const d = ev.data;
      if (ev.source !== window.parent || window.parent === window || !d || d.lade !== "press") return;
      if (stage.state.embed) press(stage, d.way > 0 ? 1 : -1);
    });
  }

  /**
   * The host's key forwarder, carried by the snippet after its iframe (once per page, however many embeds): the
   * deck's PageDown / PageUp go to the embed on screen while it has beats left that way, and to the deck after; a
   * frame that hands back ("next" / "prev") loses focus, so no key is left in a hidden frame.
   */
  const FORWARDER =
    "(function(){if(window.ladeKeys)return;window.ladeKeys=1;var at=new Map();" +
    "function frame(w){return[].find.call(document.querySelectorAll('iframe'),function(f){return f.contentWindow===w})}" +
    "addEventListener('message',function(e){var f=frame(e.source),d=e.data;if(!f)return;" +
    "if(d&&d.lade==='slide')at.set(f,d);" +
    "else if(typeof d==='string'&&d.indexOf('\"from\":\"lade\"')>0&&document.activeElement===f)f.blur()});" +
    "function shown(f){var r=f.getBoundingClientRect();return f.isConnected&&!f.closest('[hidden],[aria-hidden=true]')" +
    "&&f.checkVisibility({opacityProperty:true,visibilityProperty:true})" +
    "&&r.right>0&&r.bottom>0&&r.left<innerWidth&&r.top<innerHeight}" +
    "addEventListener('keydown',function(e){var way=e.key==='PageDown'?1:e.key==='PageUp'?-1:0;" +
    "if(!way||e.altKey||e.ctrlKey||e.metaKey)return;var f=[...at.keys()].find(shown),d=f&&at.get(f);" +
    "if(!d||d.beat+way<0||d.beat+way>=d.beats)return;e.preventDefault();e.stopImmediatePropagation();" +
    "d.beat+=way;f.contentWindow.postMessage({lade:'press',way:way},'*')},true)})();";

  /** What a clicker's presses of PageDown do on a slide of these beats, in words: the beats after the first, then the
   * deck's next slide. @param {{k: number, asked: boolean, option: number | null}[]} list @param {boolean} chapter */
  function presses(list, chapter) {
    const n = list.length,
      walk = chapter
        ? list.slice(1).map((b) => (b.option === null ? "its question" : "the trace's answer"))
        : n > 1
          ? [n === 2 ? `step ${list[1].k}` : `steps ${list[1].k} to ${list[n - 1].k}`]
          : [];
    return `${Lade.dom.plural(n, "press", "presses")} of PageDown: ${[...walk, "the next slide"].join(", then ")}`;
  }

  return { kind, beats, at, place, bounds, press, tell, listen, tellHost, letGo, FORWARDER, presses };
})();
window.Lade.slide = LadeSlide;
