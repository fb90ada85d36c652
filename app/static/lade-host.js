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

  return { openSidebar, openFiles, closeSidebarOnRun, tameSidebarWhenThere };
})();
window.Lade.host = LadeHost;
