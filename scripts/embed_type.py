"""How large an embed's type is in each frame "Link or embed" offers (BENCHMARKS.md §18).

    python -m scripts.embed_type --out out/embed-type.json

Exports the static site (no browser engine) into a temporary folder, serves it on 127.0.0.1, and in headless
Chromium loads every single view, every group and every chapter as an embed (`?run=code-class&view=V&embed=1`,
`?lesson=K&embed=1`) in an iframe resized to 720x405, 960x540 and 1280x720 in turn. For each it reports whether the
embed fits its frame (no scrolling either way) and the rendered size of its visible text (CSS px with zoom and SVG
scale applied): the median, the 10th percentile and the smallest. A projected slide wants body text of about 18 px
at 960x540 (issue 36). Nothing is fetched from elsewhere.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.process import CHROMIUM, CHROMIUM_ARGS, answers, free_port
from app.render.site import export_site
from app.render.views import VIEW_GROUPS, VIEW_IDS

FRAMES = ((720, 405), (960, 540), (1280, 720))
CHAPTERS = 9

# the rendered size of every visible piece of text in the frame, and whether the page scrolls
MEASURE = """() => {
  const root = document.scrollingElement || document.documentElement, sizes = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, p = n.parentElement;
    if (!n.data.trim() || !p || p.closest('.sr-only, .term-tip, [hidden], title, style, script')) continue;
    const r = p.getBoundingClientRect();
    if (!r.width || !r.height || r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth) continue;
    let px = parseFloat(getComputedStyle(p).fontSize) * (p.currentCSSZoom || 1);
    if (p instanceof SVGElement) {
      const m = p.getScreenCTM();
      px = parseFloat(getComputedStyle(p).fontSize) * (m ? Math.hypot(m.a, m.b) : 1);
    }
    sizes.push(px);
  }
  sizes.sort((a, b) => a - b);
  return { fits: root.scrollHeight <= root.clientHeight + 1 && root.scrollWidth <= root.clientWidth + 1,
    median: sizes[sizes.length >> 1], p10: sizes[Math.floor(sizes.length / 10)], min: sizes[0], texts: sizes.length };
}"""


def measure(base: str, queries: list[str]) -> list[dict]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1320, "height": 760})
        for q in queries:
            page.set_content(
                f'<iframe src="{base}{q}" width="720" height="405" style="border:0" title="embed"></iframe>'
            )
            page.frame_locator("iframe").locator(".lade-stage").wait_for()
            child = page.frames[1]
            child.wait_for_function("() => window.ladeStage && window.ladeStage.state.embed")
            for w, h in FRAMES:
                page.evaluate(
                    "([w, h]) => Object.assign(document.querySelector('iframe'), {width: w, height: h})", [w, h]
                )
                child.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[w, h])
                child.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 200)))")
                rows.append({"embed": q, "frame": f"{w}x{h}", **child.evaluate(MEASURE)})
        browser.close()
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="out/embed-type.json")
    p.add_argument("--run", default="code-class", help="the gallery run the views show")
    p.add_argument("--limit", type=int, default=0, help="only the first K embeds, each in every frame (0 = all)")
    args = p.parse_args()
    views = [*VIEW_IDS, *VIEW_GROUPS]
    queries = [f"?run={args.run}&view={v}&embed=1" for v in views]
    queries += [f"?lesson={k}&embed=1" for k in range(1, CHAPTERS + 1)]
    queries = queries[: args.limit or None]
    with tempfile.TemporaryDirectory() as tmp:
        export_site(Path(tmp), engine=False)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", tmp],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}/"
            if not answers(base, server, 30):
                raise SystemExit("the static server did not start")
            rows = measure(base, queries)
        finally:
            server.terminate()
    for r in rows:
        print(f"{r['embed']:45s} {r['frame']:9s} fits={'yes' if r['fits'] else 'NO ':3s} median {r['median']:5.1f} px")
    doc = {"date": time.strftime("%Y-%m-%d"), "command": f"python -m scripts.embed_type --out {args.out}", "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
