"""What one live request may cost the public app, in tokens after the chat template, checked without a model."""

import re

import gradio as gr
import pytest

from app import limits


def test_the_prompt_is_bounded_in_tokens_and_the_limit_is_stated():
    """A prompt within the character limit could still be 8,000 tokens; the public app refuses more than
    MAX_PROMPT_TOKENS with a message that says so, and states the bound with its other limits."""
    assert limits.MAX_PROMPT_TOKENS < limits.MAX_PROMPT_CHARS
    limits.check_context(limits.MAX_PROMPT_TOKENS, 8192, 512)
    n = limits.MAX_PROMPT_TOKENS
    with pytest.raises(
        gr.Error,
        match=re.escape(f"The prompt is {n + 1:,} tokens (with the chat template); this demo takes at most {n:,}"),
    ):
        limits.check_context(limits.MAX_PROMPT_TOKENS + 1, 8192, 1)
    with pytest.raises(gr.Error, match="fit in the model's context"):  # past the context: that message, with numbers
        limits.check_context(9000, 8192, 16)
    assert f"{limits.MAX_PROMPT_TOKENS:,} tokens (with the chat template)" in limits.limits_text()
    assert f"at most {limits.PER_CLIENT} runs per visitor" in limits.limits_text()
