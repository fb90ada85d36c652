// @ts-check
// A busy server hands the race to the visitor's browser (`Lade.handoff`): the sidebar's offer under Run. When the
// engine's queue has no room for a race, or its place there is a long wait, the server sends a sentence and the race
// as it was asked (app/events.py `offer`: JSON, the value of the `run-offer` component). This draws the sentence and,
// where this page can race in the browser ("Race it in your browser", lade-browser-race.js: the engine's files
// beside the page, WebAssembly, a secure page), one button that races the same prompt, W, N, G and new tokens there:
// it fills that panel's fields, opens it and starts it. It reads the stage (`window.ladeStage`) and writes only the
// panel's fields.
const LadeHandoff = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fill, fmt } = Lade.dom;

  /** The stage's race panel and the engine's boot, where this page can race in the browser; else null. */
  function panel() {
    const stage = window.ladeStage;
    if (!stage || !stage.racePanel || !stage.boot.engine) return null;
    // the race's own device check, where it has one
    const check = /** @type {typeof Lade.browserRace & {able?: () => unknown}} */ (Lade.browserRace).able;
    const able = typeof check === "function" ? !!check() : typeof WebAssembly === "object" && window.isSecureContext;
    return able ? { form: /** @type {HTMLFormElement} */ (stage.racePanel), engine: stage.boot.engine } : null;
  }

  /** Fill the panel's fields with `race` (each within the panel's limits), open it and start it.
   * @param {RaceOffer["race"]} race */
  function hand(race) {
    const here = panel();
    if (!here) return;
    const form = here.form,
      lim = here.engine.limits;
    /** @param {string} id @param {unknown} value @param {number} [lo] @param {number} [hi] */
    const set = (id, value, lo, hi) => {
      const field = /** @type {HTMLInputElement | null} */ (form.querySelector(`#${id}`));
      if (!field) return;
      const n = Number(value);
      field.value = lo === undefined ? String(value) : String(Math.min(hi ?? n, Math.max(lo, Math.round(n) || lo)));
    };
    set("browser-race-prompt", race.prompt);
    set("browser-race-w", race.window, 1, lim.window);
    set("browser-race-n", race.ngram, 2, lim.ngram);
    set("browser-race-g", race.guess, 0, lim.guess);
    set("browser-race-tokens", race.max_new_tokens, 1, lim.tokens);
    // the race the visitor asked the server for, not one the panel would choose for this device instead
    const auto = /** @type {HTMLInputElement | null} */ (form.querySelector("#browser-race-auto"));
    if (auto) auto.checked = false;
    if (form.hidden) window.ladeStage.toggleRace(false);
    form.scrollIntoView({ block: "nearest" });
    const go = /** @type {HTMLButtonElement | null} */ (form.querySelector("#browser-race-go"));
    if (go && !go.disabled) form.requestSubmit(go);
    go?.focus();
  }

  /** The offer as the server sent it (`{text, race}`), or null. @param {unknown} value @returns {RaceOffer | null} */
  function read(value) {
    try {
      const offer = typeof value === "string" ? JSON.parse(value) : value;
      return offer && typeof offer.text === "string" && offer.text ? offer : null;
    } catch {
      return null;
    }
  }

  /** Draw the offer in the `run-offer` component, and again whenever the server sends another.
   * @param {HTMLElement} element @param {{value: unknown}} props the component's (its value: the offer)
   * @param {(prop: string, then: () => void) => void} watch calls `then` whenever the component's `prop` changes */
  function mount(element, props, watch) {
    const host = /** @type {HTMLElement} */ (element.querySelector(".lade-offer-host") || element);
    const draw = () => {
      const offer = read(props.value),
        here = offer && offer.race ? panel() : null;
      host.hidden = !offer;
      if (!offer) return fill(host);
      const lim = here ? here.engine.limits : null;
      const cut =
        lim && Number(offer.race.max_new_tokens) > lim.tokens ? ` (at most ${lim.tokens} new tokens there)` : "";
      fill(
        host,
        h("p", { class: "offer-text" }, offer.text),
        here
          ? h(
              "button",
              { type: "button", id: "race-offer", class: "offer-button", onclick: () => hand(offer.race) },
              `Race it in your browser instead${cut}`,
            )
          : null,
        here
          ? h(
              "p",
              { class: "offer-cost" },
              `The same prompt and settings, on your device: the first race there downloads ${fmt(here.engine.download_bytes / 1e6, 0)} MB.`,
            )
          : null,
      );
    };
    draw();
    watch("value", draw);
  }

  return { mount, hand, panel };
})();
window.Lade.handoff = LadeHandoff;
