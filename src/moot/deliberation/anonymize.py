"""Anonymity between agents: aliases, quoting that other agents' text cannot escape, and
scrubbing the phrases by which a model names itself."""

from __future__ import annotations

import functools
import re
import string
from typing import NamedTuple

__all__ = [
    "CUT_MARK",
    "NEUTRAL",
    "RESERVED_TAGS",
    "Replacement",
    "alias_for",
    "neutralize",
    "quote",
    "scrub_identity",
]

# Tags the protocols parse or use as delimiters; agent text must not be able to open or close them.
RESERVED_TAGS = ("solution", "analysis", "verdict", "critique", "quoted", "evidence")
# What `quote` puts where it cut a long text; `markup.strip_markup` removes it from answers.
CUT_MARK = "[... cut for length ...]"
_TAG = re.compile(r"<(\s*/?\s*(?:" + "|".join(RESERVED_TAGS) + r")\b)", re.IGNORECASE)


def alias_for(index: int, role: str = "agent") -> str:
    """agent_a, agent_b, ... agent_z, agent_aa, ... (judge_a, ... with role "judge")"""
    letters = string.ascii_lowercase
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = letters[rem] + name
    return f"{role}_{name}"


def neutralize(text: str) -> str:
    """Defuse every reserved tag in `text` by turning its `<` into a look-alike `‹`."""
    return _TAG.sub(r"‹\1", text)


def quote(label: str, text: str, *, nonce: str, limit: int) -> str:
    """`text` by `label`, fenced by a nonce the author never saw, reserved tags defused and
    cut to `limit` characters (head and tail kept)."""
    body = neutralize(text.strip())
    if len(body) > limit:
        half = limit // 2
        body = body[:half] + f"\n{CUT_MARK}\n" + body[-half:]
    return f'<quoted from="{label}" id="{nonce}">\n{body or "(empty)"}\n</quoted id="{nonce}">'


# -- identity in the text (seeds 000 and 004; issue 9) ----------------------------------------
# Aliases hide who wrote a text only if the text does not say it: "As Claude, I ...". These
# patterns find a model or vendor name where it identifies the speaker: after a first-person
# introduction, in a leading "As X," or in "trained by X" attached to one. A name used as a
# topic ("the llama.cpp server", "an OpenAI-compatible API", "models such as Mistral") is left
# alone: every pattern needs the speaker around the name.
_MODEL_NAME = (
    r"(?:claude(?:[ -]+(?:\d+(?:\.\d+)*|opus|sonnet|haiku|instant))*"
    r"|chat[ -]?gpt(?:[ -]?\d+(?:\.\d+)*[a-z]?)?"
    r"|gpt(?:[ -]?\d+(?:\.\d+)*[a-z]?)?(?:[ -](?:turbo|mini|pro|nano))*"
    r"|gemini(?:[ -]+(?:\d+(?:\.\d+)*|pro|flash|ultra|nano))*|bard"
    r"|qwen(?:\d+(?:\.\d+)*)?(?:[ -]+(?:\d+(?:\.\d+)*b?|max|plus|turbo|coder|instruct|chat))*"
    r"|(?:meta[ -]+)?llama(?:[ -]?\d+(?:\.\d+)*)?|meta[ -]ai"
    r"|mistral(?:[ -]+(?:large|medium|small|\d+b))*|mixtral|codestral"
    r"|deepseek(?:[ -]+(?:v\d+(?:\.\d+)*|r\d|coder|chat))*"
    r"|smollm\d*(?:[ -]+\d+m)?(?:[ -]+instruct)?"
    r"|phi[ -]?\d+(?:\.\d+)?|gemma(?:[ -]?\d+)?|grok(?:[ -]?\d+)?|copilot)"
    # a size or variant: Llama 3.1 70B Instruct
    r"(?:[ -]+(?:\d+(?:\.\d+)?[bm]|instruct|chat|it|preview|latest))*"
    # not part of a longer name: llama.cpp, llama-cpp, OpenAI-compatible
    r"(?![\w-])(?!\.\w)"
)
_VENDOR = (
    r"(?:openai|anthropic|google(?:[ ]deepmind)?|deepmind|meta(?:[ ]ai)?|mistral(?:[ ]ai)?"
    r"|alibaba(?:[ ]cloud)?|hugging[ ]?face|microsoft|xai|x\.ai|deepseek|qwen[ ]team)"
    r"(?![\w-])(?!\.\w)"
)
_KIND = r"(?:model|assistant|ai|llm|chatbot)"
_MADE = r"(?:trained|developed|created|made|built|designed|released|fine-tuned)"
# One alternative per way of naming oneself; {NAME}, {VENDOR}, {KIND} and {MADE} stand for the
# patterns above (spelled out by `_spell`, as `str.format` would trip on `{0,4}`).
_WAYS = (
    # I'm GPT-4 / My name is Qwen / I am Claude, an AI assistant made by Anthropic, based on X
    r"(?P<me>\b(?:i\s*am|i'm|i’m|my\s+name\s+is|call\s+me|i\s+go\s+by)\s+)(?:(?:an?|the)\s+)?"
    r"{NAME}(?:\s+{KIND})?"
    r"(?:\s*,?\s*(?:an?\s+)?(?:[\w-]+\s+){0,4}?(?:{MADE}\s+)?(?:by|from)\s+{VENDOR})?"
    r"(?:\s*,?\s*based\s+on\s+{NAME})?",
    # As Claude, ... / As a DeepSeek model, I ... - at the start of a sentence or clause, so
    # that "such as Mistral, Qwen" (a list) is not a speaker
    r"(?P<as>(?:^|(?<=[.!?;:(\n])|(?<=[.!?;:(]\s))[ \t]*as\s+)(?:(?:an?|the)\s+)?"
    r"{NAME}(?:\s+{KIND})?(?=\s*,|\s+(?:i|i'm|my|we)\b)",
    # as an OpenAI model / I'm Anthropic's assistant / I am a Google AI model
    r"(?P<vendor>\b(?<!such\s)(?<!well\s)(?:as|i\s*am|i'm|i’m)\s+)(?:(?:an?|the)\s+)?"
    r"{VENDOR}(?:'s|’s)?\s+(?:(?:ai|large|language|chat|own)\s+)*{KIND}\b",
    # I am a large language model trained by OpenAI / As an AI developed by Anthropic
    r"(?P<made>\b(?<!such\s)(?:as|i\s*am|i'm|i’m|i\s+was|i've\s+been)\s+(?:(?:an?|the)\s+)?"
    r"(?:[\w-]+\s+){0,4}?{MADE}\s+by\s+){VENDOR}",
    # my creators at OpenAI
    r"(?P<mine>\bmy\s+(?:creators?|developers?|makers?|trainers?))\s+(?:at|from)\s+{VENDOR}",
    # I, Claude, think ...
    r"(?P<aside>\bi),\s*{NAME}\s*,",
    # a signature line: "-- Claude"
    r"(?P<signed>^[ \t]*(?:--?|—|–)[ \t]*){NAME}[ \t]*$",
)


def _spell(pattern: str) -> str:
    parts = {"{NAME}": _MODEL_NAME, "{VENDOR}": _VENDOR, "{KIND}": _KIND, "{MADE}": _MADE}
    for key, value in parts.items():
        pattern = pattern.replace(key, value)
    return pattern


@functools.cache
def _identity() -> re.Pattern[str]:
    """The patterns as one regex, compiled on first need (a dozen milliseconds a process)."""
    return re.compile("|".join(_spell(way) for way in _WAYS), re.IGNORECASE | re.MULTILINE)


# Most texts name no model or vendor at all; a substring scan lets them skip the patterns.
_KEYWORDS = (
    "claude gpt gemini bard qwen llama meta mistral mixtral codestral deepseek smollm phi "
    "gemma grok copilot openai anthropic google deepmind alibaba hugging microsoft xai x.ai"
).split()
NEUTRAL = "an AI assistant"


class Replacement(NamedTuple):
    """One scrubbed phrase: what the text said, and what it says now."""

    original: str
    replacement: str


def _neutral(match: re.Match[str]) -> str:
    if match.group("me") is not None:
        intro = match.group("me").strip()
        if not re.fullmatch(r"i\s*am|i['’]m", intro, re.IGNORECASE):
            intro = "I am"
        return f"{intro} {NEUTRAL}"
    if match.group("as") is not None or match.group("vendor") is not None:
        lead = match.group("as") if match.group("as") is not None else match.group("vendor")
        return f"{lead}{NEUTRAL}"
    if match.group("made") is not None:
        return match.group("made") + "its developers"
    if match.group("mine") is not None:
        return match.group("mine")
    if match.group("aside") is not None:
        return match.group("aside")
    return ""  # a signature line


def scrub_identity(text: str) -> tuple[str, list[Replacement]]:
    """`text` with every phrase by which its author names its model or vendor replaced by a
    neutral one ("As Claude, I" -> "As an AI assistant, I"; "I'm GPT-4" -> "I'm an AI
    assistant"), and the replacements in order. Deterministic, so the journal can record the
    replacements and a replay scrubs identically; ordinary mentions of models stay."""
    replacements: list[Replacement] = []
    lowered = text.lower()
    if not any(word in lowered for word in _KEYWORDS):
        return text, replacements

    def replace(match: re.Match[str]) -> str:
        new = _neutral(match)
        replacements.append(Replacement(match.group(), new))
        return new

    return _identity().sub(replace, text), replacements
