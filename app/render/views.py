"""The renderer's views, named once: their element ids (outside checks rely on them, in the page and in the export)
and the groups an embed may ask for. The browser's renderer reads these from `window.Lade.VIEWS` (assets.py)."""

VIEW_IDS = (
    "ar-output",
    "la-output",
    "counter",
    "progress-plot",
    "window-view",
    "trajectory-view",
    "pool-view",
    "pool-plot",
    "verify-view",
    "mask-view",
    "relatives-view",
)
VIEW_GROUPS = {
    "outputs": ("ar-output", "la-output", "counter"),
    "chain": ("window-view", "pool-view", "verify-view"),
    "window": ("window-view", "trajectory-view"),
    "pool": ("pool-view", "pool-plot"),
    "progress": ("counter", "progress-plot"),
    "relatives": ("relatives-view", "progress-plot"),
}
