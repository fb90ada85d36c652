// @ts-check
// The static site's service worker (`lade export-site` writes it beside index.html): a static host that sends no
// cross-origin-isolation headers gets them here, so that the race in the visitor's browser may use several threads
// (onnxruntime-web's threads need SharedArrayBuffer, which a browser gives only to an isolated page). It answers each
// request for this site's own files as the host answered it, adding Cross-Origin-Opener-Policy: same-origin and
// Cross-Origin-Embedder-Policy: require-corp (every file is this site's own, so nothing is refused by it); requests
// to other origins pass untouched. The page registers it and reloads once on the first visit
// (lade-browser-race.js `isolate`); a page framed by a host that is not isolated stays at one thread whatever it does.
(() => {
  "use strict";
  const sw = /** @type {IsolationScope} */ (/** @type {unknown} */ (self));
  sw.addEventListener("install", () => sw.skipWaiting());
  sw.addEventListener("activate", (ev) => ev.waitUntil(sw.clients.claim()));
  sw.addEventListener("fetch", (ev) => {
    const req = ev.request;
    if (new URL(req.url).origin !== sw.location.origin) return;
    if (req.cache === "only-if-cached" && req.mode !== "same-origin") return;
    ev.respondWith(
      fetch(req).then((res) => {
        if (res.status === 0) return res; // an opaque answer cannot be rewritten
        const headers = new Headers(res.headers);
        headers.set("Cross-Origin-Opener-Policy", "same-origin");
        headers.set("Cross-Origin-Embedder-Policy", "require-corp");
        headers.set("Cross-Origin-Resource-Policy", "same-origin");
        return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
      }),
    );
  });
})();
