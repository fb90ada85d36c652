// @ts-check
// Pictures for slides, made in the browser with no network (`Lade.pictures`): save(viewId, run, k) saves a view as a
// PNG (the element, its computed styles inlined, drawn into an SVG foreignObject, then onto a canvas; the SVG itself
// if the browser refuses the canvas), named <run>-step<k>-<view>.
const LadePictures = (() => {
  "use strict";
  const PROPS = [
    "display",
    "position",
    "top",
    "right",
    "bottom",
    "left",
    "box-sizing",
    "width",
    "height",
    "min-width",
    "max-height",
    "overflow-x",
    "overflow-y",
    "margin-top",
    "margin-right",
    "margin-bottom",
    "margin-left",
    "padding-top",
    "padding-right",
    "padding-bottom",
    "padding-left",
    "border-top",
    "border-right",
    "border-bottom",
    "border-left",
    "border-radius",
    "border-collapse",
    "border-spacing",
    "background-color",
    "color",
    "font-family",
    "font-size",
    "font-weight",
    "font-style",
    "line-height",
    "text-align",
    "vertical-align",
    "white-space",
    "text-decoration-line",
    "text-decoration-color",
    "text-decoration-thickness",
    "box-shadow",
    "flex-direction",
    "flex-wrap",
    "flex-grow",
    "gap",
    "justify-content",
    "align-items",
    "opacity",
    "fill",
    "stroke",
  ];

  /** @param {string} view @param {string} run @param {number} k */
  function fileName(view, run, k) {
    return `${run || "lookahead-run"}-step${k}-${view}`.replace(/[^A-Za-z0-9._-]+/g, "-");
  }

  /** @param {CSSStyleDeclaration} style */
  function styleOf(style) {
    return PROPS.map((p) => `${p}:${style.getPropertyValue(p)}`).join(";");
  }

  /** Copies the computed look of `src` onto its clone `dst`, with ::before/::after as real spans.
   * @param {Element} src @param {Element} dst */
  function inline(src, dst) {
    dst.setAttribute("style", styleOf(getComputedStyle(src)));
    for (const pseudo of ["::before", "::after"]) {
      const ps = getComputedStyle(src, pseudo);
      const content = ps.getPropertyValue("content");
      if (!content || content === "none" || content === "normal") continue;
      const span = document.createElement("span");
      span.setAttribute("style", styleOf(ps));
      span.textContent = content.replace(/^["']|["']$/g, "");
      pseudo === "::before" ? dst.prepend(span) : dst.append(span);
    }
    const from = src.children,
      to = dst.children;
    for (let i = 0, j = 0; i < from.length; i++, j++) {
      while (to[j] && to[j].tagName !== from[i].tagName) j++;
      if (to[j]) inline(from[i], to[j]);
    }
  }

  /** @param {string} url @param {string} name */
  function download(url, name) {
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  /** @param {HTMLElement} el */
  function svgOf(el) {
    const width = Math.ceil(el.scrollWidth),
      height = Math.ceil(el.scrollHeight);
    const clone = /** @type {HTMLElement} */ (el.cloneNode(true));
    inline(el, clone);
    clone.style.margin = "0";
    clone.setAttribute("xmlns", "http://www.w3.org/1999/xhtml");
    const body = new XMLSerializer().serializeToString(clone);
    // the picture's ground is the stage's, light or dark (lade.css)
    const ground = getComputedStyle(/** @type {Element} */ (el.closest(".lade-stage") || el)).backgroundColor;
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<rect width="100%" height="100%" fill="${ground}"/>` +
      `<foreignObject x="0" y="0" width="100%" height="100%">${body}</foreignObject></svg>`;
    return { svg, width, height };
  }

  /** @param {HTMLElement} el @param {string} name */
  async function savePng(el, name) {
    const { svg, width, height } = svgOf(el);
    const url = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
    try {
      const img = new Image();
      await new Promise((ok, fail) => {
        img.onload = ok;
        img.onerror = fail;
        img.src = url;
      });
      const scale = 2,
        canvas = document.createElement("canvas");
      canvas.width = width * scale;
      canvas.height = height * scale;
      const ctx = canvas.getContext("2d");
      if (!ctx) throw new Error("no 2D canvas");
      ctx.scale(scale, scale);
      ctx.drawImage(img, 0, 0);
      download(canvas.toDataURL("image/png"), name + ".png");
    } catch {
      // a browser that will not draw foreignObject onto a canvas: the SVG is a picture too
      download(url, name + ".svg");
    }
  }

  /** Save the view `view` (an element id) as a PNG, named after the run and step. @param {string} view @param {string} run @param {number} k */
  function save(view, run, k) {
    const el = document.getElementById(view);
    if (el) savePng(el, fileName(view, run, k));
  }

  return { save };
})();
window.Lade.pictures = LadePictures;
