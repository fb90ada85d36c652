"""`LM`: the one adapter between the decoding engines and a Hugging Face causal LM.

Everything the engines need from transformers goes through here, and only through public APIs: the model's forward
with explicit `position_ids`, a 4D additive attention mask and `logits_to_keep`; the `DynamicCache` and its `crop`.
No monkeypatching, no forked model files. Loading a model lives in `checkpoint.py`, the CPU kernels it swaps in
(through `nn.Module` and transformers' attention registry) in `kernels.py`.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache

import torch
from transformers import DynamicCache

from .kernel_choice import KernelPlan
from .kernels import LABELS, Switch
from .layout import StepLayout

BLOCK_CACHE_BYTES = 64 * 2**20  # mask blocks kept per model, in bytes: bounds memory on a server that sees many layouts


@dataclass
class LM:
    model: torch.nn.Module
    tokenizer: object
    name: str
    device: torch.device
    dtype: torch.dtype
    eos_ids: frozenset[int] = field(default_factory=frozenset)
    kernels: str = "stock"  # the layouts of the linear layers: one of `kernels.LABELS`'s or a plan's label (CPU fp32)
    plan: KernelPlan | None = None  # the layout of each width, where the layers hold several (`kernels.Switch`)
    switch: Switch | None = None  # what the plan sets before each forward

    def __post_init__(self):
        self._piece = lru_cache(maxsize=None)(self._decode_one)
        self._blocks: OrderedDict[StepLayout, tuple[torch.Tensor, ...]] = OrderedDict()
        self._block_bytes = 0
        self.drafts: dict[str, LM] = {}  # draft models built or loaded for this model, by name (`checkpoint.py`)
        fixed = {label: layout for layout, label in LABELS.items()}  # a model on one layout at every width
        # the layout of the last forward (`StepTrace.kernels`)
        self.used = self.switch.layout if self.switch is not None else fixed.get(self.kernels, "stock")

    def use_width(self, tokens: int) -> None:
        """Set the layout of the next forward, of `tokens` rows (a batch's rows counted together), from the plan (a
        model with one layout has none). Every forward of this adapter sets it; code that calls the model itself
        (a batched curve) calls this first."""
        if self.plan is not None:
            self.switch.layout = self.used = self.plan.at(tokens)

    # -- text --------------------------------------------------------------------------------------------------
    @property
    def is_chat(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def max_positions(self) -> int:
        return int(getattr(self.model.config, "max_position_embeddings", 2048) or 2048)

    def encode_prompt(self, text: str, chat: bool | None = None) -> list[int]:
        """Token ids of a user prompt, wrapped in the chat template (with its default system message) if it has one.

        The user's text is tokenised as text: a special token's spelling typed in it (`<|im_end|>`) stays text and
        never becomes a control token (`chat.py`); the template's own control tokens are kept."""
        from .chat import encode_chat, encode_plain

        if chat if chat is not None else self.is_chat:
            return encode_chat(self.tokenizer, text)
        return encode_plain(self.tokenizer, text)

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def _decode_one(self, token: int) -> str:
        return self.tokenizer.decode([token], skip_special_tokens=False)

    def token_texts(self, ids) -> dict[int, str]:
        """Text of each token on its own (cached), for traces and views."""
        return {int(t): self._piece(int(t)) for t in ids}

    @property
    def vocab_size(self) -> int:
        return int(
            self.model.get_output_embeddings().out_features
            if hasattr(self.model.get_output_embeddings(), "out_features")
            else self.model.config.vocab_size
        )

    def cache_problem(self) -> str | None:
        """Why the engines cannot use this model's KV cache exactly, or None. They keep accepted entries by moving
        them and cropping the rest; a sliding-window or other non-plain layer cannot be cropped and re-laid."""
        kinds = {type(layer).__name__ for layer in self.new_cache().layers}
        if kinds - {"DynamicLayer"}:
            return (
                f"{self.name} uses {', '.join(sorted(kinds - {'DynamicLayer'}))} cache layers, which cannot be "
                f"cropped and re-laid after a step; lookahead decoding here needs full-attention layers only"
            )
        return None

    # -- forward -----------------------------------------------------------------------------------------------
    def new_cache(self) -> DynamicCache:
        return DynamicCache(config=self.model.config)

    @torch.inference_mode()
    def prefill(self, cache: DynamicCache, ids: list[int]) -> torch.Tensor:
        """Run the prompt through the model (causal), filling `cache`; return the (vocab,) logits at its last token."""
        self.use_width(len(ids))
        input_ids = torch.tensor([ids], device=self.device)
        out = self.model(input_ids=input_ids, cache=cache, use_cache=True, logits_to_keep=1)
        return out.logits[0, -1].float()

    @torch.inference_mode()
    def decode_one(self, cache: DynamicCache, token: int, position: int) -> torch.Tensor:
        """One autoregressive step: feed `token` at `position`; return its (vocab,) logits."""
        self.use_width(1)
        input_ids = torch.tensor([[token]], device=self.device)
        position_ids = torch.tensor([[position]], device=self.device)
        out = self.model(input_ids=input_ids, position_ids=position_ids, cache=cache, use_cache=True, logits_to_keep=1)
        return out.logits[0, -1].float()

    @torch.inference_mode()
    def extend(self, cache: DynamicCache, ids: list[int], position: int) -> torch.Tensor:
        """Feed `ids` (causal among themselves) at positions `position`.. on top of `cache`; return the (vocab,)
        logits at the last of them. A draft model's pass: catching up on the accepted tokens, or one more guess."""
        self.use_width(len(ids))
        input_ids = torch.tensor([ids], device=self.device)
        position_ids = torch.arange(position, position + len(ids), device=self.device)[None]
        out = self.model(input_ids=input_ids, position_ids=position_ids, cache=cache, use_cache=True, logits_to_keep=1)
        return out.logits[0, -1].float()

    @staticmethod
    def truncate(cache: DynamicCache, length: int) -> None:
        """Keep the first `length` positions of `cache` (a draft's cache, back to what the model accepted)."""
        extra = cache.get_seq_length() - length
        if extra > 0:
            cache.crop(-extra)

    def _block(self, layout: StepLayout) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(q, q) additive mask block, (q,) position offsets and the rows to keep logits of, for a layout: built
        once per layout and kept while the blocks fit in `BLOCK_CACHE_BYTES` (a run uses a few dozen plain layouts;
        token trees, many)."""
        if layout in self._blocks:
            self._blocks.move_to_end(layout)
            return self._blocks[layout]
        visible = torch.from_numpy(layout.mask()).to(self.device)
        block = torch.zeros(visible.shape, dtype=self.dtype, device=self.device)
        block.masked_fill_(~visible, torch.finfo(self.dtype).min)
        offsets = torch.from_numpy(layout.positions()).to(self.device)
        keep = torch.tensor(layout.logit_rows(), device=self.device)
        self._blocks[layout] = (block, offsets, keep)
        self._block_bytes += block.numel() * block.element_size()
        while self._block_bytes > BLOCK_CACHE_BYTES and len(self._blocks) > 1:
            _, (old, _, _) = self._blocks.popitem(last=False)
            self._block_bytes -= old.numel() * old.element_size()
        return block, offsets, keep

    @torch.inference_mode()
    def step_forward(self, cache: DynamicCache, tokens: list[int], layout: StepLayout) -> torch.Tensor:
        """One lookahead forward over `tokens` laid out as `layout`, on top of the `cache` (all of it visible).

        Returns (len(layout.logit_rows()), vocab) logits at the rows a step reads only: the lm head is the costliest
        part of a small model.
        """
        past = cache.get_seq_length()
        block, offsets, keep = self._block(layout)
        q = layout.size
        self.use_width(q)
        mask = torch.cat([torch.zeros(q, past, dtype=self.dtype, device=self.device), block], dim=1)[None, None]
        out = self.model(
            input_ids=torch.tensor([tokens], device=self.device),
            position_ids=(offsets + past)[None],
            attention_mask=mask,
            cache=cache,
            use_cache=True,
            logits_to_keep=keep,
        )
        return out.logits[0].float()

    @staticmethod
    @torch.inference_mode()
    def keep_in_cache(cache: DynamicCache, start: int, rows: list[int]) -> None:
        """Keep, of the entries this step appended from `start` on, only rows `rows` (ascending, rows[0] == 0).

        The accepted candidate's keys and values are moved next to x's instead of being computed again.
        """
        if rows != list(range(len(rows))):
            device = cache.layers[0].keys.device
            src = torch.tensor([start + r for r in rows], device=device)
            dst = torch.arange(start, start + len(rows), device=device)
            for layer in cache.layers:
                for t in (layer.keys, layer.values):
                    t[:, :, dst] = t[:, :, src]
        cache.crop(-(cache.get_seq_length() - start - len(rows)))

    def sync(self) -> None:
        """Wait for queued device work, so that timings are honest on a GPU."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        elif self.device.type == "mps":
            torch.mps.synchronize()
