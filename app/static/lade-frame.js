// @ts-check
// The stage's frame (`Lade.frame`): the page's parts, built once for a stage and filled by its render: the mode tabs,
// the head's buttons (race, copy link, present, theme), the notice and the live region, the main region, the step
// controls, and one container per view. Each control calls one of the stage's actions; nothing here holds state.
const LadeFrame = (() => {
  "use strict";
  const Lade = /** @type {LadeNamespace} */ (window.Lade);
  const { h, fill } = Lade.dom;

  /** The frame of `stage`, put in its root; its parts by name (the stage keeps them). @param {Stage} stage */
  function build(stage) {
    const tab = (/** @type {Mode} */ mode, /** @type {string} */ label) =>
      h(
        "button",
        {
          role: "tab",
          class: "mode",
          id: `mode-${mode}`,
          dataset: { mode },
          "aria-controls": "lade-main",
          // Enter or Space on a tab (no pointer: `detail` 0) keeps focus on the tab list, where arrows move between
          // tabs; a pointer's click leaves focus where the arrows step
          onclick: (/** @type {MouseEvent} */ ev) => stage.mode(mode, ev.detail === 0),
        },
        label,
      );
    const tabs = h(
      "div",
      { class: "modes", role: "tablist", "aria-label": "Parts of the app" },
      tab("lesson", "Lesson"),
      tab("explorer", "Explorer"),
      tab("lab", "Speed lab"),
    );
    tabs.addEventListener("keydown", (/** @type {KeyboardEvent} */ ev) => {
      const order = /** @type {Mode[]} */ (["lesson", "explorer", "lab"]),
        i = order.indexOf(stage.state.mode);
      const to = { ArrowRight: order[(i + 1) % 3], ArrowLeft: order[(i + 2) % 3], Home: order[0], End: order[2] }[
        ev.key
      ];
      if (!to) return;
      ev.preventDefault();
      ev.stopPropagation();
      stage.mode(/** @type {Mode} */ (to), true);
    });
    const skip = h(
      "a",
      {
        class: "skip",
        href: "#lade-main",
        onclick: (/** @type {Event} */ ev) => {
          ev.preventDefault();
          Lade.focus.main(stage);
        },
      },
      "Skip to the content",
    );
    const keysHint = h(
      "p",
      { class: "keys muted" },
      "Keys: ← → step (in a row of tabs they move between the tabs), Home / End first / last, Space play (not in a " +
        "field), PageDown / PageUp a clicker's next / back.",
    );
    const presentButton = h(
      "button",
      {
        type: "button",
        id: "present",
        class: "small",
        "aria-pressed": "false",
        onclick: () => Lade.present.toggle(stage),
      },
      "Present",
    );
    // light or dark, normal or high contrast (Lade.theme): the frame around the page follows too
    const themeMenu = h(
      "select",
      {
        id: "theme",
        onchange: (/** @type {Event} */ ev) =>
          stage.set({ theme: Lade.theme.fromChoice(/** @type {HTMLSelectElement} */ (ev.target).value) }),
      },
      Lade.theme.CHOICES.map(([value, label]) => h("option", { value }, label)),
    );
    const notice = h("p", { class: "notice", role: "status", hidden: true });
    // "Race it in your browser", where the engine's files are beside the page (boot.engine)
    const racePanel = stage.boot.engine && !stage.standalone ? Lade.browserRace.panel(stage) : null;
    const raceButton = racePanel
      ? h(
          "button",
          {
            type: "button",
            id: "race-browser",
            class: "small primary",
            "aria-expanded": "false",
            "aria-controls": "browser-race",
            onclick: () => stage.toggleRace(),
          },
          "Race it in your browser",
        )
      : null;
    if (racePanel) racePanel.hidden = true;
    const liveRegion = h("p", { class: "sr-only", "aria-live": "polite", id: "lade-live" });
    const main = h("div", { id: "lade-main", class: "stage-main", tabindex: -1, role: "tabpanel" });
    const slider = h("input", {
      type: "range",
      id: "step-slider",
      min: 0,
      max: 1,
      value: 0,
      step: 1,
      "aria-label": "Step",
      oninput: () => stage.go(+slider.value),
    });
    const playButton = h(
      "button",
      { id: "play", class: "primary", onclick: () => stage.toggle(), "aria-keyshortcuts": "Space" },
      "▶ Play",
    );
    const stepLabel = h("span", { class: "step-label", "aria-hidden": "true" });
    const speedMenu = h(
      "select",
      {
        class: "speed",
        "aria-label": "Play speed",
        onchange: (/** @type {Event} */ ev) =>
          stage.set({ speed: +(/** @type {HTMLSelectElement} */ (ev.target).value) }),
      },
      [1, 2, 4, 6, 10, 20, 30].map((s) => h("option", { value: s, selected: s === 6 }, `${s} steps/s`)),
    );
    const openLink = h(
      "a",
      { class: "button small open-app", target: "_blank", rel: "noopener", hidden: true },
      "Open in the app ↗",
    );
    const playbar = h(
      "div",
      { class: "playbar", role: "group", "aria-label": "Step controls" },
      h(
        "button",
        { id: "step-prev", onclick: () => stage.go(stage.state.k - 1), "aria-keyshortcuts": "ArrowLeft" },
        "◀ Step",
      ),
      playButton,
      h(
        "button",
        { id: "step-next", onclick: () => stage.go(stage.state.k + 1), "aria-keyshortcuts": "ArrowRight" },
        "Step ▶",
      ),
      slider,
      stepLabel,
      speedMenu,
      openLink,
    );
    for (const id of stage.boot.views.ids) stage.views[id] = h("div", { id, class: "view", dataset: { view: id } });
    const frame = h(
      "div",
      { class: "lade-stage" },
      skip,
      h(
        "div",
        { class: "stage-head" },
        tabs,
        stage.boot.source === "site" ? Lade.page.liveLink(stage.boot, "run-live") : null,
        raceButton,
        stage.standalone
          ? null
          : h(
              "button",
              { type: "button", id: "copy-link", class: "small", onclick: () => Lade.share.copyLink(stage) },
              "Copy link",
            ),
        presentButton,
        h("label", { class: "theme-menu" }, "Theme ", themeMenu),
        keysHint,
      ),
      racePanel,
      notice,
      liveRegion,
      main,
    );
    tabs.hidden = stage.standalone;
    main.addEventListener("mouseover", (ev) => {
      const el = /** @type {Element} */ (ev.target).closest("[data-link]");
      stage.highlight(el ? /** @type {HTMLElement} */ (el).dataset.link || null : null);
    });
    main.addEventListener("mouseleave", () => stage.highlight(null));
    fill(stage.root, frame);
    return {
      tabs,
      skip,
      keysHint,
      presentButton,
      themeMenu,
      notice,
      racePanel,
      raceButton,
      liveRegion,
      main,
      slider,
      playButton,
      stepLabel,
      speedMenu,
      openLink,
      playbar,
      frame,
    };
  }

  return { build };
})();
window.Lade.frame = LadeFrame;
