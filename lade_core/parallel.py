"""Lookahead Parallelism over `torch.distributed`: k processes, one per device, each holding the whole model, decode
one answer together. This is not model sharding (no layer or weight is split, as tensor or pipeline parallelism
would): each device feeds its share of the step (`shares.py`) through its own copy of the model.

One step, on every rank:
    1. the same window, pool and candidates: every rank holds the same state and updates it from the same verdict
    2. one forward over its share: x, level 0 up to its last column, its columns at the deeper levels, its
       candidates (`shares.layout`: the one-device mask rules, restricted to those tokens)
    3. one all-gather (int32): what it fed, its forward's time, its new-level tokens, its candidates' predictions
    4. every rank runs `verify_greedy` over all the candidates and predictions, so all reach the same verdict
       (longest match, first among equals), the same new level and the same pool
    5. when a candidate's tokens are accepted, the rank that verified them broadcasts their K/V (one collective);
       x's K/V every rank computed itself. Broadcast rather than re-fed (the reference implementation feeds the
       accepted tokens again): re-feeding costs every other rank those rows in its next forward and makes the step
       layouts differ by rank, while the broadcast moves 2 x layers x kv_heads x head_dim values per accepted token
       (46 KB in fp32 for SmolLM2-135M) on the steps that accept a candidate, and leaves every rank's cache holding
       the rows the winner's forward computed.

Greedy only. Sampling would need the same draws on every rank (a seeded stream they share) and, where verification
runs, the target distribution at every offered token's row: a vocabulary-sized row per token instead of one int32.
Adaptive sizes are refused too: each rank would weigh its own step cost and choose different sizes.

Launching: `lade generate --devices K` (or `trace`) spawns K processes on this machine (gloo on CPUs, NCCL on
GPUs: one GPU per rank, so NCCL needs K GPUs); under `torchrun` the processes it started join instead.
"""

from __future__ import annotations

import os
import pickle
import socket
import tempfile
from dataclasses import dataclass

import torch
import torch.distributed as dist

from .config import ConfigError, LookaheadConfig
from .decoding import StepClock, check_request, generate
from .lookahead import LookaheadDecoder
from .model import LM
from .shares import deal, layout, payload
from .trace import MAX_DEVICES, MethodRun, RankStep, StepTrace
from .verify import verify_greedy


class ParallelLookahead(LookaheadDecoder):
    """Lookahead decoding dealt out over the ranks of the default process group; every rank returns the same
    steps, each carrying what every rank fed and sent (`StepTrace.ranks`)."""

    def __init__(self, lm: LM, prompt_ids: list[int], config: LookaheadConfig):
        if config.adaptive:
            raise ConfigError("Lookahead Parallelism takes fixed sizes: with adaptive ones each rank would choose")
        super().__init__(lm, list(prompt_ids), config)
        self.rank, self.devices = dist.get_rank(), dist.get_world_size()

    def step(self) -> StepTrace:
        clock = StepClock()
        x, p = self.advance()
        N, tree = self.config.ngram, self.config.tree

        # 1-2. the step's branches, this rank's share of them, one forward
        branches = self.branches(x, p)
        sizes, levels, candidates, _ = branches
        lengths = [len(c) for c in candidates]
        shares = deal(sizes.width if levels else 0, len(levels), lengths, self.devices)
        share = shares[self.rank]
        mine = layout(share, len(levels), candidates, N - 1, tree)
        a, b = share.first, share.first + share.columns
        window = [*levels[0][:b], *(t for level in levels[1:] for t in level[a:b])] if mine.levels else []
        tokens = [x, *window, *mine.node_tokens([candidates[c] for c in share.candidates])]
        with clock.timed("forward", self.lm):
            logits = self.lm.step_forward(self.cache, tokens, mine)
        argmax = logits.argmax(dim=-1).cpu().numpy()
        forward_us = round(clock.forward_s * 1e6)

        # 3. one all-gather: [fed, forward µs, the token after x, its new-level tokens, its candidates' predictions]
        sent = [
            len(tokens),
            forward_us,
            int(argmax[0]),
            *mine.new_level(argmax),
            *(t for row in mine.predictions(argmax) for t in row),
        ]
        width = payload(shares, lengths)
        gathered = _all_gather(sent, width, self.lm.device)

        # 4. the same verdict and new level on every rank
        new_level: list[int] = []
        predictions: list[tuple[int, ...]] = [()] * len(candidates)
        for s, row in zip(shares, gathered):
            new_level += row[3 : 3 + s.columns]
            at = 3 + s.columns
            for c in s.candidates:
                predictions[c] = tuple(row[at : at + lengths[c] + 1])
                at += lengths[c] + 1
        first = gathered[0][2]  # the token after x: rank 0's, for every candidate too (one greedy decision, even
        # where a batch's shape moves low bits on another rank)
        predictions = [(first, *row[1:]) for row in predictions]
        verdict = verify_greedy(candidates, predictions, first)

        # 5. the accepted candidate tokens' K/V, from the rank that verified them; then the window and the pool
        owner = next((r for r, s in enumerate(shares) if verdict.winner in s.candidates), 0)
        kv_bytes = self._keep(p, shares[owner], owner, verdict, mine)
        ranks = tuple(
            RankStep(s.first, s.columns, s.candidates, row[0], row[1] / 1e6, 4 * width + kv_bytes * (r == owner))
            for r, (s, row) in enumerate(zip(shares, gathered))
        )
        return self.record(clock, x, p, branches, new_level, predictions, verdict, ranks=ranks)

    def _keep(self, p: int, share, owner: int, verdict, mine) -> int:
        """Keep x and the accepted candidate tokens in the cache: the owner keeps its rows and broadcasts them, the
        others keep x and append what they receive. Returns the bytes broadcast."""
        m = verdict.matched
        if self.rank == owner and m:
            self.lm.keep_in_cache(self.cache, p, mine.cache_rows(share.candidates.index(verdict.winner), m))
        else:
            self.lm.keep_in_cache(self.cache, p, [0])
        if not m:
            return 0
        layers = self.cache.layers
        if self.rank == owner:
            kept = [torch.stack([t[:, :, p + 1 : p + 1 + m] for t in (la.keys, la.values)]) for la in layers]
            rows = torch.stack(kept)
        else:
            k = layers[0].keys
            rows = torch.empty((len(layers), 2, k.shape[0], k.shape[1], m, k.shape[3]), dtype=k.dtype, device=k.device)
        dist.broadcast(rows.contiguous() if self.rank == owner else rows, src=owner)
        if self.rank != owner:
            for i, (keys, values) in enumerate(rows):
                self.cache.update(keys, values, i)
        return rows.numel() * rows.element_size()


def _all_gather(values: list[int], width: int, device: torch.device) -> list[list[int]]:
    """Every rank's `values` (at most `width` int32s each, padded), in rank order; on `device` (NCCL gathers on the
    rank's own GPU)."""
    mine = torch.full((width,), -1, dtype=torch.int32)
    mine[: len(values)] = torch.tensor(values, dtype=torch.int32)
    mine = mine.to(device)
    out = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(out, mine)
    return [o.tolist() for o in out]


def parallel_generate(lm: LM, prompt_ids: list[int], config: LookaheadConfig, max_new_tokens: int) -> MethodRun:
    """Decode with Lookahead Parallelism over the default process group (every rank calls this, with the same
    arguments, and gets the same run)."""
    check_request(lm, prompt_ids, max_new_tokens)
    return generate(ParallelLookahead(lm, list(prompt_ids), config), lm.eos_ids, max_new_tokens)


# -- launching ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    """What every rank decodes: the model to load (as `checkpoint.load_model` takes it) and, for each prompt (ids),
    each config, `max_new_tokens` tokens."""

    model: str | None
    device: str
    dtype: str | None
    cpu_kernels: str
    prompts: tuple[tuple[int, ...], ...]
    configs: tuple[LookaheadConfig, ...]
    max_new_tokens: int


def check_devices(devices: int, device: str) -> None:
    """Refuse what cannot run: more ranks than `MAX_DEVICES`, or NCCL ranks without a GPU each."""
    if not 2 <= devices <= MAX_DEVICES:
        raise ConfigError(f"devices: 2 to {MAX_DEVICES} for Lookahead Parallelism, not {devices}")
    if str(device).startswith("cuda") and devices > torch.cuda.device_count():
        raise ConfigError(
            f"{devices} NCCL ranks need {devices} GPUs, one each; this machine has {torch.cuda.device_count()}. "
            f"Run the ranks on CPUs (--device cpu, gloo) instead"
        )


def under_torchrun() -> bool:
    """Whether this process is one of the ranks `torchrun` started."""
    return "WORLD_SIZE" in os.environ and "RANK" in os.environ


def rank_device(device: str) -> str:
    """The device this rank decodes on: under torchrun with GPUs, the rank's own (LOCAL_RANK), else `device`."""
    from .checkpoint import pick_device

    gpu = pick_device(device).type == "cuda"
    return f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if gpu and under_torchrun() else device


def run_job(job: Job, devices: int, lm: LM | None = None) -> list[MethodRun]:
    """Run `job` on `devices` ranks and return rank 0's runs, prompt by prompt, config by config: joining the
    process group `torchrun` set up, else spawning the ranks on this machine. Under torchrun the rank decodes with
    `lm` where it is given (the caller's model, loaded on `rank_device`), not a second copy; spawned ranks each load
    their own (the caller's model stays in the parent, for what it does beside them)."""
    if under_torchrun():
        if (
            str(job.device).startswith("cuda")
            and int(os.environ.get("LOCAL_WORLD_SIZE", 1)) > torch.cuda.device_count()
        ):
            raise ConfigError("torchrun started more ranks on this machine than it has GPUs: NCCL needs one GPU each")
        return _rank(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "env://", job, lm)
    check_devices(devices, job.device)
    with socket.socket() as s:  # a free port for the rendezvous; nothing listens beyond this machine
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "runs.pickle")
        torch.multiprocessing.spawn(_spawned, args=(devices, f"tcp://127.0.0.1:{port}", job, out), nprocs=devices)
        with open(out, "rb") as f:
            return pickle.load(f)


def _spawned(rank: int, devices: int, init: str, job: Job, out: str) -> None:
    runs = _rank(rank, devices, init, job)
    if rank == 0:
        with open(out, "wb") as f:
            pickle.dump(runs, f)


def _rank(rank: int, devices: int, init: str, job: Job, lm: LM | None = None) -> list[MethodRun]:
    from .checkpoint import load_model

    gpu = str(job.device).startswith("cuda")
    local = int(os.environ.get("LOCAL_RANK", rank))  # this machine's GPU for the rank (torchrun sets it)
    if gpu:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        device_id = torch.device("cuda", local) if gpu else None
        dist.init_process_group(
            "nccl" if gpu else "gloo", init_method=init, rank=rank, world_size=devices, device_id=device_id
        )
    try:
        if not gpu:  # the ranks share this machine's cores
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // devices))
        if lm is None or str(lm.device) != (f"cuda:{local}" if gpu else str(torch.device(job.device))):
            lm = load_model(job.model, f"cuda:{local}" if gpu else job.device, job.dtype, cpu_kernels=job.cpu_kernels)
        return [parallel_generate(lm, list(ids), c, job.max_new_tokens) for ids in job.prompts for c in job.configs]
    finally:
        dist.destroy_process_group()
