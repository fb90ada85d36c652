// @ts-check
// The Gradio host (`Lade.host`): what the stage does with the Gradio page around it: its sidebar opened, kept out of
// the Tab order while closed, and its "Open a saved run" button, wherever Gradio draws them.
const LadeHost = (() => {
  "use strict";

  /** Open Gradio's sidebar (the lesson's "try it" buttons). */
  function openSidebar() {
    const sidebar = document.querySelector("#sidebar");
    const toggle =
      sidebar &&
      /** @type {HTMLElement | null} */ (
        sidebar.parentElement && sidebar.parentElement.querySelector(".sidebar-toggle, .toggle-button")
      );
    if (sidebar && !sidebar.classList.contains("open") && toggle) toggle.click();
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

  /** Where the open sidebar covers the page (a phone), Run closes it, so the race it starts is seen as it runs (the
   * walk at 390 px pressed Run and saw nothing happen). Listened for on the document, as `openFiles`. */
  function closeSidebarOnRun() {
    document.addEventListener("click", (ev) => {
      const run = ev.target instanceof Element ? ev.target.closest("#run") : null;
      const sidebar = document.querySelector("#sidebar");
      if (!run || !sidebar || !sidebar.classList.contains("open")) return;
      if (sidebar.getBoundingClientRect().width < 0.8 * window.innerWidth) return; // beside the page: leave it
      const toggle = /** @type {HTMLElement | null} */ (
        sidebar.parentElement && sidebar.parentElement.querySelector(".sidebar-toggle, .toggle-button")
      );
      if (toggle) window.setTimeout(() => toggle.click(), 0); // after Gradio has taken the click
    });
  }

  /** The settings' number boxes (a slider's box, the seed) hold a value their event accepts. Gradio sends a typed
   * value at each keystroke, and the server refuses one outside the field's range (its event then showed a bare
   * "Error" where the arithmetic was, and Run used the slider's clamped value without a word). While a box holds a
   * value out of range (or between steps) its keystrokes are kept from Gradio and a note beside the box says what the
   * field takes; when the box is left (Enter, Tab, a click on Run) the value is set to the nearest one it takes, Gradio
   * is given that, and the note says what it became. Listened for on the document, as `openFiles`. */
  function keepSettingsInRange() {
    /** @param {EventTarget | null} target @returns {HTMLInputElement | null} */
    const box = (target) =>
      target instanceof HTMLInputElement && target.type === "number" && target.closest("#sidebar") ? target : null;
    /** The nearest value the box takes (its min, max and step), or null when it takes the one it holds (or holds
     * no number yet). @param {HTMLInputElement} input */
    const nearest = (input) => {
      const value = Number.parseFloat(input.value);
      const low = Number.parseFloat(input.min),
        high = Number.parseFloat(input.max),
        step = Number.parseFloat(input.step);
      if (Number.isNaN(value)) return null;
      let fit = Math.min(Number.isNaN(high) ? value : high, Math.max(Number.isNaN(low) ? value : low, value));
      if (step >= 1) fit = Math.round(fit / step) * step; // a whole-number field: 3.5 is no W
      return fit === value ? null : fit;
    };
    /** @param {HTMLInputElement} input */
    const takes = (input) => {
      const label = (input.getAttribute("aria-label") || "").replace(/^number input for /, "") || "This field";
      const whole = Number.parseFloat(input.step) >= 1 ? "a whole number " : "";
      return `${label} takes ${whole}from ${input.min} to ${input.max}`;
    };
    /** The note beside a box, made once (empty, so that a screen reader hears what is later written into it).
     * @param {HTMLInputElement} input @param {string} text */
    const say = (input, text) => {
      const field = input.closest(".block") || input.parentElement;
      if (!field) return;
      let note = field.querySelector(".lade-field-note");
      if (!note) {
        note = document.createElement("p");
        note.className = "lade-field-note";
        note.setAttribute("role", "status");
        field.append(note);
      }
      const made = note;
      window.setTimeout(() => {
        made.textContent = text;
      }, 0);
    };
    document.addEventListener(
      "input",
      (ev) => {
        const input = box(ev.target);
        if (!input || !input.min || !input.max) return;
        if (nearest(input) === null) return say(input, "");
        ev.stopImmediatePropagation(); // Gradio keeps the last value the field takes until the box is left
        say(input, `${takes(input)}.`);
      },
      true,
    );
    document.addEventListener(
      "change",
      (ev) => {
        const input = box(ev.target);
        const fit = input && input.min && input.max ? nearest(input) : null;
        if (!input || fit === null) return;
        const typed = input.value;
        input.value = String(fit);
        input.dispatchEvent(new Event("input", { bubbles: true })); // Gradio reads the value it takes
        say(input, `${takes(input)}: ${typed} was set to ${fit}.`);
      },
      true,
    );
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

  /** Tame the sidebar now, or when Gradio mounts it (it may come after the stage). */
  function tameSidebarWhenThere() {
    if (tameSidebar()) return;
    const seen = new MutationObserver(() => {
      if (tameSidebar()) seen.disconnect();
    });
    seen.observe(document.body, { childList: true, subtree: true });
    window.setTimeout(() => seen.disconnect(), 30000);
  }

  return { openSidebar, openFiles, closeSidebarOnRun, keepSettingsInRange, tameSidebarWhenThere };
})();
window.Lade.host = LadeHost;
