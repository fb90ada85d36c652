// @ts-check
// Present (`Lade.present`): presenter mode for a projector, its type larger (lade-layout.js fits the slide to the
// screen) and the whole screen where the browser allows it.
const LadePresent = (() => {
  "use strict";

  /** Presenter mode on or off: large type for a projector, and the whole screen where the browser allows it.
   * @param {Stage} stage */
  function toggle(stage) {
    const on = !stage.state.present;
    stage.set({ present: on });
    const doc = document.documentElement;
    if (on && doc.requestFullscreen && !document.fullscreenElement) doc.requestFullscreen().catch(() => {});
    if (!on && document.fullscreenElement && document.exitFullscreen) document.exitFullscreen().catch(() => {});
  }

  return { toggle };
})();
window.Lade.present = LadePresent;
