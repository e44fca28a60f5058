"""Templates and prompts as data: Ide et al. (2024) and Hu & Levy (2023).

Ide et al. templates are addressed as (method, language, id, style):
  - "single": in-template readout, one placeholder ``{sentence}``;
  - "compar": comparative readout, ``{sentence}`` (slot A) and ``{other_sentence}`` (slot B);
  - "yn" / "ab": prompts with a system message and a user template (``{sentence}``, or
    ``{sentence_a}``/``{sentence_b}``), style "base" (ending in "\\nAnswer: ") or "chat";
  - "yn-en": CLiMP's Yes/No prompts written in English.
English templates serve BLiMP-style English data, Chinese ones CLiMP-style data.
A user's own template file in the same format loads with :func:`load_template_file`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..data.sources import DataSource, resolve

IDE_DIR = "ide2024-templates"
IDE_TEMPLATE_IDS = (1, 2, 3, 4, 5)  # Ide et al.'s templates of every method: the one place they are listed
HU_LEVY_PROMPTS = "hu-levy-2023/PROMPTS_transcribed.md"
_LANG_SET = {"en": "blimp", "zh": "climp"}
METHODS = ("single", "compar", "yn", "ab", "yn-en")


@dataclass(frozen=True)
class Template:
    method: str
    language: str
    id: int | str
    style: str  # "base", "chat", or "" for readout templates
    text: str = ""  # readout templates
    system: str = ""  # prompts
    user: str = ""  # prompts
    source: str = ""

    @property
    def key(self) -> str:
        style = f"-{self.style}" if self.style == "chat" else ""
        return f"{self.method}{style}_{self.id}"

    def fill(self, **slots) -> str:
        """The template text (or user message) with its placeholders filled."""
        return (self.text or self.user).format(**slots)

    def split(self, slot: str = "sentence") -> tuple[str, str]:
        """(text before ``{slot}``, text after it) of a readout template, other slots unfilled."""
        body = self.text or self.user
        if body.count("{" + slot + "}") != 1:
            raise ValueError(f"template {self.key} must contain {{{slot}}} exactly once")
        before, after = body.split("{" + slot + "}")
        return before, after


def _check_placeholders(method: str, body: str, where: str) -> None:
    need = {"single": ["sentence"], "compar": ["sentence", "other_sentence"], "yn": ["sentence"],
            "yn-en": ["sentence"], "ab": ["sentence_a", "sentence_b"]}[method]
    found = re.findall(r"{(\w+)}", body)
    if sorted(found) != sorted(need):
        raise ValueError(f"{where}: a {method!r} template needs the placeholders {need}, found {found}")


def load_template_file(path: str | Path, method: str, language: str = "en", id: int | str = "custom",
                       style: str = "base") -> Template:
    """A template from a file in Ide et al.'s format: .txt for readouts, .json for prompts
    (``{"system_prompt": ..., "user_template": ...}``)."""
    path = Path(path)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method in ("single", "compar"):
        text = path.read_text(encoding="utf-8")
        _check_placeholders(method, text, str(path))
        return Template(method, language, id, "", text=text, source=str(path))
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        system, user = raw["system_prompt"], raw["user_template"]
    except (json.JSONDecodeError, KeyError) as err:
        raise ValueError(f"{path}: a prompt template is JSON with system_prompt and user_template ({err})") from None
    _check_placeholders(method, user, str(path))
    if style == "base" and not user.endswith(("\nAnswer: ", "\n答案：")):
        raise ValueError(f"{path}: a base-model prompt must end with '\\nAnswer: ' (or '\\n答案：')")
    return Template(method, language, id, style, system=system, user=user, source=str(path))


def ide_templates(method: str, language: str = "en", style: str = "base",
                  source: DataSource | None = None) -> list[Template]:
    """The 5 Ide et al. templates of ``method`` for ``language`` ("en" or "zh"), read from ``source``
    (default: the mirror)."""
    if language not in _LANG_SET:
        raise ValueError(f"language must be 'en' or 'zh', got {language!r}: Ide et al. released templates in "
                         "English and Chinese only; score other languages with the template-free methods "
                         "(lp, meanlp, penlp, bf_uniform; slor and bf_unigram given a unigram_corpus of that language)")
    if method == "yn-en" and language != "zh":
        raise ValueError("'yn-en' (English Yes/No prompts for Chinese data) exists for language 'zh' only")
    ds = _LANG_SET[language]
    source = resolve(source)
    out = []
    for i in IDE_TEMPLATE_IDS:
        if method in ("single", "compar"):
            rel = f"{IDE_DIR}/templates_ll/template_{ds}_{method}_{i}.txt"
        else:
            suffix = "-chat" if style == "chat" else ""
            rel = f"{IDE_DIR}/prompts/{ds}/template_{ds}_{method}{suffix}_{i}.json"
        out.append(load_template_file(source.path(rel), method, language, i, style))
    return out


def known_slips(source: DataSource | None = None) -> list[str]:
    """Slips in the released templates, reported (never silently changed)."""
    notes = []
    for method in ("single", "compar"):
        for t in ide_templates(method, "zh", source=source):
            if "英语" in t.text:
                notes.append(f"Chinese {method} template {t.id} says 英语 (\"English sentence\") for Chinese data")
    for style in ("base", "chat"):
        ts = ide_templates("yn", "zh", style, source)
        for a in range(5):
            for b in range(a + 1, 5):
                if (ts[a].system, ts[a].user) == (ts[b].system, ts[b].user):
                    notes.append(f"Chinese Yes/No ({style}) templates {a + 1} and {b + 1} are identical")
    return notes


# --------------------------------------------------------------------------- Hu & Levy (2023)
_HL_SECTIONS = [  # header text -> (task, language)
    ("## Exp 3a", ("sentence_judgment", "en")), ("## Exp 3b", ("sentence_comparison", "en")),
    ("## Exp 1", ("word_prediction", "en")), ("## Exp 2", ("word_comparison", "en")),
    ("- 3a yes/no", ("sentence_judgment", "zh")), ("- 3b comparison", ("sentence_comparison", "zh")),
]
HL_PROMPTS = ("metaQuestionSimple", "metaInstruct", "metaQuestionComplex")


def _unescape(s: str) -> str:
    return s.replace("\\n", "\n")


def hu_levy_prompts(source: DataSource | None = None) -> dict[tuple[str, str, str], str]:
    """{(task, language, prompt): text} for the metalinguistic prompts of Hu & Levy (2023).

    Placeholders: {sentence}, {s1}, {s2}, {prefix}, {full_sentence}, {w1}, {w2} and
    {continuation} (the scored answer). "direct" prompts are the bare sentence.
    """
    path = resolve(source).path(HU_LEVY_PROMPTS)
    out: dict[tuple[str, str, str], str] = {}
    context = None
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        for head, ctx in _HL_SECTIONS:
            if stripped.startswith(head):
                context = ctx
        m = re.match(r"- (metaQuestionSimple|metaInstruct|metaQuestionComplex)\s*: \"(.*)\"$", stripped)
        if m and context:
            out[(*context, m.group(1))] = _unescape(m.group(2))
        if stripped.startswith("- 1 word prediction:"):
            texts = re.findall(r"\"(.*?)\"(?: / |$)", stripped)
            if len(texts) != 3:
                raise ValueError(f"{path}, line {line_no}: expected 3 Chinese word-prediction prompts")
            for name, text in zip(HL_PROMPTS, texts):
                out[("word_prediction", "zh", name)] = _unescape(text)
    if len(out) < 18:
        raise ValueError(f"{path}: found {len(out)} prompts, expected at least 18")
    return out
