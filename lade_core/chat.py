"""A user's prompt as token ids: the chat template's control tokens are the template's, the user's text is text.

Rendering the chat template around the user's text and tokenising the whole string would turn `<|im_start|>`,
`<|im_end|>`, `<|endoftext|>` (any special token's spelling) typed in a prompt into the real control tokens, so a
visitor could forge system and assistant turns. Here the template is rendered around a placeholder; the text
between the last control token before the user's text and the first one after it (the template's own
`user\\n`, the user's text, and whatever plain text the template puts after it) is tokenised with
`split_special_tokens=True`, the rest of the template with its control tokens. A tokenizer splits its input at
special tokens before anything else, so for a prompt without special-token spellings the ids are exactly those of
tokenising the whole rendered string (tests/test_chat.py checks this on the benchmark prompts).

`split_special_tokens` is not an argument the tokenizer keeps to one call: a fast tokenizer sets it as one flag on
its shared Rust object, then encodes. Two threads encoding at once (a run and the expected wait, say) could read each
other's flag: a typed `<|im_start|>` became the real control token. Every tokenizer call here holds `LOCK` (one lock
for every tokenizer: the calls are short, and the app has one); tests/test_chat_threads.py encodes from eight threads.
"""

from __future__ import annotations

import re
import threading

PLACEHOLDER = "\ue000lade-user-text\ue001"  # private-use characters: no template or prompt carries them
LOCK = threading.RLock()  # held around every tokenizer call in this module (its special-token flag is shared state)


def special_texts(tokenizer) -> list[str]:
    """The spellings of the tokenizer's special (control) tokens, longest first."""
    texts = set(getattr(tokenizer, "all_special_tokens", None) or ())
    for added in (getattr(tokenizer, "added_tokens_decoder", None) or {}).values():
        if getattr(added, "special", False):
            texts.add(str(added.content))
    return sorted((t for t in texts if t), key=len, reverse=True)


def special_ids(tokenizer) -> frozenset[int]:
    """The ids of the tokenizer's special (control) tokens."""
    ids = set(getattr(tokenizer, "all_special_ids", None) or ())
    for token_id, added in (getattr(tokenizer, "added_tokens_decoder", None) or {}).items():
        if getattr(added, "special", False):
            ids.add(int(token_id))
    return frozenset(int(i) for i in ids)


def _ids(tokenizer, text: str, split: bool) -> list[int]:
    if not text:
        return []
    with LOCK:
        ids = tokenizer(text, add_special_tokens=False, split_special_tokens=split)["input_ids"]
    return [int(t) for t in ids]


def _render(tokenizer, content: str) -> str:
    with LOCK:
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )


def chat_frame(tokenizer) -> tuple[str, str, str, str]:
    """The chat template around the user's text, cut where its control tokens end: (head, lead, trail, tail), so
    that the rendered turn is head + lead + text + trail + tail, head and tail hold the control tokens (tokenised with
    them) and lead + text + trail is tokenised as text. The browser's tokenizer takes the same frame
    (app/render/engine_files.py)."""
    around = _render(tokenizer, PLACEHOLDER)
    if around.count(PLACEHOLDER) != 1:
        raise ValueError("the chat template does not place the user's text once")
    before, after = around.split(PLACEHOLDER)
    specials = special_texts(tokenizer)
    if specials:
        pattern = re.compile("|".join(re.escape(s) for s in specials))
        a = max((m.end() for m in pattern.finditer(before)), default=0)
        first = pattern.search(after)
        b = first.start() if first else len(after)
    else:
        a, b = 0, len(after)
    return before[:a], before[a:], after[:b], after[b:]


def encode_chat(tokenizer, text: str) -> list[int]:
    """Token ids of `text` as the user's turn in the chat template; the user's text never yields a control token."""
    head, lead, trail, tail = chat_frame(tokenizer)
    before, after = head + lead, trail + tail
    rendered = _render(tokenizer, text)  # the template may change the text (trim it, say): take it as rendered
    if not (rendered.startswith(before) and rendered.endswith(after) and len(rendered) >= len(before) + len(after)):
        raise ValueError("the chat template renders the user's text in a way this tokeniser cannot isolate")
    middle = rendered[len(before) : len(rendered) - len(after)]
    return (
        _ids(tokenizer, head, split=False)
        + _ids(tokenizer, lead + middle + trail, split=True)
        + _ids(tokenizer, tail, split=False)
    )


def encode_plain(tokenizer, text: str) -> list[int]:
    """Token ids of `text` with no chat template: the tokenizer's own added tokens (BOS, say) around it, the text as
    text."""
    with LOCK:
        ids = tokenizer(text, add_special_tokens=True, split_special_tokens=True)["input_ids"]
    return [int(t) for t in ids]
