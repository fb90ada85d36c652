"""The shape of the code, checked: no import cycle anywhere, the engine apart from its tooling (no module of
lade_core outside measure/ and the CLI imports measurement code), the engine never prints, one way to find files,
and `LookaheadDecoder.step()` reads like the paper (short, no row index computed in it). No model."""

import ast
import inspect
import re

from lade_core.paths import ROOT

PACKAGES = ("lade_core", "app", "scripts")


def modules() -> dict[str, ast.Module]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = ast.parse(path.read_text(encoding="utf-8"))
    found["app_main"] = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    return found


def imports(name: str, tree: ast.Module, known) -> set[str]:
    """Every project module `name` imports, at any depth of the file (function-level imports included)."""
    package = name if name in PACKAGES or name.endswith(("measure", "render")) and (ROOT / name.replace(".", "/")).is_dir() \
        else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known and m != name}


def test_no_import_cycle_anywhere():
    """Tarjan over the project's module graph, lazy imports counted."""
    tree = modules()
    graph = {name: imports(name, t, tree) for name, t in tree.items()}
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_engine_does_not_import_measurement_or_presentation():
    tree = modules()
    for name, t in tree.items():
        if name.startswith("lade_core") and not name.startswith(("lade_core.measure", "lade_core.cli")):
            bad = {m for m in imports(name, t, tree) if m.startswith(("lade_core.measure", "app"))}
            assert not bad, (name, bad)


def test_the_engine_never_prints():
    for name, t in modules().items():
        if name.startswith("lade_core") and name not in ("lade_core.cli", "lade_core.__main__"):
            calls = [n for n in ast.walk(t) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"]
            assert not calls, name


def test_one_way_to_find_files():
    """Paths come from lade_core.paths; nothing computes parents[n] or reaches outside the repository."""
    for path in [*ROOT.glob("lade_core/**/*.py"), *ROOT.glob("app/**/*.py"), *ROOT.glob("tests/*.py"),
                 *ROOT.glob("scripts/*.py")]:
        if path.name == "test_structure.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.parents\[\d", text), path
        assert "/work/shared" not in text and "sys.path.insert" not in text, path


def test_step_reads_like_the_paper():
    from lade_core.lookahead import LookaheadDecoder

    source = inspect.getsource(LookaheadDecoder.step)
    body = [line for line in source.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]
    assert len(body) <= 45, len(body)
    for number in range(1, 6):
        assert f"# {number}." in source
    assert not re.search(r"\b(1 \+ W|cand_start|verify_start|\* \(N - 1\))", source)  # rows come from the layout
