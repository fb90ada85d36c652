"""Files the app writes for a visitor to download (trace copies, HTML exports): one temp folder, bounded.

A file is named after its content, so the same run is written once; every write deletes files older than `MAX_AGE_S`
and then, while the folder is over `MAX_TOTAL_BYTES`, the oldest ones (never the file just written), so the folder
never grows without bound. The folder lies inside Gradio's own temp folder (its cache, `GRADIO_TEMP_DIR`), so
Gradio serves these files where they are instead of copying each into its cache (a download or an export used to
be written twice); `delete_cache` (ui.py) and the guard's cap on that folder (app/guard.py) cover it too.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from gradio.utils import get_upload_folder

FOLDER = Path(get_upload_folder()) / "lade-explorer-files"
MAX_AGE_S = 3600
MAX_TOTAL_BYTES = 512 * 2**20
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_stem(text: str, fallback: str) -> str:
    stem = _UNSAFE.sub("-", text or "").strip("-.")[:60]
    return stem or fallback


def prune(now: float | None = None, keep: Path | None = None) -> None:
    """Delete files past their age, then the oldest while the folder is over its size; `keep` stays."""
    now = time.time() if now is None else now
    files = []
    for path in FOLDER.glob("*/*"):
        try:
            stat = path.stat()
        except OSError:
            continue
        if now - stat.st_mtime > MAX_AGE_S:
            path.unlink(missing_ok=True)
        else:
            files.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= MAX_TOTAL_BYTES:
            break
        if path == keep:
            continue
        path.unlink(missing_ok=True)
        total -= size
    for folder in FOLDER.glob("*"):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def write(text: str, name: str) -> str:
    """`text` saved as `name` in a folder named after its content; the path."""
    data = text.encode("utf-8")
    folder = FOLDER / hashlib.sha256(data).hexdigest()[:20]
    path = folder / name
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)
    else:
        os.utime(path)
    prune(keep=path)
    return str(path)
