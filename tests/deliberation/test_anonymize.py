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


# Issue 30: every common way a model names its vendor or model, across vendors and families.
# Each scrubbed text names no model or vendor any more, and scrubbing it again changes nothing.
_SELF_REFERENCES = [
    ("I was made by Anthropic.", "I was made by its developers."),
    ("I am an OpenAI model.", "I am an AI assistant."),
    ("I'm an OpenAI model, so I cannot browse.", "I'm an AI assistant, so I cannot browse."),
    ("Made by Anthropic, I aim to help.", "Made by its developers, I aim to help."),
    ("I'm a model from Mistral AI.", "I'm an AI assistant."),
    ("This is Gemini speaking.", "This is an AI assistant speaking."),
    ("Hi, this is Claude. Use SQLite.", "Hi, this is an AI assistant. Use SQLite."),
    ("(I'm an Anthropic model)", "(I'm an AI assistant)"),
    ("I'm built on Llama 3.", "I'm built on a language model."),
    ("I am powered by GPT-4o.", "I am powered by a language model."),
    ("This assistant is powered by GPT-4o.", "This assistant is powered by a language model."),
    ("I was developed by OpenAI.", "I was developed by its developers."),
    ("I was trained by Google.", "I was trained by its developers."),
    ("As Claude Sonnet 4.5 I would say yes.", "As an AI assistant I would say yes."),
    ("I'm GPT-5.", "I'm an AI assistant."),
    ("I am o3, a reasoning model by OpenAI.", "I am an AI assistant."),
    ("I'm Grok, built by xAI.", "I'm an AI assistant."),
    ("I am Phi-3, a small model from Microsoft.", "I am an AI assistant."),
    ("I'm Command R, made by Cohere.", "I'm an AI assistant."),
    ("I am Command R+ from Cohere.", "I am an AI assistant."),
    ("I'm Mixtral 8x7B.", "I'm an AI assistant."),
    ("I'm Qwen2.5-72B-Instruct.", "I'm an AI assistant."),
    ("I'm DeepSeek-V3, developed by DeepSeek.", "I'm an AI assistant."),
    ("I'm SmolLM2, trained by Hugging Face.", "I'm an AI assistant."),
    ("I am a Hugging Face model.", "I am an AI assistant."),
    ("As an Anthropic model, I will not.", "As an AI assistant, I will not."),
    ("Being an OpenAI model, I cannot.", "Being an AI assistant, I cannot."),
    ("I'm Gemini, Google's AI model.", "I'm an AI assistant."),
    ("I'm Llama, Meta's open model.", "I'm an AI assistant."),
    ("This model was trained by Anthropic.", "This model was trained by its developers."),
    ("I am an assistant from Anthropic.", "I am an AI assistant."),
    ("My developer is Anthropic.", "My developer is not named here."),
    ("I was created by the team at DeepSeek.", "I was created by its developers."),
    ("Speaking as GPT-4o: use Postgres.", "Speaking as an AI assistant: use Postgres."),
    ("I am Claude 3.5 Sonnet.", "I am an AI assistant."),
    ("I'm Claude Opus 4.", "I'm an AI assistant."),
    ("I am GPT-4o mini.", "I am an AI assistant."),
    ("I'm Gemini 2.5 Flash.", "I'm an AI assistant."),
    ("I'm Mistral Large 2.", "I'm an AI assistant."),
    ("Claude here. Use SQLite.", "An AI assistant here. Use SQLite."),
    ("I, an OpenAI model, think so.", "I think so."),
    ("I am Qwen, a large language model created by Alibaba Cloud.", "I am an AI assistant."),
    ("I'm based on GPT-4.", "I'm based on a language model."),
    ("I run on Claude 3.", "I run on a language model."),
    ("My model is GPT-4o.", "My model is not named here."),
    ("I'm xAI's Grok.", "I'm an AI assistant."),
    ("I'm Microsoft's Phi-4.", "I'm an AI assistant."),
    ("I'm DeepMind's Gemini.", "I'm an AI assistant."),
    ("I am Claude (made by Anthropic).", "I am an AI assistant."),
    ("You are talking to Claude, made by Anthropic.", "You are talking to an AI assistant."),
    ("This answer was written by Anthropic's Claude.",
     "This answer was written by an AI assistant."),
    ("As a model developed by Google DeepMind, I can help.",
     "As a model developed by its developers, I can help."),
]  # fmt: skip


@pytest.mark.parametrize(("text", "scrubbed"), _SELF_REFERENCES)
def test_every_vendor_and_model_self_reference_is_scrubbed(text: str, scrubbed: str) -> None:
    result, replacements = scrub_identity(text)
    assert result == scrubbed
    assert replacements
    assert scrub_identity(result) == (result, [])


def test_the_self_reference_list_covers_the_vendors() -> None:
    texts = " ".join(text.lower() for text, _ in _SELF_REFERENCES)
    assert len(_SELF_REFERENCES) >= 30
    for name in (
        "openai", "anthropic", "google", "deepmind", "meta", "mistral", "alibaba", "qwen",
        "deepseek", "xai", "microsoft", "cohere", "hugging face", "smollm", "gpt-4o", "gpt-5",
        "o3", "claude", "sonnet", "opus", "gemini", "llama", "mixtral", "grok", "phi",
        "command r",
    ):  # fmt: skip
        assert name in texts, name


@pytest.mark.parametrize(
    "text",
    [
        "Use the OpenAI API for embeddings.",
        "Claude Shannon founded information theory.",
        "As Claude Shannon showed, entropy bounds compression.",
        "GPT-4 was trained by OpenAI on a large corpus.",
        "Llama 3 is made by Meta and released openly.",
        "Anthropic's Claude models support tool use.",
        "The model was developed by Google DeepMind in 2023.",
        "Compare an OpenAI model with a Mistral model on latency.",
        "Treat it as an OpenAI model would.",
        "I'm using a library developed by Microsoft.",
        "I am a big fan of tools made by Google.",
        "I am comparing GPT-4o with Claude 3.5 Sonnet.",
        "I was told by OpenAI support that the limit is 10k.",
        "I built this on Llama 3 last year.",
        "The best model for this is Claude.",
        "I'm a Gemini, so I like debates.",
        "Llama here is the better choice.",
        "Made by Anthropic or not, the model must follow the spec.",
        "Mistral, made by Mistral AI, is open.",
        "My model is a random forest; my developers use Bazel.",
        "I am sure Phi-3 fits on a phone; set the Command R endpoint.",
        "I am running benchmarks on Gemma 2.",
    ],
)
def test_legitimate_mentions_of_vendors_and_models_are_kept(text: str) -> None:
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
    hostile = [
        "I am " * 200_000,
        "As a " * 200_000,
        "I am gpt-4 " * 50_000,
        "x" * 2_000_000,
        # the forms of issue 30: long runs of what a pattern may repeat (quadratic would hang)
        "I am a " + "large " * 50_000,
        "I am claude, " + "a " * 100_000 + "by",
        "This is claude" + " " * 200_000,
        "I'm " + "Claude 3 " * 30_000,
        "my developers " * 20_000,
        ". As an openai " + "ai " * 60_000,
        "I, " + "an openai " * 30_000,
    ]
    started = time.perf_counter()
    for text in hostile:
        scrub_identity(text)
    assert time.perf_counter() - started < 15


def test_a_text_is_scrubbed_once_and_each_caller_gets_its_own_list() -> None:
    """An answer is shown to every other agent in every round's prompts (issue 23)."""
    from moot.deliberation import anonymize

    text = "As Claude, I think the answer is 42. " + "x" * 50
    first = scrub_identity(text)
    misses = anonymize._kept.cache_info().misses
    first[1].clear()  # a caller's list is its own
    again = scrub_identity(text)
    assert anonymize._kept.cache_info().misses == misses
    assert again[0] == first[0] and again[1] == [Replacement("As Claude", "As an AI assistant")]
