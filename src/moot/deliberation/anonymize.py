"""Anonymity between agents: aliases, quoting that other agents' text cannot escape, and
scrubbing the phrases by which a model names itself."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from moot import lazy

__all__ = [
    "CUT_MARK",
    "NEUTRAL",
    "RESERVED_TAGS",
    "Replacement",
    "neutralize",
    "quote",
    "scrub_identity",
]

# Tags the protocols parse or use as delimiters; agent text must not be able to open or close them.
RESERVED_TAGS = ("solution", "analysis", "verdict", "critique", "quoted", "evidence")
# What `quote` puts where it cut a long text; `markup.strip_markup` removes it from answers.
CUT_MARK = "[... cut for length ...]"
_TAG = lazy.pattern(r"<(\s*/?\s*(?:" + "|".join(RESERVED_TAGS) + r")\b)", re.IGNORECASE)


def neutralize(text: str) -> str:
    """Defuse every reserved tag in `text` by turning its `<` into a look-alike `‹`."""
    if "<" not in text:  # found in C; the pattern would be tried at every character
        return text
    return _TAG.sub(r"‹\1", text)


def quote(label: str, text: str, *, nonce: str, limit: int) -> str:
    """`text` by `label`, fenced by a nonce the author never saw, reserved tags defused and
    cut to `limit` characters (head and tail kept)."""
    body = neutralize(text.strip())
    if len(body) > limit:
        half = limit // 2
        body = body[:half] + f"\n{CUT_MARK}\n" + body[-half:]
    return f'<quoted from="{label}" id="{nonce}">\n{body or "(empty)"}\n</quoted id="{nonce}">'


# -- identity in the text (seeds 000 and 004; issues 9 and 30) --------------------------------
# Aliases hide who wrote a text only if the text does not say it: "As Claude, I ...". These
# patterns find a model or vendor name where it identifies the speaker: the speaker ("I", "my",
# "this model", "this answer") must stand next to the name, as in "I'm GPT-4", "made by
# Anthropic, I", "I'm an OpenAI model", "built on Llama 3". A name used as a topic ("the
# llama.cpp server", "an OpenAI-compatible API", "Claude Shannon founded information theory",
# "models such as Mistral") is left alone. Model text is hostile: every repetition below is
# bounded or runs over one character class, so a match attempt is linear in the text.
_MODEL_NAME = (
    r"(?:claude(?:[ -]+(?:\d+(?:\.\d+)*|opus|sonnet|haiku|instant))*"
    r"|chat[ -]?gpt(?:[ -]?\d+(?:\.\d+)*[a-z]?)?"
    r"|gpt(?:[ -]?\d+(?:\.\d+)*[a-z]?)?(?:[ -](?:turbo|mini|pro|nano|oss))*"
    r"|o[134](?:[ -](?:mini|pro|preview|high))*"
    r"|gemini(?:[ -]+(?:\d+(?:\.\d+)*|pro|flash|ultra|nano|lite))*|bard"
    r"|qwen(?:\d+(?:\.\d+)*)?(?:[ -]+(?:\d+(?:\.\d+)*b?|max|plus|turbo|coder|instruct|chat))*"
    r"|(?:meta[ -]+)?llama(?:[ -]?\d+(?:\.\d+)*)?|meta[ -]ai"
    r"|mistral(?:[ -]+(?:large|medium|small|nemo|\d+(?:\.\d+)*b?))*|mixtral|codestral"
    r"|deepseek(?:[ -]+(?:v\d+(?:\.\d+)*|r\d|coder|chat))*"
    r"|smollm\d*(?:[ -]+\d+m)?(?:[ -]+instruct)?"
    r"|phi[ -]?\d+(?:\.\d+)?(?:[ -](?:mini|small|medium))?|gemma(?:[ -]?\d+)?"
    r"|grok(?:[ -]?\d+(?:\.\d+)?)?|copilot|command[ -]r(?:\+|[ -]plus)?|command[ -]a|nemotron)"
    # a size or variant: Llama 3.1 70B Instruct, Mixtral 8x7B
    r"(?:[ -]+(?:\d+(?:\.\d+)?[bm]|\d+x\d+b|\d+(?:\.\d+)*|instruct|chat|it|preview|latest))*"
    # not part of a longer name: llama.cpp, llama-cpp, OpenAI-compatible
    r"(?![\w+-])(?!\.\w)"
)
_VENDOR = (
    r"(?:openai|anthropic|google(?:[ ]deepmind)?|deepmind|meta(?:[ ]ai)?|mistral(?:[ ]ai)?"
    r"|alibaba(?:[ ]cloud)?|hugging[ ]?face|microsoft|xai|x\.ai|deepseek|qwen[ ]team|cohere"
    r"|nvidia|amazon)"
    r"(?![\w-])(?!\.\w)"
)
# who built it: "by Anthropic", "by the team at DeepSeek"
_BY = r"(?:the\s+(?:team|folks|people|engineers|researchers)\s+at\s+)?{VENDOR}"
# "AI model" before "AI", so "Google's AI model" is one kind
_KIND = r"(?:ai\s+(?:model|assistant|system|chatbot)|model|assistant|ai|llm|chatbot|bot|system)\b"
# up to three words before the kind: "a large language model", "a helpful, honest assistant";
# never a preposition, so "a fan of the model" is no description of the speaker
_ADJ = r"(?:(?!(?:of|for|with|to|from|by|in|on|at|using|about|like)\b)[\w-]+,?\s+){0,3}?"
_MADE = (
    r"(?:trained|developed|created|made|built|designed|released|fine-tuned|finetuned"
    r"|pre-?trained|produced|engineered|programmed|maintained|provided)"
)
_POSSESSIVE = r"(?:'s|’s)"
# a sentence or clause starts here (a list such as "such as Mistral, Qwen" is no speaker)
_LEAD = r"(?:^|(?<=[.!?;:(\n])|(?<=[.!?;:(]\s))[ \t]*"
# what may follow a name in an introduction: ", made by Anthropic", " (by OpenAI)", ", Google's
# AI model", then ", based on GPT-4"
_TRAIL_BODY = (
    r"(?:(?:(?:an?|the)\s+)?(?:[\w-]+\s+){0,4}?(?:{MADE}\s+)?(?:by|from)\s+"
    + _BY
    + r"|(?:an?\s+)?{VENDOR}{POSS}\s+{ADJ}{KIND})"
)
_TRAIL = (
    r"(?:(?:\s*\(\s*" + _TRAIL_BODY + r"\s*\)|(?:\s*,\s*|\s+)" + _TRAIL_BODY + r"))?"
    r"(?:(?:\s*,\s*|\s+)(?:and\s+)?(?:(?:based|built)\s+on|powered\s+by)\s+{NAME})?"
)
_I_AM = r"(?:i\s*am|i['’]m)"
# a model named with an article needs its kind ("I'm a Llama model"; "I'm a Gemini" is a sign)
_NAMED = r"(?:(?:an?|the)\s+{NAME}\s+{KIND}|{NAME}(?:\s+{KIND})?)"
# One alternative per way of naming oneself; {NAME}, {VENDOR}, {KIND}, ... stand for the
# patterns above (spelled out by `_spell`, as `str.format` would trip on `{0,4}`).
_WAYS = (
    # I'm GPT-4 / My name is Qwen / I am Claude, an AI assistant made by Anthropic, based on X /
    # you are talking to Claude
    r"(?P<me>\b(?:{I_AM}|my\s+name\s+is|call\s+me|i\s+go\s+by"
    r"|you(?:['’]re|\s+are)\s+(?:talking|chatting|speaking)\s+(?:to|with))\s+)"
    r"{NAMED}" + _TRAIL,
    # Hi, this is Claude. / This is Gemini speaking.
    r"(?P<this>{LEAD}(?:(?:hi|hello|hey)(?:\s+there)?\s*[,!.]?\s+)?this\s+is\s+)"
    r"{NAMED}" + _TRAIL + r"(?=\s*(?:[,.!;:)]|$)|\s+(?:speaking|here)\b)",
    # Claude here. / GPT-4o speaking:
    r"(?P<here>{LEAD}){NAME}(?=\s+(?:here|speaking)\s*(?:[.,!:;—–-]|$))",
    # As Claude, ... / As a DeepSeek model, I ... / Speaking as GPT-4o: ... - at the start of a
    # sentence or clause, and the speaker follows
    r"(?P<as>(?:{LEAD}|(?<=,\s))(?:(?:speaking|writing|answering|responding)\s+)?as\s+)"
    r"{NAMED}" + _TRAIL + r"(?=\s*[,:]|\s+(?:i|i['’]m|my|we)\b)",
    # I'm an OpenAI model / I'm Anthropic's assistant / I am a Google AI model / I'm xAI's Grok
    r"(?P<vendor>\b(?:{I_AM}|i\s+was)\s+)(?:(?:an?|the)\s+)?"
    r"(?:{VENDOR}{POSS}?\s+{ADJ}{KIND}|{VENDOR}{POSS}\s+{NAME})" + _TRAIL,
    # As an OpenAI model, I ... / Being an Anthropic model, I ...
    r"(?P<vendoras>(?:{LEAD}|(?<=,\s))(?:(?:speaking|writing|answering)\s+as|as|being)\s+)"
    r"(?:(?:an?|the)\s+)?{VENDOR}{POSS}?\s+{ADJ}{KIND}(?=\s*[,:]|\s+(?:i|i['’]m|my|we)\b)",
    # I'm a model from Mistral AI / I am o3's sibling, a reasoning model by OpenAI
    r"(?P<kindby>\b{I_AM}\s+)(?:an?|the)\s+{ADJ}{KIND}(?:\s*,\s*|\s+)(?:by|from)\s+" + _BY,
    # I am a large language model trained by OpenAI / I was made by Anthropic / This model was
    # developed by Google
    r"(?P<made>\b(?<!such\s)(?:as|{I_AM}|i\s+was|i['’]ve\s+been|i\s+have\s+been"
    r"|this\s+(?:model|assistant|ai|chatbot|llm)\s+(?:is|was|has\s+been))\s+"
    r"(?:(?:(?:an?|the)\s+)?{ADJ}{KIND}(?:\s*,\s*|\s+))?{MADE}\s+by\s+)" + _BY,
    # Made by Anthropic, I aim to help.
    r"(?P<madeas>{LEAD}{MADE}\s+by\s+)" + _BY + r"(?=\s*,\s*(?:i|i['’]m|my|we)\b)",
    # This answer was written by Anthropic's Claude
    r"(?P<wrote>\bthis\s+(?:answer|response|reply|text|message|solution|critique)\s+"
    r"(?:was|is|has\s+been)\s+(?:written|generated|produced|made|created|composed|drafted)"
    r"\s+by\s+)(?:{VENDOR}{POSS}\s+{NAME}|{NAMED}" + _TRAIL + r"|" + _BY + r")",
    # I'm built on Llama 3 / This assistant is powered by GPT-4o / I run on Claude 3
    r"(?P<base>\b(?:(?:{I_AM}|i\s+was|this\s+(?:model|assistant|ai|chatbot|llm)\s+(?:is|was))"
    r"\s+(?:(?:built|based|running)\s+on|powered\s+by)|i\s+run\s+on)\s+)"
    r"(?:the\s+)?(?:{VENDOR}{POSS}\s+)?{NAME}(?:\s+(?:model|architecture|weights)\b)?",
    # my creators at OpenAI / my developer is Anthropic
    r"(?P<mine>\bmy\s+(?:creators?|developers?|makers?|trainers?|parent\s+company))"
    r"(?:\s+(?:at|from)\s+|(?P<mineis>\s+(?:is|are|was|were)\s+))" + _BY,
    # My model is GPT-4o / my underlying model is Claude 3
    r"(?P<mymodel>\bmy\s+(?:underlying\s+|base\s+)?(?:model|llm|architecture)\s+(?:is|was)\s+)"
    r"(?:{VENDOR}{POSS}\s+)?{NAME}",
    # I, Claude, think ... / I, an OpenAI model, think ...
    r"(?P<aside>\bi),\s*(?:{NAME}|(?:an?\s+)?{VENDOR}{POSS}?\s+{ADJ}{KIND})\s*,",
    # a signature line: "-- Claude"
    r"(?P<signed>^[ \t]*(?:--?|—|–)[ \t]*){NAME}[ \t]*$",
)


def _spell(pattern: str) -> str:
    parts = {
        "{NAMED}": _NAMED, "{NAME}": _MODEL_NAME, "{VENDOR}": _VENDOR, "{KIND}": _KIND,
        "{MADE}": _MADE, "{ADJ}": _ADJ, "{POSS}": _POSSESSIVE, "{LEAD}": _LEAD, "{I_AM}": _I_AM,
    }  # fmt: skip
    for key, value in parts.items():
        pattern = pattern.replace(key, value)
    return pattern


@functools.cache
def _identity() -> re.Pattern[str]:
    """The patterns as one regex, compiled on first need (a dozen milliseconds a process)."""
    return re.compile("|".join(_spell(way) for way in _WAYS), re.IGNORECASE | re.MULTILINE)


# Most texts name no model or vendor at all; a substring scan lets them skip the patterns.
_KEYWORDS = (
    "claude gpt o1 o3 o4 gemini bard qwen llama meta mistral mixtral codestral deepseek smollm "
    "phi gemma grok copilot command nemotron openai anthropic google deepmind alibaba hugging "
    "microsoft xai x.ai cohere nvidia amazon"
).split()
NEUTRAL = "an AI assistant"
# what a self-description says instead of the model or vendor it named
_DEVELOPERS = "its developers"
_UNNAMED = "not named here"
_BASE = "a language model"


class Replacement(NamedTuple):
    """One scrubbed phrase: what the text said, and what it says now."""

    original: str
    replacement: str


def _neutral(match: re.Match[str]) -> str:
    group = match.group
    if group("me") is not None:
        intro = group("me").strip()
        if re.fullmatch(r"my\s+name\s+is|call\s+me|i\s+go\s+by", intro, re.IGNORECASE):
            intro = "I am"
        return f"{intro} {NEUTRAL}"
    for lead in ("this", "as", "vendor", "vendoras", "kindby", "wrote"):
        if group(lead) is not None:
            return f"{group(lead)}{NEUTRAL}"
    if group("here") is not None:
        capital = match.group()[len(group("here")) :][:1].isupper()
        return group("here") + (NEUTRAL[0].upper() + NEUTRAL[1:] if capital else NEUTRAL)
    if group("made") is not None:
        return group("made") + _DEVELOPERS
    if group("madeas") is not None:
        return group("madeas") + _DEVELOPERS
    if group("base") is not None:
        return group("base") + _BASE
    if group("mine") is not None:
        return group("mine") + (group("mineis") + _UNNAMED if group("mineis") else "")
    if group("mymodel") is not None:
        return group("mymodel") + _UNNAMED
    if group("aside") is not None:
        return group("aside")
    return ""  # a signature line


def scrub_identity(text: str) -> tuple[str, list[Replacement]]:
    """`text` with every phrase by which its author names its model or vendor replaced by a
    neutral one ("As Claude, I" -> "As an AI assistant, I"; "I'm GPT-4" -> "I'm an AI
    assistant"), and the replacements in order. Deterministic, so the journal can record the
    replacements and a replay scrubs identically; ordinary mentions of models stay.

    Kept per text up to 100,000 characters (lru_cache): every agent's answer is shown to every
    other agent, in each critique and verdict prompt of a round, and a resume shows them all
    again."""
    scrubbed, replaced = (_kept if len(text) <= 100_000 else _scrubbed)(text)
    return scrubbed, list(replaced)


def _scrubbed(text: str) -> tuple[str, tuple[Replacement, ...]]:
    replacements: list[Replacement] = []
    lowered = text.lower()
    if not any(word in lowered for word in _KEYWORDS):
        return text, ()

    def replace(match: re.Match[str]) -> str:
        new = _neutral(match)
        replacements.append(Replacement(match.group(), new))
        return new

    return _identity().sub(replace, text), tuple(replacements)


_kept = functools.lru_cache(maxsize=512)(_scrubbed)
