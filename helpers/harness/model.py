"""The engine as an lm-evaluation-harness model, registered as ``engine``.

lm-eval hands its model requests as text; this model tokenizes them exactly as lm-eval's own
``hf`` model does (:class:`lm_eval.api.model.TemplateLM`'s encoding, with ``hf``'s
``tok_encode``: the same ids, the same prefix token for an empty context, the same left
truncation to ``max_length + 1`` tokens) and scores the ids with the engine
(the scorer contract's ``score_continuations``, which cuts them to hf's windows; an encoder-decoder's
context goes to its encoder and its continuation to its decoder, as hf's seq2seq model feeds them): every request of a call is planned
at once, so a context shared by several choices (a multiple-choice task, a prompt's answer
options) runs once, and a sentence's opening words shared with its pair's run once where the
cost model says it pays. Whether the continuation is the greedy one is read from the same
pass (the highest logit at each position read).

``loglikelihood_rolling`` cuts a long text into lm-eval's own rolling windows
(:func:`lm_eval.utils.get_rolling_token_windows`; one window where the text fits) and sums
them. ``generate_until`` runs transformers' ``generate`` with lm-eval's stop sequences, one
request at a time (the engine shares nothing there).

Model arguments (``--model_args``): ``pretrained`` (a registry name, a folder, a Hugging Face
id or a GGUF file, as the notebooks take them; or a loaded :class:`helpers.models.LoadedModel`),
the notebooks' loading and engine settings ``quant``, ``dtype``, ``revision``, ``share``,
``token_budget``, ``device_map``, ``max_memory`` and ``offload_folder``, and ``hf``'s
``max_length``, ``add_bos_token`` and ``prefix_token_id``. lm-eval's ``--batch_size`` caps
the sequences of a forward pass where it is a number above 1; "auto" and 1 (its default)
leave the batches to the engine's token budget.
"""
from __future__ import annotations

import logging

import torch
from lm_eval.api.model import TemplateLM
from lm_eval.models.utils import (_add_special_kwargs, handle_stop_sequences, has_bos_prefix, normalize_gen_kwargs,
                                  postprocess_generated_text, resolve_max_length)
from lm_eval.models.utils_hf import stop_sequences_criteria
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window
from tqdm import tqdm

from ..engine.kinds import scorer_for
from ..models import LoadedModel
from ..models.loading import check_loadable
from .processes import SharedAcrossProcesses, launched
from ..settings import METHOD_SETTINGS, TABLE, Settings

log = logging.getLogger(__name__)

# the notebooks' settings a model argument may set (the others are fixed by lm-eval's encoding: the start token)
SETTING_ARGUMENTS = ("quant", "dtype", "revision", "share", "token_budget", "device_map", "max_memory",
                     "offload_folder")
# the notebooks' other settings, each refused with the reason
REFUSED = {**{name: "a method setting of the notebooks' runs: an lm-eval task decides its prompt and how an answer "
                    "is scored" for name in METHOD_SETTINGS},
           "start": "lm-eval's encoding decides the start token: use add_bos_token or prefix_token_id",
           "max_tokens": "lm-eval cuts a request to max_length from the left, keeping its continuation: give "
           "max_length",
           "batch_size": "give lm-eval's --batch_size", "masked_variant": "a masked LM's, and the backend scores causal "
           "LMs and encoder-decoders", "progress": "lm-eval draws its own progress bars"}
DEFAULT_MAX_LENGTH = 2048  # hf's, where neither the configuration nor the tokenizer names one


def _batch_cap(batch_size) -> int | None:
    """lm-eval's --batch_size as the engine's cap on sequences per pass: None (the token budget
    decides) for "auto", "auto:N" and 1, lm-eval's default; a whole number above 1 caps it."""
    if batch_size is None or str(batch_size).startswith("auto"):
        return None
    try:
        size = int(batch_size)
    except ValueError:
        raise ValueError(f"batch_size={batch_size!r}: use 'auto' or a whole number") from None
    if size < 1:
        raise ValueError(f"batch_size={batch_size!r}: use 'auto' or a whole number > 0")
    return None if size == 1 else size


def _device_map(device: str | None, given):
    """lm-eval's --device as a placement, unless ``device_map`` was given: "cpu" keeps the model
    on the CPU and "cuda:N" (N > 0) puts it on that GPU; "cuda", "cuda:0" (lm-eval's default) or
    none leave it to the loader, as the notebooks do (the GPUs, spread where one is too small;
    the CPU where there is none: hf also falls back to the CPU there)."""
    if given is not None:
        return given
    if device in (None, "cuda", "cuda:0"):
        return "auto"
    if device == "cpu":
        return {"": "cpu"}
    if device.startswith("cuda:") and device[5:].isdigit():
        if int(device[5:]) < torch.cuda.device_count():
            return {"": device}
        log.warning("device %s is not available here: the loader places the model", device)
        return "auto"
    raise ValueError(f"device={device!r}: the engine runs on 'cpu', 'cuda' or 'cuda:N'")


class EngineLM(SharedAcrossProcesses, TemplateLM):
    """lm-eval's model interface (``loglikelihood``, ``loglikelihood_rolling``,
    ``generate_until``) over the engine's causal or encoder-decoder scorer; see the module's docstring."""

    backend = "causal"  # "seq2seq" for an encoder-decoder: lm-eval then encodes context and continuation apart

    def __init__(self, pretrained, *, max_length: int | None = None, add_bos_token: bool | None = None,
                 prefix_token_id: int | None = None, batch_size=None, max_batch_size: int | None = None,
                 device: str | None = None, progress: bool = True, trust_remote_code: bool = False, **settings):
        # max_batch_size: lm-eval passes it for its own "auto" batch search; the token budget bounds the engine's
        super().__init__()
        unknown = sorted(set(settings) - set(SETTING_ARGUMENTS))
        if unknown:
            why = {name: REFUSED.get(name, "a setting the backend does not take: lm-eval's encoding and tasks "
                                           "decide it" if name in TABLE else "not a setting") for name in unknown}
            raise ValueError(f"the engine takes no model argument {'; '.join(f'{k!r} ({v})' for k, v in why.items())}: "
                             f"it takes pretrained, {', '.join(SETTING_ARGUMENTS)}, max_length, add_bos_token, "
                             "prefix_token_id and trust_remote_code")
        self.requests_scored = 0
        self.accelerator = launched()  # accelerate launch: this process's rank, share of the documents and device
        if self.accelerator is not None:
            self._rank, self._world_size = self.accelerator.process_index, self.accelerator.num_processes
            self._device = self.accelerator.device
            settings.setdefault("device_map", {"": str(self.accelerator.device)})
        settings["device_map"] = _device_map(device, settings.get("device_map"))
        if isinstance(pretrained, LoadedModel) and settings["device_map"] == "auto":
            del settings["device_map"]  # placed already
        self.settings = Settings(progress=bool(progress), batch_size=_batch_cap(batch_size), **settings)
        if trust_remote_code and not isinstance(pretrained, LoadedModel):  # the model's own code, as the user asks
            loading = self.settings.load_arguments()
            pretrained = check_loadable(pretrained, loading["quant"], loading["revision"], trust_remote_code=True)
        self.scorer = scorer_for(pretrained, self.settings)
        if "continuation" not in self.scorer.features:
            raise ValueError(f"{self.scorer.name} is a masked model: the lm-eval backend scores causal LMs and "
                             "encoder-decoders (a masked LM gives no continuation log-likelihood and generates nothing; "
                             "score it with the notebooks' pseudo-log-likelihood)")
        # hf's encoding: an encoder-decoder's context and continuation apart (lm-eval reads ``backend``)
        self.backend = "seq2seq" if "source" in self.scorer.features else "causal"
        self.tokenizer = self.scorer.tokenizer
        self.add_bos_token, self.custom_prefix_token_id = add_bos_token, prefix_token_id
        # hf's rule, once: the configuration's length, else the tokenizer's (read for every request)
        self.max_length = int(max_length) if max_length else \
            resolve_max_length(self.scorer.config, self.tokenizer, default=DEFAULT_MAX_LENGTH)
        self._prefix_text = self.tokenizer.decode(self.prefix_token_id)  # a text that starts with it gets no BOS

    # ------------------------------------------------------------------ what lm-eval reads
    @property
    def eot_token_id(self) -> int:
        return self.tokenizer.eos_token_id

    @property
    def prefix_token_id(self) -> int:
        """The token before a continuation with an empty context: hf's (BOS, else EOS)."""
        if self.custom_prefix_token_id is not None:
            return self.custom_prefix_token_id
        if self.tokenizer.bos_token_id is not None:
            return self.tokenizer.bos_token_id
        return self.tokenizer.eos_token_id

    @property
    def max_gen_toks(self) -> int:
        return 256

    @property
    def tokenizer_name(self) -> str:
        return self.tokenizer.name_or_path.replace("/", "__")

    def tok_encode(self, string: str, add_special_tokens: bool | None = None, left_truncate_len: int | None = None,
                   **kwargs) -> list[int]:
        """Token ids as hf's ``tok_encode`` makes them (the tokenizer's special tokens unless the
        text starts with the prefix token or ``add_bos_token`` says otherwise)."""
        special = _add_special_kwargs(add_special_tokens, self.add_bos_token)
        if add_special_tokens is None and has_bos_prefix(string, self._prefix_text):
            special["add_special_tokens"] = False
        ids = self.tokenizer.encode(string, **special)
        return ids[-left_truncate_len:] if left_truncate_len else ids

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        return self.tokenizer.apply_chat_template(chat_history, tokenize=False,
                                                  add_generation_prompt=add_generation_prompt,
                                                  continue_final_message=not add_generation_prompt)

    def get_model_info(self) -> dict:
        """What lm-eval's results record of the model: the weights, the engine's settings, the
        number of processes and how many requests this process (rank 0) scored."""
        return {**{k: v for k, v in self.scorer.provenance().items() if v is not None},
                "engine_share": self.settings.share, "engine_share_used": self.scorer.record()["share_used"],
                "engine_token_budget": self.scorer.record()["token_budget"],
                "engine_processes": self.world_size, "engine_requests_scored": self.requests_scored}

    # ------------------------------------------------------------------ scoring
    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        self.requests_scored += len(requests)  # this process's share (accelerate launch: its rank's documents)
        for i, request in enumerate(requests):
            context, continuation = request.args
            if not isinstance(continuation, str) or not continuation:
                raise ValueError(f"request {i} ({_where(request)}) has an empty continuation {continuation!r}: there is "
                                 "nothing to score; check the task's doc_to_choice / doc_to_target")
        return super().loglikelihood(requests, disable_tqdm=disable_tqdm)

    def _loglikelihood_tokens(self, requests, disable_tqdm: bool = False, **kwargs) -> list[tuple[float, bool]]:
        """(sum of the continuation's log-probs, whether it is greedy) of each ((context,
        continuation), context ids, continuation ids), all planned together."""
        for strings, context, continuation in requests:
            self._checked(context, continuation, strings)
        targets = [list(continuation)[-self.max_length:] for _, _, continuation in requests]
        scored = self.scorer.score_continuations([(context, continuation) for _, context, continuation in requests],
                                                 self.max_length, greedy=True, desc="Running loglikelihood requests")
        out = []
        for (strings, _, _), target, (logprobs, greedy) in zip(requests, targets, scored):
            answer = (float(logprobs.sum()), bool((greedy == target).all()))
            out.append(answer)
            if strings is not None:  # rolling windows are cached by the text, in loglikelihood_rolling
                self.cache_hook.add_partial("loglikelihood", strings, answer)
        return out

    def _checked(self, context: list[int], continuation: list[int], strings) -> None:
        """A clear error for a request with nothing to score or a continuation longer than the window."""
        if not continuation:
            raise ValueError(f"the continuation of {_shown(strings)} tokenizes to no tokens: there is nothing to score")
        if not context:
            raise ValueError(f"{_shown(strings)} has no context token; lm-eval gives an empty context the prefix token")
        if len(continuation) > self.max_length:
            raise ValueError(f"the continuation of {_shown(strings)} has {len(continuation)} tokens, more than the "
                             f"model's max_length of {self.max_length}: it cannot be scored in one window")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        """Each text's log-likelihood over lm-eval's rolling windows of ``max_length`` tokens
        (one window where it fits), every window of every text scored in one plan."""
        windows, owner = [], []
        for i, request in enumerate(requests):
            (text,) = request.args
            ids = self.tok_encode(text)
            if not ids:
                raise ValueError(f"request {i} ({_where(request)}): the text {text[:40]!r} tokenizes to no tokens")
            for context, continuation in map(make_disjoint_window, get_rolling_token_windows(
                    token_list=ids, prefix_token=self.prefix_token_id, max_seq_len=self.max_length, context_len=1)):
                windows.append((None, context, continuation))
                owner.append(i)
        totals = [0.0] * len(requests)
        for i, (logprob, _) in zip(owner, self._loglikelihood_tokens(windows, disable_tqdm=disable_tqdm)):
            totals[i] += logprob
        for request, total in zip(requests, totals):
            self.cache_hook.add_partial("loglikelihood_rolling", request.args, total)
        return totals

    # ------------------------------------------------------------------ generation
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        """Greedy (or the task's sampling) generation until a stop sequence, one request at a time."""
        eos = self.tokenizer.decode(self.eot_token_id, skip_special_tokens=False)
        out = []
        for request in tqdm(requests, disable=disable_tqdm, desc="Running generate_until requests"):
            context, gen_kwargs = request.args
            kwargs = normalize_gen_kwargs(gen_kwargs, self.max_gen_toks)
            until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
            max_gen_toks = kwargs.pop("max_gen_toks")
            if max_gen_toks >= self.max_length:
                raise ValueError(f"max_gen_toks={max_gen_toks} leaves no room for the context in max_length "
                                 f"{self.max_length}")
            room = self.max_length - (max_gen_toks if self.backend == "causal" else 0)  # hf's: a seq2seq source its whole window
            ids = self.tok_encode(context, left_truncate_len=room)
            if kwargs.get("temperature", 0.0) == 0.0 and not kwargs.get("do_sample"):
                kwargs.pop("temperature", None)
                kwargs["do_sample"] = False
            new = self.scorer.generate(ids, max_gen_toks,
                                       stopping_criteria=stop_sequences_criteria(self.tokenizer, until, len(ids), 1),
                                       pad_token_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None
                                       else self.eot_token_id, **kwargs)
            text = postprocess_generated_text(self.tokenizer.decode(new, skip_special_tokens=True), until, None)
            out.append(text)
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), text)
        return out


def _where(request) -> str:
    """A request's task and document, as lm-eval's Instance names them."""
    return f"task {getattr(request, 'task_name', None)!r}, document {getattr(request, 'doc_id', None)}"


def _shown(strings) -> str:
    """A (context, continuation) pair for an error message, cut short."""
    if strings is None:
        return "a rolling window"
    context, continuation = strings
    return f"context {context[-40:]!r} + continuation {continuation[:40]!r}"
