"""The answer tokens prompts are read at, one table for every method."""
from __future__ import annotations

YES_NO = {"en": ("Yes", "No"), "zh": ("是", "否")}  # Ide et al. Yes/No; Hu & Levy sentence judgment
AB = ("A", "B")  # Ide et al. A/B prompting
ONE_TWO = ("1", "2")  # Hu & Levy sentence comparison


def yes_no(language: str) -> tuple[str, str]:
    """(yes, no) answer words of ``language``; a clear error for a language without them."""
    if language not in YES_NO:
        raise ValueError(f"no Yes/No answer words for language {language!r}; known: {', '.join(YES_NO)}")
    return YES_NO[language]
