"""The README's front matter is the Hugging Face Space's card: the Hub reads it to build and list the Space. Checked
against the Spaces configuration reference (huggingface/hub-docs, docs/hub/spaces-config-reference.md, read
2026-12-02) and the Hub's own refusal of a long description ('"short_description" length must be less than or
equal to 60 characters long', the error its pre-receive hook gives, quoted in qdonnars/ohmywind pull requests 15
and 160). On main the card had no `python_version`, so the Space would build on the reference's default (3.10)
while this project requires 3.11, and an 86-character `short_description` the Hub refuses.
"""

import re

import yaml

from lade_core.paths import ROOT

KEYS = {  # every key the reference lists
    "title",
    "emoji",
    "colorFrom",
    "colorTo",
    "sdk",
    "python_version",
    "sdk_version",
    "suggested_hardware",
    "suggested_storage",
    "app_file",
    "app_build_command",
    "app_port",
    "base_path",
    "fullWidth",
    "header",
    "short_description",
    "models",
    "datasets",
    "tags",
    "thumbnail",
    "pinned",
    "hf_oauth",
    "hf_oauth_scopes",
    "hf_oauth_expiration_minutes",
    "hf_oauth_authorized_org",
    "disable_embedding",
    "startup_duration_timeout",
    "custom_headers",
    "preload_from_hub",
}
COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
SHORT_DESCRIPTION_MAX = 60


def card() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), "the README must open with the Space's YAML front matter"
    return yaml.safe_load(text.split("\n---\n", 1)[0][4:])


def pinned(name: str) -> str:
    line = next(x for x in (ROOT / "requirements.txt").read_text().splitlines() if x.startswith(f"{name}=="))
    return line.split("==", 1)[1].strip()


def test_the_card_names_only_keys_the_reference_lists():
    assert set(card()) <= KEYS, set(card()) - KEYS


def test_the_space_builds_on_the_python_and_gradio_this_project_pins():
    c = card()
    assert isinstance(c.get("python_version"), str), "python_version must be a string ('3.10' as YAML is 3.1)"
    assert re.fullmatch(r"3\.\d+(\.\d+)?", c["python_version"])
    needed = re.search(r'requires-python = ">=3\.(\d+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert int(c["python_version"].split(".")[1]) >= int(needed), (c["python_version"], needed)
    assert c["sdk"] == "gradio" and str(c["sdk_version"]) == pinned("gradio")
    assert (ROOT / c["app_file"]).is_file()


def test_the_card_fits_the_hubs_limits():
    c = card()
    assert 0 < len(c["short_description"]) <= SHORT_DESCRIPTION_MAX, (
        len(c["short_description"]),
        c["short_description"],
    )
    assert c["colorFrom"] in COLORS and c["colorTo"] in COLORS
    assert isinstance(c["title"], str) and 0 < len(c["title"]) <= 96
