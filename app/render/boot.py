"""What the renderer needs before any run: the boot data, one JSON document the page carries in its <head>.

The same document boots the Gradio page, the static site and (a smaller one) the HTML export: the view ids and the
groups an embed may ask for, the gallery's listing with its computed captions, which gallery runs the lesson uses,
and the speed lab's data (the parts that do not depend on a run). Where runs come from is the boot's `source`:
"server" (the stage's server function), "site" (files beside the page) or "inline" (the export's one run).
"""

from __future__ import annotations

import json
from typing import Literal, NotRequired

from typing_extensions import TypedDict

from lade_core.machine import machine_name
from lade_core.measure.labdata import LabPage, RunSetting
from lade_core.measure.prompts import load_prompts
from lade_core.paths import ASSETS, BENCH

from .. import gallery
from .engine_files import EngineBoot
from .payload import Band
from .views import VIEW_GROUPS, VIEW_IDS, VIEW_TITLES

# What the page boots from, declared once: the page's `Boot` is generated from it (app/render/contract.py).


class SecondRaceLane(TypedDict):
    id: str  # the page's lane id
    kind: str
    name: str
    steps: int
    compression: float
    step_cost: float  # a step's time over greedy's
    forward_cost: float  # a forward's time over greedy's
    setting: RunSetting | None  # the main lane's W, N, G where it is lookahead
    speedup: NotRequired[float]
    verdict: NotRequired[str]


class SecondRace(TypedDict):
    """Chapter 6's second race (`second_race`)."""

    name: str
    prompt: str
    lanes: list[SecondRaceLane]
    fastest: list[str]
    band: Band
    identical: int  # how many lanes' texts are identical (0: not all)


class CpuChoice(TypedDict):
    """The bench's median speed-ups on this CPU at W=7 and W=15 (`_cpu_choice`)."""

    narrow: float
    wide: float
    narrow_file: str
    wide_file: str
    machine: str | None  # None: not recorded, or two machines


class NumericsRow(TypedDict):
    id: str
    prompt: str
    identical: bool
    first_divergence: int | None
    logit_gap: float | None
    wide_first_divergence: int | None
    greedy_text: str
    lookahead_text: str


class Numerics(TypedDict):
    """One dtype against greedy (`_numerics`)."""

    identical: int
    prompts: int
    wide_identical: int | None
    rows: list[NumericsRow]
    source: str
    machine: str | None
    command: str


class NumericsByDtype(TypedDict):
    float32: Numerics
    bfloat16: Numerics


class LessonLab(LabPage):
    """The speed lab's page data with what the lesson reads beside it (`lab_data`)."""

    cpu_choice: CpuChoice | None
    numerics: NumericsByDtype | None
    second_race: SecondRace | None


class GalleryEntry(TypedDict):
    name: str
    title: str
    caption: str
    method: str


class Views(TypedDict):
    ids: list[str]
    groups: dict[str, list[str]]
    titles: dict[str, str]  # what a person reads for each view and group (`views.VIEW_TITLES`)


class PaperClaims(TypedDict):
    one_device: str
    several: str
    source: str


class MethodClaim(TypedDict):
    says: str
    whose: str


class Boot(TypedDict):
    """The boot document (`boot_data`)."""

    source: Literal["server", "site", "inline"]
    views: Views
    gallery: list[GalleryEntry]
    lesson: dict[str, str | None]  # the gallery run each of the lesson's roles uses
    paper: PaperClaims
    methods: dict[str, MethodClaim]
    lab: LessonLab | None
    live_url: str | None
    engine: EngineBoot | None
    step: NotRequired[int | None]  # the export's opening step


def lab_data() -> LessonLab:
    """The speed lab's page data (lade_core.measure.labdata: everything that does not depend on the run), plus what
    the lesson reads beside it: the bench's medians at the paper's two settings on this CPU, and what the numerics
    experiment measured in fp32 and bf16."""
    from lade_core.measure.labdata import lab_page_data

    return {
        **lab_page_data(),
        "cpu_choice": _cpu_choice(),
        "numerics": _numerics(),
        "second_race": second_race(),
    }


def second_race() -> SecondRace | None:
    """Chapter 6's second race, an answer that is new text (the gallery's "race-new-text" run): its prompt, and per
    lane (greedy's first) the method's name, steps, tokens per step, and speed-up and verdict by the one noise rule
    (`app.speed`, as the run's payload carries them), with the lanes about as fast as the fastest."""
    from lade_core.config import METHOD_NAMES

    from ..speed import mean_forward_s, mean_step_s
    from .payload import lane_methods, speed

    name = gallery.by_role("race-new-text")
    if name is None:
        return None
    run = gallery.load(name)
    kinds = {
        "baseline": "greedy" if run.sampling.temperature == 0 else "sampling",
        **dict(zip(["parallel", *(f"lane{i}" for i in range(len(run.lanes)))], (lane.kind for lane in run.all_lanes))),
    }
    sp = speed(run)
    lanes = [
        {
            "id": lane_id,
            "kind": kinds[lane_id],
            "name": METHOD_NAMES[kinds[lane_id]],
            "steps": len(method.steps),
            "compression": method.compression,
            "step_cost": mean_step_s(method) / mean_step_s(run.baseline),
            "forward_cost": mean_forward_s(method) / mean_forward_s(run.baseline),
            "setting": (
                {"window": run.config.window, "ngram": run.config.ngram, "guess": run.config.guess}
                if kinds[lane_id] == "lookahead" and lane_id == "parallel"
                else None
            ),
            **(
                {"speedup": sp["lanes"][lane_id]["speedup"], "verdict": sp["lanes"][lane_id]["verdict"]}
                if lane_id in sp["lanes"]
                else {}
            ),
        }
        for lane_id, method in lane_methods(run).items()
    ]
    identical = run.sampling.temperature == 0 and all(lane.run.tokens == run.baseline.tokens for lane in run.all_lanes)
    return {
        "name": name,
        "prompt": run.prompt,
        "lanes": lanes,
        "fastest": sp["fastest"],
        "band": sp["band"],
        "identical": len(run.all_lanes) + 1 if identical else 0,
    }


def _cpu_choice() -> CpuChoice | None:
    """The bench's median speed-ups on this CPU at W=7 and at W=15 (the default layout): the lesson's question."""
    narrow, wide = BENCH / "bench-7-4-7-tree.json", BENCH / "bench-15-5-15-tree.json"
    if not (narrow.exists() and wide.exists()):
        return None
    median = lambda path: json.loads(path.read_text())["summary"]["speedup_median"]  # noqa: E731
    docs = [json.loads(path.read_text()) for path in (narrow, wide)]
    names = {machine_name(d.get("machine"), d.get("threads")) for d in docs}  # the machine each bench ran on
    return {
        "narrow": median(narrow),
        "wide": median(wide),
        "narrow_file": f"assets/bench/{narrow.name}",
        "wide_file": f"assets/bench/{wide.name}",
        "machine": names.pop() if len(names) == 1 else None,  # None: not recorded, or two machines
    }


def _numerics(cut: int = 80) -> NumericsByDtype | None:
    """fp32 and bf16 against greedy (assets/bench/numerics-*.json): how many prompts were identical, and per prompt
    the first divergence, the top-two logit gap there, where a wider pass of greedy itself first differs, and both
    texts from the divergence on (cut to `cut` characters)."""
    out = {}
    for dtype in ("float32", "bfloat16"):
        path = BENCH / f"numerics-{dtype}.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        prompts = {q["id"]: q["prompt"] for q in load_prompts()}
        rows = [
            {
                "id": p["id"],
                "prompt": prompts.get(p["id"], ""),
                "identical": p["identical"],
                "first_divergence": p["first_divergence"],
                "logit_gap": p["logit_gap"],
                "wide_first_divergence": (p.get("batch_shape") or {}).get("first_divergence"),
                "greedy_text": (p.get("greedy_text") or "")[:cut],
                "lookahead_text": (p.get("lookahead_text") or "")[:cut],
            }
            for p in data["prompts"]
        ]
        out[dtype] = {
            "identical": data["summary"]["identical"],
            "prompts": data["summary"]["prompts"],
            "wide_identical": data["summary"].get("batch_shape_identical"),
            "rows": rows,
            "source": f"assets/bench/{path.name}",
            "machine": machine_name(data.get("machine"), data.get("threads")),  # None: not recorded
            "command": data.get("command", ""),
        }
    return out


def paper_claims() -> PaperClaims:
    """The paper's two headline claims as the register words them (assets/lab/paper.json): every page states them
    from here, the export included."""
    from lade_core.measure.paper import paper_figures

    headline = paper_figures()["headline"]
    one = next(c for c in headline if c["devices"] == 1)
    several = next(c for c in headline if not isinstance(c["devices"], int) and "strong scaling" in c["claim"])
    return {"one_device": one["claim"], "several": several["claim"], "source": one["source"]}


def plural(n: int, word: str) -> str:
    """ "1 thread", "2 threads"."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def method_claims() -> dict[str, MethodClaim]:
    """What the page says about other projects' methods, by id, as the register words it (assets/lab/methods.json;
    each claim's sources stay there)."""
    doc = json.loads((ASSETS / "lab" / "methods.json").read_text(encoding="utf-8"))
    return {c["id"]: {"says": c["says"], "whose": c["whose"]} for c in doc["claims"]}


def boot_data(
    source: str, live_url: str | None = None, lab: LessonLab | None = None, engine: EngineBoot | None = None
) -> Boot:
    """The boot document for a page whose runs come from `source`; `live_url` links "Run it live" (static site);
    `engine`: the browser engine's files beside the page (`engine_files.engine_boot`), for "Race it in your browser"."""
    roles = {role: gallery.by_role(role) for role in ("lookahead", "jacobi", "race", "race-new-text")}
    return {
        "source": source,
        "views": {
            "ids": list(VIEW_IDS),
            "groups": {k: list(v) for k, v in VIEW_GROUPS.items()},
            "titles": dict(VIEW_TITLES),
        },
        "gallery": gallery.listing(),
        "lesson": roles,
        "paper": paper_claims(),
        "methods": method_claims(),
        "lab": lab,
        "live_url": live_url,
        "engine": engine,
    }
