"""The exact checker of GSM8K-style answers: a worked solution ends with
'#### N', and only N counts, compared as an integer (so '#### 017' and
'#### 1,200' read as 17 and 1200). A text without '####' has no answer:
the format is part of what is rewarded. A number that is not a whole one
('#### 17.5', '#### 12,34') is no answer either."""

from __future__ import annotations

import re

# The number right after the last '####': an optional sign, then digits in
# thousands groups (GSM8K writes 1,200) or plain, not followed by more
# digits after a point or comma ('#### 17.5' is not 17).
_FINAL = re.compile(r"####\s*(-?(?:\d{1,3}(?:,\d{3})+|\d+))(?![.,]?\d)")


def final_answer(text: str) -> int | None:
    """The integer after the last '####' in `text`, or None when there is
    none (no marker, or no number right after it)."""
    marker = text.rfind("####")
    if marker < 0:
        return None
    match = _FINAL.match(text, marker)
    if match is None:
        return None
    return int(match.group(1).replace(",", ""))


def correct_answer(completions, answer, **kwargs) -> list[float]:
    """A reward function in TRL's convention: 1.0 where a completion's
    final answer equals the dataset's `answer` column, else 0.0. Chat
    completions ([{"role": ..., "content": ...}]) are read by their text."""
    out = []
    for completion, expected in zip(completions, answer, strict=True):
        if isinstance(completion, list):
            completion = "".join(m.get("content", "") for m in completion)
        out.append(1.0 if final_answer(completion) == int(expected) else 0.0)
    return out
