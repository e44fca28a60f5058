"""The one scoring engine: text in, token log-probabilities out.

Every method of the project asks :class:`Scorer` for log-probabilities; none talks to
the model directly. A request is a (context, target) pair of strings. The engine
tokenizes context+target once (with character offsets), starts the sequence with
exactly one document-start token, and returns the log-prob of every target token given
everything before it.

Speed comes from a prefix tree (see :mod:`helpers.prefix_tree`): requests that share a
context (template prefixes, priming contexts, the options after one prompt) run it once
and reuse its key/value cache, expanded across the batch; optionally the common token
prefix of sentences (the two sentences of a minimal pair) is shared too. Vocabulary
logits are computed only at scored positions, log-softmax runs in float32 and sums in
float64, batches are formed by a token budget after sorting by length, and on CUDA
out-of-memory a batch is halved and the run goes on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from .models import LoadedModel, load
from .prefix_tree import Node, build_tree

Share = Literal["none", "context", "prefix"]
# Logit rows computed at once: bounds memory at rows x vocabulary floats.
LOGIT_ELEMENTS = 1 << 25


@dataclass(frozen=True)
class Request:
    """Score ``target`` given ``context`` (the context may be empty, the target not).

    By default context+target is tokenized as one text (a token may straddle the
    boundary). ``separate=True`` tokenizes them apart and joins the ids: the target is
    read exactly at the position after the context's own tokens (a prompt ending in a
    space keeps its space token), as a constrained decoder sees it.
    """

    context: str
    target: str
    separate: bool = False


@dataclass
class Scored:
    """Log-probs of a request's target tokens (and of its context tokens if asked)."""

    token_ids: list[int]
    tokens: list[str]
    logprobs: np.ndarray  # float64, one per target token
    start_token: str  # the document-start policy, e.g. "bos:<s>", "eos:<|endoftext|>", "none"
    context_logprobs: np.ndarray | None = None  # tokens between the start token and the target
    logits: np.ndarray | None = None  # raw (unnormalised) logit of each target token

    @property
    def n_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def total(self) -> float:
        return float(np.sum(self.logprobs, dtype=np.float64))


@dataclass(frozen=True)
class Encoded:
    ids: tuple[int, ...]  # the whole sequence, start token included
    first: int  # index of the first scored target token


@dataclass
class OptionReadout:
    """Log-probs of each option after one prompt, and the token form that was scored."""

    logprobs: dict[str, float]
    forms: dict[str, list[str]]  # option -> the tokens scored (e.g. ["ĠYes"])
    n_tokens: dict[str, int]
    logits: dict[str, float]  # raw logit of each option's first token at the answer position

    def best(self) -> str:
        """The option with the highest log-prob (ties go to the first option)."""
        return max(self.logprobs, key=self.logprobs.get)


def _check_text(value, what: str, allow_empty: bool) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}: {value!r:.80}")
    if not allow_empty and not value:
        raise ValueError(f"{what} is empty: there is nothing to score")
    return value


class Scorer:
    """Score text with a causal LM.

    ``start="auto"`` starts every sequence with the tokenizer's BOS, else its EOS, so the
    first word is scored; a literal token string forces that token. ``minicons=True``
    reproduces minicons' IncrementalLMScorer: no start token added by the engine (the
    tokenizer adds its own special tokens, if any), first token unscored.
    ``share`` chooses the key/value reuse: "none" (plain path), "context" (requests with
    the same context tokens run them once) or "prefix" (the default: also the longest
    common token prefix of sentences, e.g. the two sentences of a pair). Results agree
    across modes within float32 rounding.
    """

    def __init__(self, loaded: LoadedModel, *, start: str | None = None, minicons: bool = False,
                 share: Share = "prefix", token_budget: int | None = None, batch_size: int | None = None,
                 progress: bool = True, min_shared: int = 3, kv_budget_bytes: int | None = None):
        if not isinstance(loaded, LoadedModel):
            raise TypeError(f"Scorer takes a LoadedModel (helpers.models.load, or LoadedModel.wrap(model, tokenizer)), "
                            f"got {type(loaded).__name__}")
        model, tokenizer = loaded.model, loaded.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError("the engine needs a fast tokenizer (it reads character offsets)")
        if share not in ("none", "context", "prefix"):
            raise ValueError(f"share must be 'none', 'context' or 'prefix', got {share!r}")
        self.loaded, self.model, self.tokenizer = loaded, model, tokenizer
        self.device = next(model.parameters()).device
        # Tokens per forward: on CPU mid-sized batches run fastest (measured by
        # benchmarks/bench_scoring.py); on a GPU large ones do.
        token_budget = token_budget or (32768 if self.device.type == "cuda" else 2048)
        self.share, self.token_budget, self.batch_size = share, int(token_budget), batch_size
        # Cached keys/values held at once (shared prefixes waiting for their continuations).
        self.kv_budget_bytes = kv_budget_bytes or (8 if self.device.type == "cuda" else 2) * 2**30
        self.progress, self.min_shared, self.minicons = progress, int(min_shared), minicons
        start = start or loaded.start_token
        self.start_id, self.start_policy = self._start_token(start, minicons)
        self.head = model.get_output_embeddings()
        self.body = model.base_model
        self.max_positions = self._max_positions()
        if not self._check_split_head():
            raise NotImplementedError(
                f"{type(model).__name__} transforms its logits after the output embedding (scaling or "
                "soft-capping); the engine computes logits as lm_head(hidden) only and would be wrong here")
        self._can_share = self._check_cache_sharing()
        self.kv_bytes_per_token = self._kv_bytes_per_token()
        self.forward_calls = 0  # forward passes run so far (for tests and benchmarks)
        self.tokens_run = 0  # real (not padding) tokens fed to the model so far

    # ---------------------------------------------------------------- setup
    def _start_token(self, start: str, minicons: bool) -> tuple[int | None, str]:
        tok = self.tokenizer
        if minicons:
            return None, "minicons:tokenizer-default"
        if start == "auto":
            for kind, token in (("bos", tok.bos_token), ("eos", tok.eos_token)):
                if token is not None:
                    return tok.convert_tokens_to_ids(token), f"{kind}:{token}"
            raise ValueError("the tokenizer has neither a BOS nor an EOS token; pass start=<token string>")
        token_id = tok.convert_tokens_to_ids(start)
        if token_id is None or token_id == tok.unk_token_id and start != tok.unk_token:
            raise ValueError(f"start token {start!r} is not in the tokenizer's vocabulary")
        return token_id, f"token:{start}"

    def _max_positions(self) -> int | None:
        cfg = self.model.config
        for key in ("max_position_embeddings", "n_positions", "n_ctx"):
            value = getattr(cfg, key, None)
            if isinstance(value, int):
                return value
        return None

    @torch.no_grad()
    def _check_split_head(self) -> bool:
        """Whether lm_head(base_model(x)) equals the model's logits (then logits are computed
        only where scored); else the full forward is used."""
        ids = torch.tensor([[self.start_id if self.start_id is not None else 0] + [1, 2, 3]], device=self.device)
        full = self.model(input_ids=ids).logits.float()
        split = self.head(self.body(input_ids=ids).last_hidden_state).float()
        return full.shape == split.shape and torch.allclose(full, split, atol=1e-3, rtol=1e-3)

    def _kv_bytes_per_token(self) -> int:
        """Bytes of cached keys and values per token, from the model's configuration."""
        cfg = self.model.config.get_text_config() if hasattr(self.model.config, "get_text_config") else self.model.config
        layers = getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer", None) or 1
        hidden = getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", None) or 1
        heads = getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_head", None) or 1
        kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
        head_dim = getattr(cfg, "head_dim", None) or hidden // heads
        size = torch.finfo(self.model.dtype).bits // 8 if self.model.dtype.is_floating_point else 2
        return max(1, int(layers * 2 * kv_heads * head_dim * size))

    def _check_cache_sharing(self) -> bool:
        """Key/value reuse needs full (not sliding-window) caches."""
        from transformers import DynamicCache

        try:
            cache = DynamicCache(config=self.model.config)
            return not any(getattr(cache, "is_sliding", []) or [])
        except Exception:  # noqa: BLE001 - a model without cache classes: plain path only
            return False

    # ---------------------------------------------------------------- encoding
    def encode(self, request: Request) -> Encoded:
        """Token ids of context+target with one start token, and where the target begins.

        A token that straddles the context/target boundary (e.g. " word" after a context
        ending in a space) belongs to the target.
        """
        return self.encode_many([request])[0]

    def encode_many(self, requests: Sequence[Request]) -> list[Encoded]:
        """:meth:`encode` for many requests, tokenized in one batch call."""
        for i, r in enumerate(requests):
            if not isinstance(r, Request):
                raise TypeError(f"request {i} is a {type(r).__name__}; build requests with Request(context, target)")
            _check_text(r.context, "context", allow_empty=True)
            _check_text(r.target, "target", allow_empty=False)
        # minicons lets the tokenizer add its own special tokens; otherwise we add the start token.
        batch = self.tokenizer([r.context + r.target for r in requests], add_special_tokens=self.minicons,
                               return_offsets_mapping=True)
        apart = [i for i, r in enumerate(requests) if r.separate]
        if apart:
            ctx = self.tokenizer([requests[i].context for i in apart], add_special_tokens=self.minicons)["input_ids"]
            tgt = self.tokenizer([requests[i].target for i in apart], add_special_tokens=False)["input_ids"]
            for i, c, t in zip(apart, ctx, tgt):
                batch["input_ids"][i] = list(c) + list(t)
                n_ctx = len(c)
                batch["offset_mapping"][i] = [(0, 0)] * n_ctx + [(len(requests[i].context) + 1,) * 2] * len(t)
        out = []
        for r, ids, offsets in zip(requests, batch["input_ids"], batch["offset_mapping"]):
            ids = list(ids)
            first = next((i for i, (_, end) in enumerate(offsets) if end > len(r.context)), None)
            if first is None:
                raise ValueError(f"target {r.target!r} tokenizes to no tokens after context {r.context[-40:]!r}")
            if self.start_id is not None and (not ids or ids[0] != self.start_id):
                ids.insert(0, self.start_id)
                first += 1
            first = max(first, 1)  # the very first token has nothing before it (minicons mode)
            if self.max_positions and len(ids) > self.max_positions:
                raise ValueError(f"request of {len(ids)} tokens exceeds the model's {self.max_positions} positions "
                                 f"(target begins {r.target[:40]!r}); shorten the context")
            out.append(Encoded(tuple(ids), first))
        return out

    # ---------------------------------------------------------------- scoring
    def score(self, requests: Sequence[Request], with_context: bool = False, desc: str = "scoring") -> list[Scored]:
        """Score every request; results in input order."""
        requests = list(requests)
        if not requests:
            return []
        encoded = self.encode_many(requests)
        token_lp = self.token_logprobs(encoded, with_context=with_context, desc=desc)
        out = []
        for enc, (lp, raw) in zip(encoded, token_lp):
            target_ids = list(enc.ids[enc.first:])
            ctx_from = 0 if self.start_id is None else 1
            out.append(Scored(
                token_ids=target_ids,
                tokens=self.tokenizer.convert_ids_to_tokens(target_ids),
                logprobs=lp[enc.first:],
                start_token=self.start_policy,
                context_logprobs=lp[max(ctx_from, 1):enc.first] if with_context else None,
                logits=raw[enc.first:],
            ))
        return out

    def score_texts(self, texts: Iterable[str], desc: str = "scoring") -> list[Scored]:
        """Score sentences on their own (empty context)."""
        return self.score([Request("", t) for t in texts], desc=desc)

    def next_token(self, prompts: Sequence[str], options: Sequence[str], separate: bool = False,
                   desc: str = "readout") -> list[OptionReadout]:
        """Log-prob of each option after each prompt.

        By default each option is scored as the continuation of its prompt text, so the
        token form that naturally follows is used ("Answer: " + "Yes" reads " Yes" after
        "Answer:"). ``separate=True`` keeps the prompt's own tokens (a trailing space stays
        a token) and reads the option's own tokens after them, the position a constrained
        decoder generates at. Multi-token options are summed. One-token options cost no
        extra forward pass: they are read from the prompt's last position.
        """
        options = list(options)
        if not options:
            raise ValueError("give at least one option")
        for o in options:
            _check_text(o, "option", allow_empty=False)
        requests = [Request(p, o, separate) for p in prompts for o in options]
        scored = self.score(requests, desc=desc)
        out = []
        for i in range(len(prompts)):
            chunk = scored[i * len(options):(i + 1) * len(options)]
            out.append(OptionReadout(
                logprobs={o: s.total for o, s in zip(options, chunk)},
                forms={o: s.tokens for o, s in zip(options, chunk)},
                n_tokens={o: s.n_tokens for o, s in zip(options, chunk)},
                logits={o: float(s.logits[0]) for o, s in zip(options, chunk)},
            ))
        return out

    # ---------------------------------------------------------------- engine core
    def token_logprobs(self, encoded: Sequence[Encoded], with_context: bool = False,
                       desc: str = "scoring") -> list[tuple[np.ndarray, np.ndarray]]:
        """For each sequence, (log p(token_i | tokens_<i), raw logit of token_i) for i >= 1 at
        the needed positions (target tokens, and context tokens if ``with_context``); index 0
        and unneeded entries are NaN."""
        share = self.share if self._can_share else "none"
        need_from = [1 if with_context else e.first for e in encoded]
        roots = build_tree(encoded, need_from, share=share, min_shared=self.min_shared)
        results: list[np.ndarray | None] = [None] * len(encoded)
        bar = tqdm(total=len(encoded), desc=desc, unit="seq", disable=not self.progress, leave=False)
        try:
            self._run_nodes(roots, results, bar)
        finally:
            bar.close()
        return results  # type: ignore[return-value]

    def _chunks(self, nodes: list[Node]) -> Iterable[list[Node]]:
        """Groups of sibling-level nodes whose cached keys/values fit the KV budget together."""
        limit = max(1, self.kv_budget_bytes // self.kv_bytes_per_token)
        chunk, size = [], 0
        for node in sorted(nodes, key=lambda n: (n.offset, len(n.ids))):
            cost = node.end if node.children else 0
            if chunk and size + cost > limit:
                yield chunk
                chunk, size = [], 0
            chunk.append(node)
            size += cost
        if chunk:
            yield chunk

    def _run_nodes(self, nodes: list[Node], results: list, bar) -> None:
        """Run ``nodes`` (their parents' caches are ready) chunk by chunk, each chunk's
        descendants before the next chunk, so that the caches held stay within budget."""
        for group in self._chunks(nodes):
            runnable = [n for n in group if n.needs_forward]
            for batch in self._batches(runnable):
                self._forward_with_retry(batch)
            for node in group:
                node.finish(results, bar)
            children = [child for node in group for child in node.children]
            if children:
                self._run_nodes(children, results, bar)
            for node in group:
                node.kv = None

    def _batches(self, nodes: list[Node]) -> Iterable[list[Node]]:
        nodes = sorted(nodes, key=lambda n: (n.offset, len(n.ids)))
        batch: list[Node] = []
        seg_max = past_max = 0
        for node in nodes:
            s, p = max(seg_max, len(node.ids)), max(past_max, node.offset)
            rows = len(batch) + 1
            too_big = batch and (rows * s > self.token_budget or rows * (s + p) > 4 * self.token_budget
                                 or (self.batch_size and rows > self.batch_size))
            if too_big:
                yield batch
                batch, s, p = [], len(node.ids), node.offset
            batch.append(node)
            seg_max, past_max = s, p
        if batch:
            yield batch

    def _forward_with_retry(self, batch: list[Node]) -> None:
        try:
            self._forward(batch)
        except torch.cuda.OutOfMemoryError:
            if len(batch) == 1:
                raise
            torch.cuda.empty_cache()
            self.token_budget = max(64, self.token_budget // 2)
            half = len(batch) // 2
            self._forward_with_retry(batch[:half])
            self._forward_with_retry(batch[half:])

    @torch.inference_mode()
    def _forward(self, batch: list[Node]) -> None:
        """Run the segments of ``batch`` (each after its parent's cached keys/values)."""
        from transformers import DynamicCache

        dev = self.device
        rows = len(batch)
        seg = max(len(n.ids) for n in batch)
        past = max(n.offset for n in batch)
        pad = self.tokenizer.pad_token_id or 0
        input_ids = torch.full((rows, seg), pad, dtype=torch.long)
        mask = torch.zeros((rows, past + seg), dtype=torch.long)
        positions = torch.zeros((rows, seg), dtype=torch.long)
        for r, n in enumerate(batch):
            input_ids[r, :len(n.ids)] = torch.tensor(n.ids)
            mask[r, :n.offset] = 1
            mask[r, past:past + len(n.ids)] = 1
            positions[r, :len(n.ids)] = n.offset + torch.arange(len(n.ids))
            positions[r, len(n.ids):] = n.end - 1  # padding: any valid position (it is masked)
        cache = None
        if past:
            cache = DynamicCache(ddp_cache_data=self._gather_cache(batch, past))
        keep = any(n.children for n in batch)
        self.forward_calls += 1
        self.tokens_run += sum(len(n.ids) for n in batch)
        out = self.body(input_ids=input_ids.to(dev), attention_mask=mask.to(dev), position_ids=positions.to(dev),
                        past_key_values=cache, use_cache=keep or cache is not None)
        hidden = out.last_hidden_state
        if keep:
            kv = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
            for r, n in enumerate(batch):
                if n.children:
                    n.kv = [(torch.cat([k[r, :, :n.offset], k[r, :, past:past + len(n.ids)]], dim=1),
                             torch.cat([v[r, :, :n.offset], v[r, :, past:past + len(n.ids)]], dim=1))
                            for k, v in kv]
        self._read_logprobs(batch, hidden)

    def _gather_cache(self, batch: list[Node], past: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        parents = [n.parent for n in batch]
        unique = list(dict.fromkeys(id(p) for p in parents))
        if len(unique) == 1:  # one shared context: expand without copying
            return [(k.unsqueeze(0).expand(len(batch), -1, -1, -1)[:, :, :past],
                     v.unsqueeze(0).expand(len(batch), -1, -1, -1)[:, :, :past]) for k, v in parents[0].kv]
        index = {pid: i for i, pid in enumerate(unique)}
        by_id = {id(p): p for p in parents}
        rows = torch.tensor([index[id(p)] for p in parents], device=self.device)
        layers = []
        for layer in range(len(parents[0].kv)):
            ks, vs = [], []
            for pid in unique:
                k, v = by_id[pid].kv[layer]
                fill = past - k.shape[1]
                ks.append(torch.nn.functional.pad(k, (0, 0, 0, fill)))
                vs.append(torch.nn.functional.pad(v, (0, 0, 0, fill)))
            layers.append((torch.stack(ks).index_select(0, rows), torch.stack(vs).index_select(0, rows)))
        return layers

    def _read_logprobs(self, batch: list[Node], hidden: torch.Tensor) -> None:
        """Log-probs at the needed positions: own tokens from this pass, and the first token
        of each child from the last position."""
        rows, cols, targets, sinks = [], [], [], []
        for r, n in enumerate(batch):
            for j in n.own_positions():  # entry j of the node is predicted at position j-1
                rows.append(r), cols.append(j - 1), targets.append(n.ids[j]), sinks.append((n, j))
            for child in n.children:
                if child.needs_first:
                    rows.append(r), cols.append(len(n.ids) - 1), targets.append(child.ids[0]), sinks.append((child, 0))
        if not rows:
            return
        selected = hidden[torch.tensor(rows, device=hidden.device), torch.tensor(cols, device=hidden.device)]
        values, raw = self._logprob_of(selected, torch.tensor(targets, device=hidden.device))
        for (node, j), value, logit in zip(sinks, values.tolist(), raw.tolist()):
            node.lp[j] = value
            node.raw[j] = logit

    def _logprob_of(self, hidden: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(log softmax(lm_head(hidden))[target], lm_head(hidden)[target]), float32, in row chunks."""
        vocab = self.head.weight.shape[0]
        step = max(1, LOGIT_ELEMENTS // vocab)
        out, raw = [], []
        for i in range(0, hidden.shape[0], step):
            logits = self.head(hidden[i:i + step]).float()
            picked = logits.gather(1, targets[i:i + step, None])[:, 0]
            # log_softmax(x)[t] = x[t] - logsumexp(x), without writing the whole normalised row
            out.append(picked - torch.logsumexp(logits, dim=-1))
            raw.append(picked)
        return torch.cat(out).double().cpu(), torch.cat(raw).double().cpu()


def scorer_for(name_or_path, **kwargs) -> Scorer:
    """Load a model by name (see helpers.models) and wrap it in a Scorer."""
    load_kw = {k: kwargs.pop(k) for k in ("quant", "dtype", "device_map", "revision") if k in kwargs}
    return Scorer(load(name_or_path, **load_kw), **kwargs)

