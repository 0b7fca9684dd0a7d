"""Does a reply talk about AI, and so about itself, instead of answering? (issue 29)

The README says talk about being an AI is no answer, and substance's META rule catches it where
a model says what it is ("I am an AI", "as an AI language model") in words of the debate. The
embedded model also talks of models in the third person, in words of what they are and do:
"This is a great example of how even small models used by SmolLM can create accurate answers.",
"We verified it using AI's testing capabilities." Both passed as answers: no anchor named being
an AI, and "models", "capabilities" or "verified" were no words of talk.

Such a reply names AI (`_ANCHOR`: AI, AI's, an LLM, a language model, a chatbot, a model's name
such as SmolLM or GPT) and every word of its own is talk: about answers, their grade, work and
quality (the caller's words), or about what a model is and does (`_WORDS`). It needs a word
besides the names of AI ("AI." may answer "Which technology drove the boom?"), and one word of
the subject or of the task makes it an answer ("Use a small language model to classify the
tickets.", "LLMs generate likely text, not checked facts." to a task about LLMs). Everything
here is linear in the words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

__all__ = ["talks_about_ai"]

# AI named: a name no subject shares (not "assistant", "model", "Claude" or "Gemini")
_ANCHOR = re.compile(
    r"\b(?:ai|a\.i|artificial\s+intelligence|llms?|language\s+models?|chatbots?|chatgpt|"
    r"gpt|smollm\d*|qwen\d*|openai)\b"
)
# the names of AI and of models (a trailing version taken off: "smollm2")
_NAMES = frozenset(
    """
    ai ai's artificial intelligence llm llms llm's language model models model's chatbot
    chatbots bot bots assistant assistants machine machines gpt chatgpt smollm qwen openai
    """.split()
)
# what a model is and does, and says of itself
_WORDS = _NAMES | frozenset(
    """
    capability capabilities ability abilities power powerful smart intelligent trained training
    train pretrained tuned finetuned fine parameters testing tested verified verify verifies
    verification generate generates generated generating generation create creates created
    creating produce produces produced producing learn learns learned learning used like
    even small tiny large big little tool tools help helps helped amazing impressive
    remarkable incredible capable
    """.split()
)


def _named(word: str) -> bool:
    return word.rstrip("0123456789") in _NAMES


def talks_about_ai(
    folded: str, content: Sequence[str], talk: AbstractSet[str], asked: AbstractSet[str]
) -> bool:
    """Whether the reply (`folded`, its words of its own `content`, filler out) only talks
    about AI: it names AI, every word of its own is `talk` or a word of what a model is and
    does, one is not a name of AI, and none is a word of the task (`asked`)."""
    return (
        all(w in talk or w in _WORDS or _named(w) for w in content)
        and not all(map(_named, content))
        and asked.isdisjoint(content)
        and _ANCHOR.search(folded) is not None
    )
