"""Hostile trace files and links through the loader, the app's limits, the payload, the HTML export and the deep links:
a file refused says why in one line naming the field; a file accepted is drawn as text, never as markup; cost stays
proportional to the file. The cases are in tests/hostile_cases.py. No model, no server, no browser.
"""

import json
import re
import time

import pytest
from hostile_cases import BASES, CASES, HERE, MARKUP, TELLTALES, base_doc, dumps

from app.limits import UPLOAD_BYTES, check_trace
from app.render.export import render_html
from app.render.payload import payload
from lade_core.paths import RUNS
from lade_core.pool import NGramPool
from lade_core.schema import SchemaError
from lade_core.tracefile import TraceError, parse_run

REJECTED = [c for c in CASES.values() if c.rejects is not None]
ACCEPTED = [c for c in CASES.values() if c.accepts]
DATA_BLOCK = re.compile(r'<script type="application/json" id="lade-run">(.*?)</script>', re.S)
MESSAGE_CHARS = 300
CASE_SECONDS = 1.0  # one case, loaded or refused: far above what a linear pass over 20 MiB of spaces takes


def one_line(message: str) -> bool:
    return not any(ch in message for ch in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


@pytest.mark.parametrize("name", BASES)
def test_bases_are_valid_small_runs(name):
    """Would catch a base that stopped loading (a schema change): every refused case would then be refused for the
    base's fault, not its own, and the test would pass for the wrong reason."""
    text = (HERE / f"base-{name}.json").read_bytes()
    assert len(text) < 50_000
    run = parse_run(text)
    check_trace(run)
    assert len(run.parallel.steps) == BASES[name][1]


@pytest.mark.parametrize("case", REJECTED, ids=lambda c: c.name)
def test_refused_with_one_line_naming_the_field(case):
    """Would catch the loader accepting a hostile file, failing with another exception (a traceback, a RecursionError,
    a TypeError in the version-1 upgrade), or a message that is not one short line naming the field."""
    data = case.data()
    start = time.perf_counter()
    with pytest.raises(TraceError) as err:
        parse_run(data)
    assert time.perf_counter() - start < CASE_SECONDS
    message = str(err.value)
    assert case.rejects in message
    assert one_line(message) and len(message) < MESSAGE_CHARS, message


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.name)
def test_accepted_loads_within_the_app_limits(case):
    """Would catch a valid but nasty file refused (markup, bidi, emoji, a version-1 file), a file past the public limits
    let through by check_trace, or check_trace's message not saying which limit."""
    data = case.data()
    start = time.perf_counter()
    run = parse_run(data)
    assert time.perf_counter() - start < CASE_SECONDS
    if case.limits is None:
        check_trace(run)
        return
    with pytest.raises(SchemaError) as err:
        check_trace(run)
    assert case.limits in str(err.value) and one_line(str(err.value)) and len(str(err.value)) < MESSAGE_CHARS


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.name)
def test_payload_is_bounded_and_keeps_the_text(case):
    """Would catch the view data of a file growing faster than the file (a few times its size, here), or hostile text
    changed on the way (stripped or rewritten instead of travelling as data to be shown as text)."""
    data = case.data()
    run = parse_run(data)
    out = json.dumps(payload(run), ensure_ascii=False)
    assert len(out.encode("utf-8")) <= 4 * len(data) + 16_384
    for text in MARKUP:
        if text in run.to_json():
            assert text in out


def _render_params() -> list:
    """Each accepted case rendered under a name (as the app does), and those whose title carries markup also under
    their own title (render_html's default: the title goes into the page's <title> and its boot data)."""
    out = []
    for case in ACCEPTED:
        out.append(pytest.param(case, "hostile-run", id=f"{case.name}-named"))
        title = json.loads(case.data())["run"].get("title") or ""  # read, not parsed: this runs at collection
        if any(m in title for m in MARKUP) or case.name == "prompt_100k":
            out.append(pytest.param(case, None, id=f"{case.name}-unnamed"))  # the title in the boot script: escaped
    return out


@pytest.mark.parametrize("case, name", _render_params())
def test_export_shows_hostile_text_only_as_data(case, name):
    """Would catch injected markup reaching the exported page as markup: an <img onerror>, a <script> or a </script>
    break-out outside the JSON data block, a raw `<` inside it, or text that cannot be written as UTF-8."""
    run = parse_run(case.data())
    page = render_html(run, name)
    page.encode("utf-8")
    blocks = DATA_BLOCK.findall(page)
    assert len(blocks) == 1 and "<" not in blocks[0]
    outside = page.replace(blocks[0], "")
    assert not [t for t in TELLTALES if t in outside]
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "<" not in title
    shown = json.dumps(json.loads(blocks[0]), ensure_ascii=False)
    assert all(text in shown for text in MARKUP if text in run.to_json())


def test_version_1_upgrade_keeps_the_run():
    """Would catch the version-1 upgrade losing or changing a step: the upgraded file must decode to the same lanes
    as the version-2 file it was written back from."""
    old, new = parse_run(CASES["version_1"].data()), parse_run(dumps(base_doc("greedy")))
    assert (old.parallel, old.baseline, old.config, old.prompt_ids) == (
        new.parallel,
        new.baseline,
        new.config,
        new.prompt_ids,
    )


def test_upload_limit_is_exact():
    """Would catch the app's 8 MiB limit applied loosely: one byte over is refused with the limit in the message, a
    file of exactly the limit (a valid run padded with spaces) loads."""
    data = dumps(base_doc("greedy"))
    at_limit = data + b" " * (UPLOAD_BYTES - len(data))
    parse_run(at_limit, UPLOAD_BYTES)
    with pytest.raises(TraceError, match="a trace may be at most 8 MiB"):
        parse_run(at_limit + b" ", UPLOAD_BYTES)


def inflate(doc: dict, times: int) -> dict:
    """The run with its steps after the prefill repeated `times` times, still valid: steps renumbered and moved along,
    each block's first input token the previous block's last, the pool's sizes and evictions replayed."""
    run = doc["run"]
    for lane in (run["parallel"], run["baseline"]):
        first, rest = lane["steps"][0], lane["steps"][1:]
        steps, tokens = [first], list(first["accepted"])
        for _ in range(times):
            for s in rest:
                s = dict(s, index=len(steps), position=first["position"] + len(tokens), input_token=tokens[-1])
                steps.append(s)
                tokens += s["accepted"]
        lane.update(steps=steps, tokens=tokens, stop_reason="length")
    run["max_new_tokens"] = len(run["parallel"]["tokens"])
    assert len(run["baseline"]["tokens"]) == run["max_new_tokens"]
    pool = NGramPool(run["config"]["guess"])
    for s in run["parallel"]["steps"]:
        s["ngrams_evicted"] = [list(n) for n in pool.add_all(tuple(n) for n in s["ngrams_added"])]
        s["pool_size"] = len(pool)
    return doc


def _seconds(data: bytes) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        parse_run(data)
        best = min(best, time.perf_counter() - start)
    return best


def test_loading_time_grows_linearly_with_the_file():
    """Would catch a check whose cost grows faster than the file, e.g. the pool replayed from the start at every step
    (that one takes 9x the time at 4x the size, and about 50x at 8x): the largest recorded run and copies 4 and 8 times
    as long must load in times proportional to their sizes within a factor of 3 either way."""
    path = max((p for p in RUNS.glob("*-*.json")), key=lambda p: p.stat().st_size)
    small = path.read_bytes()
    base = _seconds(small)
    for times in (4, 8):
        large = dumps(inflate(json.loads(small), times))
        growth = len(large) / len(small)
        assert times * 0.75 < growth < times * 1.25
        ratio = _seconds(large) / base
        assert growth / 3 < ratio < growth * 3, (times, growth, ratio)


BOOT = re.compile(r'<script type="application/json" id="lade-boot">(.*?)</script>', re.S)


@pytest.mark.parametrize("name", [None, BASES["greedy"][0]])
def test_an_export_takes_a_gallery_caption_only_for_the_gallerys_own_run(name):
    """Issue 39, finding 4: a run titled (or its file named) after a gallery run was exported under that run's
    official title and caption, whose numbers contradict its data. A caption belongs to the gallery's own file,
    known by content; the gallery's own run, under any name, keeps it."""
    from app import gallery

    official = gallery.entry(BASES["greedy"][0])
    run = parse_run(CASES["title_of_a_gallery_run"].data())
    assert run.title == official["name"]
    page = render_html(run, name)
    boot = json.loads(BOOT.search(page).group(1))
    assert boot["gallery"] == [] and gallery.caption(official["name"])[:40] not in page
    assert official["title"] not in page
    own = json.loads(BOOT.search(render_html(gallery.load(official["name"]), "any-file-name")).group(1))
    assert [e["name"] for e in own["gallery"]] == [official["name"]] and own["gallery"][0]["caption"]
