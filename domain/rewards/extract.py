"""Reading final answers out of text: numbers, GSM8K references, `\\boxed{...}`, the <think>/<answer> shape.

Numbers are `Decimal`s so that "72", "72.0" and "72.00" are equal without float rounding.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# A number inside text: thousands commas allowed ("1,200"), a minus only where it is not a subtraction ("10-3"
# ends in 3, not -3), a trailing full stop is punctuation, not a decimal point.
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])-?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_REASONING_SHAPE = re.compile(r"<think>.*?</think>\s*<answer>.*?</answer>", re.DOTALL)
_ANSWER_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_GSM8K_MARK = "####"


def plain_number(text: str) -> Decimal | None:
    """The number that the whole text is, or None: " 80 " → 80, "-1,250.5" → -1250.5, "80 km/h" → None."""
    stripped = text.strip()
    if not _PLAIN_NUMBER.fullmatch(stripped):
        return None
    return _decimal(stripped)


def final_number(text: str) -> Decimal | None:
    """The last number written in the text: "so 12 + 60 = 72." → 72; None when there is none."""
    last = None
    for match in _NUMBER_IN_TEXT.finditer(text):
        last = match.group()
    return None if last is None else _decimal(last)


def gsm8k_reference_number(reference: str) -> Decimal | None:
    """A GSM8K reference's answer: the number after the last "####", or the reference as a bare number."""
    if _GSM8K_MARK in reference:
        return plain_number(reference.rsplit(_GSM8K_MARK, 1)[1].replace("$", ""))
    return plain_number(reference)


def gsm8k_marked_number(text: str) -> Decimal | None:
    """The number an answer gives in GSM8K's own shape ("#### 72" on the last marked line), or None."""
    if _GSM8K_MARK not in text:
        return None
    after = text.rsplit(_GSM8K_MARK, 1)[1].strip()
    first_line = after.splitlines()[0] if after else ""
    return plain_number(first_line.rstrip(".").replace("$", ""))


def has_reasoning_format(answer: str) -> bool:
    """Whether the answer is shaped `<think>...</think><answer>...</answer>` (whitespace around)."""
    return _REASONING_SHAPE.fullmatch(answer.strip()) is not None


def answer_region(answer: str) -> str:
    """Where the final answer is read: the last <answer> block's content if any, else the whole text."""
    blocks = _ANSWER_BLOCK.findall(answer)
    return blocks[-1] if blocks else answer


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (or `\\fbox{...}`), braces balanced; None if none is closed."""
    found = None
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        content = _balanced(text, match.end())
        if content is not None:
            found = content
    return found


def _balanced(text: str, start: int) -> str | None:
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start:index]
    return None


_LATEX_NOISE = (
    ("\\left", ""),
    ("\\right", ""),
    ("\\!", ""),
    ("\\,", ""),
    ("\\;", ""),
    ("\\:", ""),
    ("\\dfrac", "\\frac"),
    ("\\tfrac", "\\frac"),
    ("^{\\circ}", ""),
    ("^\\circ", ""),
    ("\\$", ""),
    ("$", ""),
    ("\\%", ""),
    ("%", ""),
)


def normalize_math(expression: str) -> str:
    """A final answer in a canonical form, so equal answers compare equal.

    >>> normalize_math("\\\\dfrac12"), normalize_math(" 1,000.50 "), normalize_math("x = \\\\text{5}")
    ('\\\\frac{1}{2}', '1000.5', '5')
    """
    text = re.sub(r"\\(?:text|textbf|textrm|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", expression)
    for noise, replacement in _LATEX_NOISE:
        text = text.replace(noise, replacement)
    text = re.sub(r"\s+", "", text).rstrip(".")
    # "x=5" answers the question "5" answers; only a short name on the left is dropped, as MATH graders do.
    if text.count("=") == 1 and len(text.split("=")[0]) <= 2:
        text = text.split("=")[1]
    text = re.sub(r"\\frac(\d)(\d)", r"\\frac{\1}{\2}", text)
    text = re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", text)
    number = plain_number(text)
    if number is not None:
        return _canonical(number)
    return re.sub(r"(?<!\d)\.(\d)", r"0.\1", text)


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _canonical(number: Decimal) -> str:
    text = format(number.normalize(), "f")
    return "0" if text in ("-0", "+0") else text
