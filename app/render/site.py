"""The lesson as a static site: `lade export-site DIR [--live-url URL]` writes a folder any static host can serve.

    DIR/index.html          the renderer (the page's own scripts and CSS, inline) and the boot data: the gallery's
                            listing, the lesson's runs, the speed lab's data
    DIR/runs/<name>.json    every gallery run's payload, fetched by the page when it opens that run
    DIR/engine/             with the browser engine (the default of `lade export-site`): its files
                            (app/render/engine_files.py), and beside index.html its service worker
                            (DIR/lade-isolation.js), which adds the cross-origin-isolation headers a static host does
                            not send, so the race may use several threads (one reload on the first visit)

The same URLs work as on the Gradio page (`?lesson=3`, `?run=code-class&step=12&view=mask-view&embed=1`), with the
same renderer and no server: the page fetches only files beside it (its Content-Security-Policy allows requests to
its own origin and nothing else), so a lecture hall or a blog post costs the server nothing. Live runs need the
model, so the site links "Run it live" to `--live-url` (a Space running app.py), or shows no such link.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .. import gallery
from .assets import boot_tag
from .boot import boot_data
from .export import page
from .payload import as_text, payload, run_lab_data

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
    "font-src data:; connect-src 'self'"
)
# with the browser engine beside the page: its scripts and onnxruntime-web's from this site, WebAssembly compiled, and
# its workers (the race's, onnxruntime-web's threads, the isolation service worker) from this site's own files
ENGINE_CSP = CSP.replace("script-src 'unsafe-inline'", "script-src 'unsafe-inline' 'self' 'wasm-unsafe-eval'") + (
    "; worker-src 'self'"
)
ISOLATION = "lade-isolation.js"  # the service worker, at the site's root so that its scope is the whole site


def index_html(live_url: str | None, lab: dict | None, engine: dict | None = None) -> str:
    boot = boot_data("site", live_url=live_url, lab=lab, engine=engine)
    mount = "<script>window.Lade.stage.mountSite(document.getElementById('lade-host'));</script>\n"
    comment = (
        "<!-- The Lookahead Decoding Explorer's lesson, gallery and explorer as a static site: every run was "
        "recorded by the real engine; this page fetches only the files beside it. -->\n"
    )
    csp = ENGINE_CSP if engine else CSP
    return page("Lookahead Decoding Explorer", boot_tag(boot) + "\n", comment + mount, csp=csp)


def export_site(folder: Path, live_url: str | None = None, lab: dict | None = None, engine: bool = False) -> dict:
    """Write the site into `folder` (replacing a previous export there); its files and their sizes. `lab`: the speed
    lab's page data (default: computed from assets/, `boot.lab_data()`); `engine`: also the browser engine's files
    (engine/, 115 MB: `engine_files.py`), for "Race it in your browser"."""
    from .boot import lab_data
    from .engine_files import engine_boot, write_engine_files

    folder, lab = Path(folder), lab if lab is not None else lab_data()
    folder.mkdir(parents=True, exist_ok=True)
    engine_info = engine_boot(write_engine_files(folder)) if engine else None
    if engine_info:
        shutil.copy(Path(__file__).resolve().parent.parent / "static" / ISOLATION, folder / ISOLATION)
        engine_info["isolation"] = ISOLATION
    runs = folder / "runs"
    if runs.exists():
        shutil.rmtree(runs)
    runs.mkdir(parents=True)
    (folder / "index.html").write_text(index_html(live_url, lab, engine_info), encoding="utf-8")
    for name in gallery.names():  # each run at its address, its lab figures beside it (`runs/<name>/lab.json`)
        run = gallery.load(name)
        (runs / f"{name}.json").write_text(as_text(payload(run)), encoding="utf-8")
        figures = run_lab_data(run)
        if figures is not None:
            (runs / name).mkdir()
            (runs / name / "lab.json").write_text(as_text(figures), encoding="utf-8")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return {
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "index_bytes": (folder / "index.html").stat().st_size,
    }
