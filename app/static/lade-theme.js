// @ts-check
// Lookahead Decoding Explorer, in the browser: light or dark, normal or high contrast (`Lade.theme`).
//
// lade.css declares each colour once as light-dark(light, dark); this file only decides the scheme and the contrast
// and marks them on <html> (data-lade-scheme, data-lade-contrast). The scheme is Gradio's own choice where the page
// is Gradio's (its `__theme` key, its settings, else the system's, shown by the `dark` class on <body>), and the
// same key and the system's on a static page; contrast is `contrast=1`, else the system's "more contrast". A choice
// made in the page's theme menu sets both and Gradio's class, so the frame and the stage change together.
const LadeTheme = (() => {
  "use strict";
  const darkSystem = window.matchMedia("(prefers-color-scheme: dark)"),
    moreSystem = window.matchMedia("(prefers-contrast: more)");

  /** The theme menu's choices, in order: [value, label]. */
  const CHOICES = /** @type {const} */ ([
    ["system", "As the system"],
    ["light", "Light"],
    ["dark", "Dark"],
    ["light-more", "Light, high contrast"],
    ["dark-more", "Dark, high contrast"],
  ]);

  /** The theme an address asks for (`__theme`: light or dark, Gradio's key; `contrast=1`); anything else, the
   * system's. @param {URLSearchParams} params @returns {Theme} */
  function read(params) {
    const scheme = (params.get("__theme") || "").toLowerCase(),
      contrast = ["1", "true", "yes"].includes((params.get("contrast") || "").toLowerCase());
    return { scheme: scheme === "light" || scheme === "dark" ? scheme : "system", contrast };
  }

  /** The address's keys for a theme (none for the system's). @param {Theme} theme @returns {Record<string, string>} */
  function write(theme) {
    return {
      ...(theme.scheme === "system" ? {} : { __theme: theme.scheme }),
      ...(theme.contrast ? { contrast: "1" } : {}),
    };
  }

  /** A menu value as a theme, and back. @param {string} value @returns {Theme} */
  const fromChoice = (value) => {
    const [scheme, more] = value.split("-");
    return { scheme: /** @type {Theme["scheme"]} */ (scheme), contrast: more === "more" };
  };
  /** The menu's value for a theme (the system's scheme with high contrast: the scheme it comes to now).
   * @param {Theme} theme */
  const toChoice = (theme) => {
    const scheme =
      theme.scheme === "system" && theme.contrast ? (resolve(theme).dark ? "dark" : "light") : theme.scheme;
    return theme.contrast ? `${scheme}-more` : scheme;
  };

  /** What a theme comes to on this device now. @param {Theme} theme */
  function resolve(theme) {
    const dark = theme.scheme === "system" ? darkSystem.matches : theme.scheme === "dark";
    return { dark, more: theme.contrast || (theme.scheme === "system" && moreSystem.matches) };
  }

  /** Mark the page with a theme, Gradio's frame too (its `dark` class on <body>). @param {Theme} theme */
  function apply(theme) {
    const { dark, more } = resolve(theme),
      root = document.documentElement;
    root.dataset.ladeScheme = dark ? "dark" : "light";
    root.dataset.ladeContrast = more ? "more" : "normal";
    if (document.querySelector("gradio-app")) document.body.classList.toggle("dark", dark);
  }

  /** Apply `current()` now and whenever the system's scheme or contrast changes (after Gradio's own listener, so the
   * page's choice wins). @param {() => Theme} current */
  function follow(current) {
    apply(current());
    for (const query of [darkSystem, moreSystem]) query.addEventListener("change", () => apply(current()));
  }

  return { CHOICES, read, write, fromChoice, toChoice, resolve, apply, follow };
})();
window.Lade.theme = LadeTheme;
