"""The shape of the code, checked: the layer rules (import-linter's contracts in pyproject.toml: no import cycle
within a package, the engine apart from its tooling and the app, tests apart from the scripts), the engine never
prints, one way to find files, every engine's `step()` reads its rows from `StepLayout` (none computed in it), and no
engine
function takes more than 8 parameters. No model."""

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

from lade_core.paths import ROOT

PACKAGES = ("lade_core", "app", "scripts")


@cache
def modules() -> dict[str, ast.Module]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def test_the_layer_rules_declared_in_pyproject_hold():
    """import-linter's contracts (pyproject.toml): the engine imports no app and no script, the app no script, only
    the tooling imports measurement code, and no import cycle within a package."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_test_imports_a_script():
    """Scripts are measurements a person runs; what tests share with them lives in the app or the engine
    (`app.process`). A script a test needs is run as a command."""
    for path in ROOT.glob("tests/*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n == "scripts" or n.startswith("scripts.") for n in names), (path.name, node.lineno)


def _fixtures_loading_a_model(source: str) -> list[str]:
    """The pytest fixtures in a test module's source whose body loads a model (calls `load_model`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
            calls = (n for n in ast.walk(node) if isinstance(n, ast.Call))
            if any(ast.unparse(c.func).endswith("load_model") for c in calls):
                found.append(node.name)
    return found


def test_every_fixture_that_loads_a_model_marks_its_tests_model():
    """`make test-fast` selects tests by mark; a fixture that loads the model outside conftest's NEEDS had put two
    model loads (40 s) into the tier that promises none."""
    from conftest import NEEDS

    for path in ROOT.glob("tests/*.py"):
        for name in _fixtures_loading_a_model(path.read_text(encoding="utf-8")):
            assert NEEDS.get(name) == "model", f"{path.name}: fixture {name} loads a model; add it to NEEDS"
    planted = "@pytest.fixture\ndef other_lm():\n    return load_model(None, 'cpu')\n"
    assert _fixtures_loading_a_model(planted) == ["other_lm"]


def test_the_engine_never_prints():
    for name, t in modules().items():
        if name.startswith("lade_core") and name not in ("lade_core.cli", "lade_core.__main__"):
            calls = [n for n in ast.walk(t) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"]
            assert not calls, name


def test_one_way_to_find_files():
    """Paths come from lade_core.paths; nothing computes parents[n] or reaches outside the repository."""
    for path in [
        *ROOT.glob("lade_core/**/*.py"),
        *ROOT.glob("app/**/*.py"),
        *ROOT.glob("tests/*.py"),
        *ROOT.glob("scripts/*.py"),
    ]:
        if path.name == "test_structure.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.parents\[\d", text), path
        assert "/work/shared" not in text and "sys.path.insert" not in text, path


STEP_DECODERS = (
    "lade_core.lookahead:LookaheadDecoder",
    "lade_core.jacobi:JacobiDecoder",
    "lade_core.speculative:SpeculativeDecoder",
    "lade_core.autoregressive:AutoregressiveDecoder",
    "lade_core.parallel:ParallelLookahead",
)
MODEL_OUTPUTS = {"logits", "argmax", "out"}  # names a step gives the model's output


def _step_tree(target: str) -> ast.FunctionDef:
    module, cls = target.split(":")
    tree = modules()[module]
    klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return next(n for n in klass.body if isinstance(n, ast.FunctionDef) and n.name == "step")


def _from_layout(node: ast.AST) -> bool:
    """An expression the layout computed: `layout.x`, `layout.f(...)`, or row 0 (x, the step's first row)."""
    if isinstance(node, ast.Constant):
        return node.value == 0
    while isinstance(node, (ast.Call, ast.Attribute)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return isinstance(node, ast.Name) and node.id == "layout"


def test_no_row_index_is_computed_in_a_step():
    """Every row a step reads from the model's output or keeps in its KV cache comes from `StepLayout`: a
    subscript of the logits or their argmax, and the rows handed to `keep_in_cache`, are the layout's own
    attributes or calls (or row 0, x). An engine that computed `1 + W + k` itself would drift from the mask
    the model saw; this names the line that does."""
    for target in STEP_DECODERS:
        step = _step_tree(target)
        for node in ast.walk(step):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in MODEL_OUTPUTS:
                assert _from_layout(node.slice), (target, node.lineno, ast.unparse(node))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "keep_in_cache":
                assert _from_layout(node.args[-1]), (target, node.lineno, ast.unparse(node))
            if isinstance(node, ast.Name):
                assert node.id not in ("verify_start", "cand_start"), (target, node.lineno)


def test_the_check_above_catches_a_computed_row():
    """The same rule on a step that reads its new level at rows it computed itself, and keeps rows it listed."""
    bad = ast.parse("def step(self):\n    level = argmax[1 + W:]\n    self.lm.keep_in_cache(c, p, [0, 1, 2])")
    subscript = next(n for n in ast.walk(bad) if isinstance(n, ast.Subscript))
    call = next(n for n in ast.walk(bad) if isinstance(n, ast.Call))
    assert not _from_layout(subscript.slice) and not _from_layout(call.args[-1])
    assert _from_layout(ast.parse("layout.new_level_rows", mode="eval").body)


MAX_PARAMETERS = 8
# Signatures another library dictates: transformers calls an attention function with these arguments.
DICTATED = {"lade_core.kernels.grouped_query_sdpa"}


def test_no_function_in_the_engine_takes_more_than_8_parameters():
    """Arguments that travel together are grouped into frozen settings or request objects (`MethodSpec`,
    `RunRequest`, `Lane`) instead of a long parameter list; `self` and `cls` do not count."""
    long = []
    for name, tree in modules().items():
        if not name.startswith("lade_core"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + [
                    p.arg for p in (a.vararg, a.kwarg) if p is not None
                ]
                params = [p for p in params if p not in ("self", "cls")]
                if len(params) > MAX_PARAMETERS and f"{name}.{node.name}" not in DICTATED:
                    long.append(f"{name}.{node.name}({len(params)})")
    assert not long, long


def test_every_colour_of_the_stage_is_declared_once_in_its_palette():
    """lade.css declares each colour once, as `light-dark(light, dark)` in the palette (and its high-contrast
    swap); every other rule names a palette variable, so a theme is only a `color-scheme` (lade-theme.js). Allowed
    outside: a soft shadow and marks translucent enough to read on either ground, the white of print, the black halo
    of text on the hatched candidate key (the hatch is the same in both themes). The renderer's JS names no colour
    (its marks take `Lade.dom.COLORS`, the palette's variables)."""
    css = re.sub(r"/\*.*?\*/", "", (ROOT / "app" / "static" / "lade.css").read_text(encoding="utf-8"), flags=re.S)
    colour = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\([^)]*\)|\b(?:white|black)\b(?!-)")
    allowed = {"rgba(15, 23, 42, 0.06)", "rgba(185, 28, 28, 0.12)", "rgba(217, 119, 6, 0.18)", "#000", "#fff"}
    stray = []
    for block in re.split(r"(?<=})\s*\n", css):
        if re.search(r"--(bg|win):", block):  # the palette and its high-contrast swap
            continue
        for found in colour.findall(block):
            if found not in allowed or (found == "#fff" and "!important" not in block):
                stray.append((found, block.strip().splitlines()[0]))
    assert stray == [], stray
    for path in (ROOT / "app" / "static").glob("lade-*.js"):
        text = path.read_text(encoding="utf-8")
        assert not re.findall(r"""["'`]#[0-9a-fA-F]{3,8}["'`]""", text), path.name


def test_the_readme_file_map_names_every_browser_file():
    """A newcomer finds each of the browser's files in the README's file map (it had left out the theme and the
    whole in-browser race)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [p.stem for p in sorted((ROOT / "app" / "static").glob("*.js")) if f"`{p.stem}`" not in readme]
    assert missing == [], missing


def _lade_graph() -> dict[str, dict[str, set[str]]]:
    """Script -> the scripts whose `Lade.<module>` it reads in its code (comments left out), with what it reads."""
    from app.render.assets import SCRIPTS, STATIC

    def code(text: str) -> str:
        return re.sub(r"(?m)//.*$", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))

    home = {
        m.group(1): name
        for name in SCRIPTS
        for m in re.finditer(r"window\.Lade\.(\w+)\s*=", (STATIC / name).read_text(encoding="utf-8"))
    }
    graph: dict[str, dict[str, set[str]]] = {name: {} for name in SCRIPTS}
    for name in SCRIPTS:
        for m in re.finditer(r"\bLade\.(\w+)", code((STATIC / name).read_text(encoding="utf-8"))):
            other = home.get(m.group(1))
            if other and other != name:
                graph[name].setdefault(other, set()).add(m.group(0))
    return graph


def test_each_browser_script_loads_after_every_module_it_reads_and_none_reads_in_a_cycle():
    """Issue 52: the page's scripts are plain files in one `window.Lade` (ES modules do not survive Gradio's head or the
    export's policy), so nothing but this test checks their order: each script in `assets.SCRIPTS` comes after every
    script whose module it reads (so the graph has no cycle: lesson and its extras, layout and the page, the notes and
    the lab each read the other before). Every shipped script is in the graph."""
    graph = _lade_graph()
    assert _read_before_loaded(graph) == [], "read before it is loaded"
    assert sum(len(reads) for reads in graph.values()) > 50  # the graph was read (a parser that finds nothing fails)


def _read_before_loaded(graph) -> list[tuple[str, str, list[str]]]:
    """(script, the script it reads that loads after it, what it reads)."""
    from app.render.assets import SCRIPTS

    order = {name: i for i, name in enumerate(SCRIPTS)}
    return [
        (name, other, sorted(uses))
        for name, reads in graph.items()
        for other, uses in reads.items()
        if order[other] > order[name]
    ]


def test_the_graph_check_finds_a_planted_cycle(tmp_path, monkeypatch):
    """The order check fails on a script that reads one loaded after it."""
    from app.render import assets

    for name in assets.SCRIPTS:
        (tmp_path / name).write_text((assets.STATIC / name).read_text(encoding="utf-8"), encoding="utf-8")
    core = tmp_path / assets.SCRIPTS[0]
    core.write_text(core.read_text(encoding="utf-8") + "\nwindow.Lade.stage.mount;\n", encoding="utf-8")
    monkeypatch.setattr(assets, "STATIC", tmp_path)
    assert _read_before_loaded(_lade_graph()) == [(assets.SCRIPTS[0], "lade-stage.js", ["Lade.stage"])]


def test_no_browser_file_holds_more_than_a_concern():
    """Issue 52: a browser file past 20,000 non-space characters had taken on other jobs (lade-stage.js held ten at
    38,700; the chapters that read several runs 22,600); a new concern gets a file of its own before then."""
    big = {
        p.name: n
        for p in sorted((ROOT / "app" / "static").glob("*.js"))
        if (n := len(re.sub(r"\s", "", p.read_text(encoding="utf-8")))) > 20_000
    }
    assert big == {}, big


def test_the_browsers_types_say_what_every_value_is():
    """Issue 52: 185 JSDoc types said `any` and tsc let any unannotated parameter be `any` (noImplicitAny off). Now
    none says it and tsc refuses an implicit one; English "any" in comments is not a type."""
    import json

    config = json.loads((ROOT / "tsconfig.json").read_text(encoding="utf-8"))["compilerOptions"]
    assert config["strict"] is True and config.get("noImplicitAny", True) is True, config
    typed = re.compile(r"(\{[^{}]*\bany\b[^{}]*\}|:\s*any\b|<any>|\bany\[\])")
    files = sorted((ROOT / "app" / "static").glob("*.js")) + sorted((ROOT / "app" / "static").glob("*.d.ts"))
    found = [
        f"{p.name}:{n}"
        for p in files
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if typed.search(line) and not line.lstrip().startswith("// ")
    ]
    assert found == [], found
    assert typed.search("/** @param {Record<string, any>} x */") and not typed.search("// keeps any of it")
