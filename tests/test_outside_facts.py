"""What the app says about things outside this project (another method, a paper, a server), checked against their
sources. Each test names the source and the sentence it once contradicted. No model, no browser: the shipped texts
are read as files.
"""

import re

from lade_core.paths import ROOT

SHIPPED = [*sorted((ROOT / "app" / "static").glob("*.js")), ROOT / "lade_core" / "speculative.py", ROOT / "README.md"]


def shipped_text() -> dict[str, str]:
    return {path.name: " ".join(path.read_text(encoding="utf-8").split()) for path in SHIPPED}


def test_no_text_says_a_draft_model_must_be_trained():
    """Speculative decoding's paper (Leviathan, Kalman, Matias, ICML 2023, section 4) sped up T5-XXL with an
    off-the-shelf T5-small as its draft, trained for nothing of the kind; training or distilling a draft raises how
    many of its tokens are kept but is not required, and transformers' assisted generation even takes a draft with
    another tokenizer (`assistant_tokenizer`). The glossary said a draft model "must be trained and kept aligned",
    chapter 6 that it must "be trained to agree with" the large model, the methods table that early exit needs "a
    model trained to exit early"."""
    wrong = re.compile(r"must be trained|trained to agree|kept aligned|needs? a model trained|draft must be", re.I)
    for name, text in shipped_text().items():
        found = wrong.search(text)
        assert not found, (name, text[max(0, found.start() - 120) : found.end() + 80])
    glossary = shipped_text()["lade-notes.js"]
    assert "without retraining (Leviathan et al., 2023)" in glossary


def first_batch_without_drafts(server: dict) -> int | None:
    """The first batch at which a server's example setting drafts nothing, read from the example by the setting's
    own rule: a schedule {batch: K} drafts K from that batch on; [start, end, K] entries draft K inside [start, end];
    a single threshold compared with >= stops at the value itself, with > at the next batch."""
    example = server["example_value"]
    if isinstance(example, dict):
        return min((int(b) for b, k in example.items() if k == 0), default=None)
    if isinstance(example, list):
        return min((start for start, _, k in example if k == 0), default=None)
    if isinstance(example, int):
        return example if server["compares"] == ">=" else example + 1
    return None


def test_each_servers_example_stops_drafting_where_its_rule_says():
    """The lab said vLLM's schedule "switches off above batch 129" beside "drafts none from 129", TensorRT-LLM's
    example schedule (drafting none from batch 8) likewise, and vLLM V0's threshold (compared with >= in its worker:
    vllm/spec_decode/spec_decode_worker.py) as "above"; it also called these example settings, none of them a
    default, "where real servers stop speculating". Each batch is now derived from the example by its rule, and
    the V0 engine is marked as removed (vLLM v0.10.0; vllm-project/vllm pull request 35060)."""
    import json

    doc = json.loads((ROOT / "assets" / "lab" / "thresholds.json").read_text(encoding="utf-8"))
    for server in doc["servers"]:
        assert server["off_from_batch"] == first_batch_without_drafts(server), server["server"]
        assert server["default"] is None, server["server"]
    v0 = next(s for s in doc["servers"] if s["server"].startswith("vLLM (V0"))
    assert v0["compares"] == ">=" and "removed in vLLM v0.10.0" in v0["status"] and v0["off_from_batch"] == 4
    lab = shipped_text()["lade-lab.js"]
    assert "above batch" not in lab and "Where real servers stop" not in lab
    assert re.search(r'drafts nothing from batch ",\s*fact\(`off_from_batch_\$\{n\}`, s\.off_from_batch\)', lab)


# Figures from outside that a string literal of the page may hold, each with why it is not a claim to cite.
TYPED_FIGURE_ALLOWED = {
    ("lade-lab.js", "1x"): "greedy's own speed against itself, by definition",
    ("lade-notes.js", "2023"): "the year in a citation (Leviathan et al., 2023)",
    ("lade-pictures.js", "100%"): "a CSS width",
}


def test_no_outside_figure_is_typed_into_the_pages_scripts():
    """The page typed "up to 1.8x on MT-bench ... its 4x" into the honest note and chapter 8, "A100, fp16" and "128
    tokens" into the paper table and "H100" into chapter 8: a speed-up, a memory size, a GPU, a year or a share
    written into a string literal of the shipped scripts is refused unless listed above with its reason; such
    figures come from a register (assets/lab/*.json, the boot's `paper`) or from the run."""
    literal = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`', re.S)
    figure = re.compile(r"\b\d+(?:\.\d+)?x\b|\b\d+\s?GB\b|\b[AH]1\d\d\b|\b20[12]\d\b|\b\d+(?:\.\d+)?%")
    found = []
    for path in sorted((ROOT / "app" / "static").glob("*.js")):
        code = re.sub(
            r"/\*.*?\*/", "", re.sub(r"(?<![:\"'])//[^\n]*", "", path.read_text(encoding="utf-8")), flags=re.S
        )
        for m in literal.finditer(code):
            text = m.group(1) if m.group(1) is not None else re.sub(r"\$\{[^}]*\}", "", m.group(2))
            found += [(path.name, f.group()) for f in figure.finditer(text)]
    assert set(found) - set(TYPED_FIGURE_ALLOWED) == set(), sorted(set(found) - set(TYPED_FIGURE_ALLOWED))


def test_one_index_names_every_register_and_where_it_is_stated():
    """What the app says about the outside lived in several registers (paper.json, thresholds.json, metrics.json,
    the roofline's devices) and in typed sentences (chapter 6's "as transformers' opt-in heuristic schedule does").
    One index (assets/lab/register.json) now names every register, how its entries cite their sources, and the
    scripts that state it: a script citing a register (`cite("id", ...)`) is listed there, a listed script cites it,
    each register file exists and every entry in it names a source."""
    import json

    index = json.loads((ROOT / "assets" / "lab" / "register.json").read_text(encoding="utf-8"))
    ids = {r["id"] for r in index["registers"]}
    scripts = {
        p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in (ROOT / "app" / "static").glob("*.js")
    }
    cited = {(name, m) for name, text in scripts.items() for m in re.findall(r'cite\(\s*"([a-z_]+)"', text)}
    assert {m for _, m in cited} <= ids, {m for _, m in cited} - ids
    for r in index["registers"]:
        assert r["sources"] and r["holds"] and ("file" in r) != ("code" in r), r["id"]
        for name in r["stated_in"]:
            assert (name, r["id"]) in cited or (r["id"] == "glossary" and "GLOSSARY" in scripts[name]), (r["id"], name)
        assert {n for n, m in cited if m == r["id"]} <= set(r["stated_in"]), r["id"]
        if "file" in r:
            doc = json.loads((ROOT / r["file"]).read_text(encoding="utf-8"))
            entries = [*doc.get("claims", ()), *doc.get("terms", ()), *doc.get("servers", ()), *doc.get("headline", ())]
            rows = [{**doc["rows_defaults"], **row} for row in doc.get("rows", ())]  # a row's source may be the default
            assert entries, r["file"]
            for entry in [*entries, *rows]:
                assert entry.get("sources") or entry.get("source"), (r["file"], entry)


def test_what_the_lesson_says_of_transformers_schedule_is_what_transformers_does():
    """Chapter 6 says early exit's draft length adapts "two tokens more after a draft kept whole, one fewer
    otherwise, as transformers' opt-in heuristic schedule does" (assets/lab/methods.json). Read in the installed
    transformers: the update rule in AssistedCandidateGenerator and the default schedule ("constant", so the
    heuristic is opt-in); and this project's schedule moves the same way (`DraftConfig.next_tokens`)."""
    import inspect
    import json

    from transformers import GenerationConfig
    from transformers.generation.candidate_generator import AssistedCandidateGenerator

    from lade_core.config import DraftConfig

    claim = json.loads((ROOT / "assets" / "lab" / "methods.json").read_text(encoding="utf-8"))["claims"][0]
    assert claim["id"] == "heuristic_schedule"
    rule = " ".join(inspect.getsource(AssistedCandidateGenerator.update_candidate_strategy).split())
    assert "self.num_assistant_tokens += 2" in rule
    assert "self.num_assistant_tokens = max(1, self.num_assistant_tokens - 1)" in rule
    defaults = GenerationConfig()._get_default_generation_params()
    assert defaults["num_assistant_tokens_schedule"] == "constant"
    draft = DraftConfig(tokens=5, schedule="heuristic")  # k, proposed, kept
    assert (draft.next_tokens(5, 5, 5), draft.next_tokens(5, 5, 2), draft.next_tokens(1, 1, 0)) == (7, 4, 1)
