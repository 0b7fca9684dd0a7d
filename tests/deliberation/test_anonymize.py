"""Anonymity holds in the text too (seeds 000 and 004, issue 9): a model naming itself is
scrubbed before another agent reads it; a model named as a topic is not."""

from __future__ import annotations

import json
import time

import pytest

from moot.deliberation.anonymize import NEUTRAL, Replacement, scrub_identity


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        (
            "As Claude, I think the answer is Paris.",
            "As an AI assistant, I think the answer is Paris.",
        ),
        ("I'm GPT-4. Use SQLite.", "I'm an AI assistant. Use SQLite."),
        ("I'm GPT and I would use SQLite.", "I'm an AI assistant and I would use SQLite."),
        ("I am Gemini, a model by Google. Paris.", "I am an AI assistant. Paris."),
        ("As an OpenAI model, I cannot browse.", "As an AI assistant, I cannot browse."),
        ("I'm Anthropic's assistant.", "I'm an AI assistant."),
        (
            "Hello! I'm Qwen, created by Alibaba Cloud. It is 4.",
            "Hello! I'm an AI assistant. It is 4.",
        ),
        ("I am Claude, an AI assistant made by Anthropic.", "I am an AI assistant."),
        (
            "I am ChatGPT, a large language model trained by OpenAI, based on GPT-4.",
            "I am an AI assistant.",
        ),
        ("i am llama 3.1 70b instruct.", "i am an AI assistant."),
        ("As a Mistral model, I'd say no.", "As an AI assistant, I'd say no."),
        ("Sure. As DeepSeek-R1, my view is X.", "Sure. As an AI assistant, my view is X."),
        ("My name is SmolLM2.", "I am an AI assistant."),
        ("I AM CLAUDE 3 OPUS.", "I AM an AI assistant."),
        (
            "I am a large language model trained by OpenAI.",
            "I am a large language model trained by its developers.",
        ),
        ("Ask my creators at Anthropic.", "Ask my creators."),
        ("I, Claude, disagree with Agent B.", "I disagree with Agent B."),
        ("Use SQLite.\n-- Claude\n", "Use SQLite.\n\n"),
        ("I’m Gemini 1.5 Pro.", "I’m an AI assistant."),
    ],
)
def test_self_identifying_phrases_are_scrubbed(text: str, scrubbed: str) -> None:
    result, replacements = scrub_identity(text)
    assert result == scrubbed
    assert replacements and all(isinstance(r, Replacement) for r in replacements)


@pytest.mark.parametrize(
    "text",
    [
        "Run the llama.cpp server and point any OpenAI-compatible API client at it.",
        "Models such as Mistral, Qwen and Llama are open; such as an OpenAI model too.",
        "As Llama 3 does, scale RoPE for long contexts.",
        "I'm running Llama 3 locally with llama-cpp-python.",
        "Llama 2 was released by Meta; Gemma was trained by Google.",
        "I am using GPT-4 via the OpenAI API, and Claude via Anthropic's SDK.",
        "The Claude API; Gemini 1.5 Pro is fast; DeepSeek-R1 reasons; SmolLM2 is tiny.",
        "I'm Claude-curious, but I am sure Google Sheets will not scale.",
        "Philosophy aside, the metadata goes in the GPT partition table.",
    ],
)
def test_models_named_as_a_topic_survive(text: str) -> None:
    assert scrub_identity(text) == (text, [])


def test_replacements_are_journal_ready_and_replay_identically() -> None:
    text = "As Claude, I agree. I'm GPT-4, and I disagree. Ask my creators at OpenAI."
    scrubbed, replacements = scrub_identity(text)
    assert replacements == [
        Replacement("As Claude", "As " + NEUTRAL),
        Replacement("I'm GPT-4", "I'm " + NEUTRAL),
        Replacement("my creators at OpenAI", "my creators"),
    ]
    # a journal stores them as JSON; a replay of the same text gives the same result
    assert json.loads(json.dumps(replacements)) == [list(r) for r in replacements]
    assert scrub_identity(text) == (scrubbed, replacements)
    # scrubbing is idempotent: the neutral phrase names nobody
    assert scrub_identity(scrubbed) == (scrubbed, [])


def test_scrubbing_huge_text_stays_linear() -> None:
    hostile = ["I am " * 200_000, "As a " * 200_000, "I am gpt-4 " * 50_000, "x" * 2_000_000]
    started = time.perf_counter()
    for text in hostile:
        scrub_identity(text)
    assert time.perf_counter() - started < 15
