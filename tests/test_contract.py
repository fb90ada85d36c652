"""The contract with the browser is declared once (the trace's dataclasses, the payload's typed dicts) and the
checked-in JSON Schema and TypeScript declarations are what `app/render/contract.py` generates from it; the schema
describes real payloads; every shipped trace is at the current version."""

import json
import math
from pathlib import Path

import pytest

from app.render import contract
from app.render.payload import payload
from lade_core.trace import VERSION
from lade_core.tracefile import parse_run

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "assets" / "runs").glob("*.json"))


def test_the_checked_in_schema_is_the_generated_one():
    assert contract.SCHEMA_FILE.read_text(encoding="utf-8") == contract.schema_text(), "run `make contract`"


@pytest.mark.skipif(
    not contract.JSON2TS.exists(), reason="needs the npm dev tools (`npm ci`); `make test` installs them"
)
def test_the_browsers_types_are_generated_from_the_schema():
    assert contract.TYPES_FILE.read_text(encoding="utf-8") == contract.typescript(), "run `make contract`"


def test_the_browsers_constants_are_generated_from_their_declarations(tmp_path):
    """lade-constants.js is what app/render/constants.py writes; the values are the ones the server uses (a stop
    reason, a budget, the form of the handles the store makes), and the page loads it before any script reads it."""
    import re

    from app.render import assets, constants
    from app.render.payload import STORED_HANDLE
    from app.store import RunStore
    from lade_core.trace import STOP_REASONS

    assert constants.SCRIPT_FILE.read_text(encoding="utf-8") == constants.script(), "run `make contract`"
    assert constants.constants()["stop_reasons"] == list(STOP_REASONS)
    store, run = RunStore(), parse_run(SHIPPED[0].read_bytes())
    made = [store.add_run(run), store.add_live(object())]
    assert all(re.fullmatch(STORED_HANDLE, h) for h in made), made
    assert assets.SCRIPTS[0] == constants.SCRIPT_FILE.name


def test_every_shipped_trace_is_at_the_current_version():
    assert SHIPPED
    below = [p.name for p in SHIPPED if json.loads(p.read_text(encoding="utf-8"))["version"] != VERSION]
    assert not below, f"re-save these at version {VERSION}: {below}"


def _problems(value, node: dict, defs: dict, where: str = "payload"):
    """Where `value` breaks the JSON Schema `node` (the keywords the generated schema uses)."""
    if "$ref" in node:
        yield from _problems(value, defs[node["$ref"].rsplit("/", 1)[1]], defs, where)
        return
    if "anyOf" in node:
        if all(list(_problems(value, option, defs, where)) for option in node["anyOf"]):
            yield f"{where}: {value!r:.60} fits none of {node['anyOf']}"
        return
    kind = node.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    if kind in ("integer", "number"):
        ok = isinstance(value, int if kind == "integer" else (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value):
            yield f"{where}: {value!r:.60} is not an {kind}"
            return
        if value < node.get("minimum", -math.inf) or value > node.get("maximum", math.inf):
            yield f"{where}: {value} is outside [{node.get('minimum')}, {node.get('maximum')}]"
    elif kind in types and not isinstance(value, types[kind]):
        yield f"{where}: {value!r:.60} is not {kind}"
        return
    if "enum" in node and value not in node["enum"]:
        yield f"{where}: {value!r} is not one of {node['enum']}"
    if "const" in node and value != node["const"]:
        yield f"{where}: {value!r} is not {node['const']!r}"
    if isinstance(value, str) and len(value) > node.get("maxLength", math.inf):
        yield f"{where}: longer than {node['maxLength']}"
    if isinstance(value, list):
        if len(value) > node.get("maxItems", math.inf):
            yield f"{where}: more than {node['maxItems']} items"
        for i, item in enumerate(value):
            yield from _problems(item, node.get("items", {}), defs, f"{where}[{i}]")
    if isinstance(value, dict) and kind == "object":
        props = node.get("properties", {})
        for name in node.get("required", []):
            if name not in value:
                yield f"{where}.{name} is missing"
        for name, item in value.items():
            if name in props:
                yield from _problems(item, props[name], defs, f"{where}.{name}")
            elif node.get("additionalProperties") is False:
                yield f"{where}.{name} is not declared"
            elif isinstance(node.get("additionalProperties"), dict):
                yield from _problems(item, node["additionalProperties"], defs, f"{where}[{name!r}]")


@pytest.mark.parametrize(
    "path", [SHIPPED[0], ROOT / "assets" / "runs" / "relatives-race-grounded.json"], ids=lambda p: p.stem
)
def test_the_schema_describes_a_real_payload_and_refuses_an_undeclared_field(path):
    doc = contract.json_schema()
    data = json.loads(json.dumps(payload(parse_run(path.read_text(encoding="utf-8")))))
    assert list(_problems(data, doc["$defs"]["Payload"], doc["$defs"])) == []
    data["trace"]["parallel"]["steps"][1]["seed"] = 3  # a field the page would read and the engine never writes
    data["trace"]["sampling"]["top_p"] = 2.0
    assert sorted(_problems(data, doc["$defs"]["Payload"], doc["$defs"])) == [
        "payload.trace.parallel.steps[1].seed is not declared",
        "payload.trace.sampling.top_p: 2.0 is outside [0.0, 1.0]",
    ]


def conforms(value, name: str) -> list[str]:
    """Where `value` (as JSON) breaks the generated schema's type `name`."""
    doc = contract.json_schema()
    return list(_problems(json.loads(json.dumps(value)), doc["$defs"][name], doc["$defs"], name))


def test_what_the_store_says_of_a_link_is_the_declared_held():
    """Issue 52: `held.json` was read by the page with no declared type; it is `Held` (app/render/payload.py), and
    what the store answers, empty or at its bounds, fits it (a field dropped or renamed fails here)."""
    from app.store import RunStore

    store = RunStore(max_entries=1)
    first = store.add_run(parse_run(SHIPPED[0].read_text(encoding="utf-8")))
    store.add_run(parse_run(SHIPPED[1].read_text(encoding="utf-8")))  # at its bound: the next out is named
    for handle in (first, "code-class-W7N4G7", "nope"):
        assert conforms(store.held(handle), "Held") == [], handle
    assert conforms({**store.held("nope"), "runs": "3"}, "Held") == ["Held.runs: '3' is not an integer"]


def test_what_the_server_tells_the_stage_is_the_declared_stage_value():
    """Issue 52: the page's `Stage.apply` took the stage's value as `any`; it is `StageValue` (app/stage.py), and each
    value the server writes fits it (a field renamed or mistyped fails here)."""
    from app import stage

    values = [
        stage.show("code-class-W7N4G7"),
        stage.show("code-class-W7N4G7", 0, notice="Recording."),
        stage.show("code-class-W7N4G7", "last", mode="lesson", chapter=3, embed={"view": "mask-view"}),
        stage.lesson(2, embed=True),
        stage.live("live-1", "step 3 of 40"),
        stage.live("live-1", "done", done=True),
        stage.notice("No gallery run has that name."),
    ]
    for value in values:
        assert conforms(json.loads(value), "StageValue") == [], value
    assert conforms({"run": "x", "step": "first", "n": 1}, "StageValue") == [
        "StageValue.step: 'first' fits none of [{'type': 'integer'}, {'const': 'last', 'type': 'string'}]"
    ]
    assert conforms({"run": "x"}, "StageValue") == ["StageValue.n is missing"]


def test_what_the_page_knows_of_the_browser_engine_is_the_declared_engine_boot():
    """Issue 52: the page's `boot.engine` was typed `any`; it is `EngineBoot` (app/render/engine_files.py), and what
    `engine_boot` writes fits it (a field dropped or renamed fails here), the site's service worker included."""
    from app.render.engine_files import engine_boot

    boot = engine_boot({"files": 1, "bytes": 200_000_000})
    assert conforms(boot, "EngineBoot") == []
    assert conforms({**boot, "isolation": "lade-isolation.js"}, "EngineBoot") == []
    dropped = {k: v for k, v in boot.items() if k != "limits"}
    assert conforms(dropped, "EngineBoot") == ["EngineBoot.limits is missing"]
    assert conforms({**boot, "limits": {**boot["limits"], "tokens": "128"}}, "EngineBoot") == [
        "EngineBoot.limits.tokens: '128' is not an integer"
    ]


def test_the_boot_document_and_the_labs_data_are_the_declared_boot():
    """Issue 52: the boot, the speed lab's page data and the lesson's extras beside it were typed by hand in
    types.d.ts (`any` in four places); they are `Boot`, `LessonLab` and `LabPage` (app/render/boot.py,
    lade_core/measure/labdata.py), and what the server, the site and the export boot from fits them: a part dropped
    or mistyped fails here."""
    from app.render.boot import boot_data, lab_data
    from app.render.engine_files import engine_boot

    lab = lab_data()
    server = boot_data("server", lab=lab, engine=engine_boot({"files": 1, "bytes": 200_000_000}))
    assert conforms(server, "Boot") == []
    assert conforms({**boot_data("inline", lab=None), "lesson": {}, "step": 3}, "Boot") == []
    assert conforms(boot_data("site", live_url="https://example.org/", lab=lab), "Boot") == []
    assert lab["cpu"]["single"] and lab["numerics"] and lab["second_race"]  # the parts the lesson reads are here
    broken = {**lab, "cpu": {**lab["cpu"], "single": {**lab["cpu"]["single"], "relative": "1.0"}}}
    assert [p.split(":")[0] for p in conforms(broken, "LessonLab")] == ["LessonLab.cpu.single"]  # fits no choice
    assert conforms({k: v for k, v in lab.items() if k != "thresholds"}, "LessonLab") == [
        "LessonLab.thresholds is missing"
    ]
