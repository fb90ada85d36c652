"""The renderer's views, named once: their element ids (outside checks rely on them, in the page and in the export),
the groups an embed may ask for, and what a person reads for each (a menu's option, never the id). The browser's
renderer reads them from the boot (boot.py)."""

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
VIEW_TITLES = {
    "ar-output": "the baseline's text",
    "la-output": "the main method's text",
    "counter": "the tokens-per-step counter",
    "progress-plot": "the progress chart",
    "window-view": "the 2D window",
    "trajectory-view": "the window's trajectories",
    "pool-view": "the n-gram pool",
    "pool-plot": "the pool's size chart",
    "verify-view": "the verification branch",
    "mask-view": "the attention mask",
    "relatives-view": "the methods table",
    "outputs": "both texts and the counter",
    "chain": "one step: window, pool and verification",
    "window": "the window and its trajectories",
    "pool": "the pool and its size",
    "progress": "the counter and the progress chart",
    "relatives": "the methods table and the progress chart",
}
