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
        assert not found, (name, text[max(0, found.start() - 120):found.end() + 80])
    glossary = shipped_text()["lade-notes.js"]
    assert "without retraining (Leviathan et al., 2023)" in glossary
