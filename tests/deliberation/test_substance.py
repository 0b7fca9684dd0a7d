"""A position or solution counts only if it is a substantive answer (issue 9, "Consensus is
earned"): the junk seen in the field is invalid with a typed reason; good short answers pass."""

from __future__ import annotations

import time

import pytest

from moot.deliberation import substance
from moot.deliberation.anonymize import quote
from moot.deliberation.parsing import parse_solution
from moot.deliberation.substance import NotSubstantive, Reason, check_substance
from moot.protocols.arena import prompts as arena
from moot.protocols.court import prompts as court

FRANCE = "What is the capital of France?"
STORE = "Should a small team use Postgres or SQLite for a session store?"


@pytest.fixture(autouse=True)
def _prompts_read_afresh() -> None:
    """check_substance reads each set of prompts once and keeps the reading: every test starts
    without it, so none passes on a reading another test made (benchmarks/mutation.py forks
    its mutants from a process that ran every test once)."""
    substance._clear_caches()


def _arena_solve(task: str) -> list[str]:
    """The system and user texts of the arena's solve ask, from the real prompt builders."""
    return [arena.SYSTEM.format(n=3), arena.SOLVE.format(task=task, format=arena.FORMAT)]


def _court_propose(task: str) -> list[str]:
    system = court.AGENT_SYSTEM.format(
        label="Agent A", n=3, topic=task, question="", role="", format=court.AGENT_FORMAT
    )
    return [system, court.PROPOSE.format(round=1, rounds=5, history="")]


def _invalid(reply: str, prompts: list[str], task: str | None) -> NotSubstantive:
    problem = check_substance(reply, prompts, task=task)
    assert problem is not None, f"{reply!r} passed as substantive"
    return problem


@pytest.mark.parametrize("task", [STORE, None])
def test_the_courts_template_echo_from_the_field_is_invalid(task: str | None) -> None:
    junk = "{ newVote }, Confidence: { confidence }, Reasoning: {"
    problem = _invalid(junk, _court_propose(STORE), task)
    assert problem.reason is Reason.TEMPLATE
    assert "{ newVote }" in str(problem)
    # with no prompt at hand at all, the placeholders and empty labels still give it away
    assert _invalid(junk, [], None).reason is Reason.TEMPLATE


def test_an_echo_of_the_arena_solve_prompt_is_invalid() -> None:
    prompts = _arena_solve(FRANCE)
    # what a tiny model wrote: the format block itself, which parses as a solution
    echoed = arena.FORMAT.replace("Write your answer in exactly these two sections:", "")
    solution, _ = parse_solution(echoed)
    problem = _invalid(solution, prompts, FRANCE)
    assert problem.reason is Reason.ECHO
    assert "the key decisions" in str(problem)
    # the whole prompt, the system prompt, the bare task, and a partial copy with a stray word
    for reply in (
        prompts[1],
        prompts[0],
        FRANCE,
        "Write your answer in exactly these two sections: PLAN, the key decisions, numbered, "
        "each with its reason. Okay.",
    ):
        assert _invalid(reply, prompts, FRANCE).reason is Reason.ECHO
        assert _invalid(reply, prompts, None).reason is Reason.ECHO


@pytest.mark.parametrize(
    "reply",
    [
        "I can't help with that.",
        "I'm sorry, but I can't help with that.",
        "As an AI language model I cannot provide opinions on that.",
        "Sorry, I am unable to answer this question.",
        "I must decline.",
        "I abstain: I will not answer this question.",
        "I abstain.",
        "I decline to answer.",
    ],
)
def test_refusals_are_invalid(reply: str) -> None:
    assert _invalid(reply, _arena_solve(FRANCE), FRANCE).reason is Reason.REFUSAL


@pytest.mark.parametrize(
    "reply",
    [
        "The capital of France is Paris.",
        "Paris",
        "42",
        "Use SQLite.",
        "SQLite.",
        "Use SQLite for the session store: one file, no server to run.",
        "A small team should use SQLite.",
        # a refusal clause next to a real answer
        "As an AI language model I cannot browse, but the capital of France is Paris.",
        # the format's headers around a real answer
        "## PLAN\n1. Paris is the capital.\n## CHANGES\nThe capital of France is Paris.",
        "Reasoning: SQLite is enough for one server. Confidence: 0.8",
        '{"answer": "Paris"}',
        # code that uses braces and colons, which placeholders and labels must not swallow
        "const { newVote } = props;\nreturn render(newVote);",
        "def f(x: int) -> int:\n    return x + 1",
    ],
)
@pytest.mark.parametrize("task", [FRANCE, STORE, None])
def test_good_short_answers_pass(reply: str, task: str | None) -> None:
    for prompts in (_arena_solve(task or STORE), _court_propose(task or STORE)):
        assert check_substance(reply, prompts, task=task) is None


def test_restating_the_task_before_a_short_answer_is_fine() -> None:
    reply = f"{STORE} SQLite."
    assert check_substance(reply, _court_propose(STORE), task=STORE) is None
    assert check_substance(f"{FRANCE} Paris.", _arena_solve(FRANCE), task=FRANCE) is None
    # a single prompt text works as well as a list
    assert check_substance(reply, _court_propose(STORE)[1], task=STORE) is None


def test_agreeing_with_a_quoted_solution_is_not_an_echo() -> None:
    # in evaluate and revise the prompt quotes the others' solutions: repeating one is agreement
    solution = "For a session store, use SQLite in WAL mode with a single writer process."
    revise = arena.REVISE.format(
        critiques=quote("Agent B", solution, nonce="0c218a4f73d5", limit=4000),
        format=arena.REVISED_FORMAT,
    )
    assert check_substance(solution, [arena.SYSTEM.format(n=3), revise], task=STORE) is None


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", Reason.EMPTY),
        ("   \n\t ", Reason.EMPTY),
        ("<solution>\n</solution>", Reason.MARKUP_ONLY),
        ('</quoted id="0c218a4f73d5">', Reason.MARKUP_ONLY),
        ("...", Reason.MARKUP_ONLY),
        ("<your answer here>", Reason.TEMPLATE),
        ("[insert your position]", Reason.TEMPLATE),
        ('{"type": "object", "properties": {"answer": {"type": "string"}}}', Reason.TEMPLATE),
        ("Reasoning: Reasoning: " * 30, Reason.REPETITION),
    ],
)
def test_empty_markup_and_template_replies_are_typed(reply: str, reason: Reason) -> None:
    assert _invalid(reply, _arena_solve(FRANCE), FRANCE).reason is reason


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        # what the embedded model wrote as revised solutions in a default run (2026-11-23)
        ("SOLUTION}", Reason.TEMPLATE),
        ("{{exampleurl)}}", Reason.TEMPLATE),
        ("{{youranswer}}}", Reason.TEMPLATE),
        # field names of the instructions, and nothing else
        ("Solution.", Reason.ECHO),
        ("PLAN CHANGES", Reason.ECHO),
    ],
)
def test_template_fragments_are_invalid(reply: str, reason: Reason) -> None:
    assert _invalid(reply, _arena_solve(FRANCE), FRANCE).reason is reason


def test_huge_and_hostile_replies_are_judged_quickly() -> None:
    prompts = [p * 50 for p in _arena_solve(FRANCE)]
    hostile = [
        "x" * 5_000_000,
        "{a}" * 2_000_000,
        "<quoted " * 500_000,
        "\x00\u202e" * 1_000_000,
        _arena_solve(FRANCE)[1] * 5_000,
        " ".join(f"w{i}" for i in range(1_000_000)),
    ]
    started = time.perf_counter()
    verdicts = [check_substance(text, prompts, task=FRANCE) for text in hostile]
    assert time.perf_counter() - started < 10
    assert verdicts[4] is not None and verdicts[4].reason is Reason.ECHO
    # the detail is printable and short, whatever the reply held
    for verdict in verdicts:
        if verdict is not None:
            assert str(verdict).isprintable() and len(str(verdict)) < 200


# -- a valid answer answers the question (issue 29) -------------------------------------------

TWO = "What is 2+2?"
FRIDAY = "Should we deploy on Friday?"
MIGRATION = "Is it safe to run the migration on Friday?"
BOTH_PROMPTS = [_arena_solve, _court_propose]


@pytest.mark.parametrize(
    "reply",
    [
        # what the court certified in the field
        "You are an AI, you will not be allowed to speak in the debate.",
        "As per the instructions, I will now give my position.",
        "As an AI language model, I will answer.",
        "Here is my answer:",
        "I am an AI assistant and I will give my position in this round.",
        # what a README run's first answer said of the task instead of answering it
        "This task requires you to answer a complex question with multiple possible answers.",
        "This question has many possible answers.",
        "The question is ambiguous and difficult.",
        # what a README run's agents all ended on, and the first answers before it (2026-11-27)
        "This is a challenging task that requires multiple layers of thinking to ensure all "
        "aspects are considered correctly.",
        "This task involves multiple decisions and requires careful thought.",
        "This is a difficult question that needs careful consideration of every aspect.",
        # a reply that only points at an answer ("my answer" was caught, these passed)
        "the original answer",
        "See my earlier answer.",
        "My answer stands.",
        "I stand by my original answer.",
        "As stated in my previous answer.",
        "Same as our own earlier answers.",
        "The answer remains the same.",
        "I maintain my position.",
    ],
)
@pytest.mark.parametrize("task", [FRANCE, STORE, None])
def test_talk_about_the_debate_the_instructions_or_being_an_ai_is_invalid(
    reply: str, task: str | None
) -> None:
    for build in BOTH_PROMPTS:
        problem = _invalid(reply, build(task or STORE), task)
        assert problem.reason is Reason.META
        assert "the debate, the instructions or being an AI" in str(problem)
        assert reply[:20] in str(problem)  # named in the reply's own spelling


@pytest.mark.parametrize(
    "reply",
    [
        # talk about what models are and do, in the third person (the embedded model wrote the
        # first two, and both passed: no anchor named being an AI, and their words were no talk)
        "This is a great example of how even small models used by SmolLM can create accurate "
        "answers.",
        "We verified it using AI's testing capabilities.",
        "As a small language model, I can generate accurate and helpful answers.",
        "SmolLM2 models are trained to give accurate answers.",
        "Large language models like GPT are powerful tools.",
        "AI can verify the answer.",
    ],
)
@pytest.mark.parametrize("task", [FRANCE, TWO, None])
def test_talk_about_ai_in_the_third_person_is_invalid(reply: str, task: str | None) -> None:
    for build in BOTH_PROMPTS:
        problem = _invalid(reply, build(task or FRANCE), task)
        assert problem.reason is Reason.META
        assert "the debate, the instructions or being an AI" in str(problem)


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        (FRANCE, "Paris, as per the instructions."),
        (FRANCE, "My answer is Paris."),
        (STORE, "As per the instructions, my position is: use SQLite."),
        (STORE, "My position is that we should use SQLite."),
        # the task's own words are the answer's, not talk about the debate
        ("Should the judge speak in the debate?", "The judge should speak in the debate."),
        ("When should we vote?", "Not now."),
        # a word of the subject beside talk of the question's difficulty
        (STORE, "The question is hard: use SQLite until a second writer appears."),
        (FRANCE, "This question has many possible answers, but it is Paris."),
        (STORE, "This is a challenging decision: consider SQLite until a second writer appears."),
        ("Is the question ambiguous?", "The question is ambiguous."),
        ("Should we use Postgres?", "The answer depends on your workload."),
        # an answer pointed at beside the answer itself, or one the task asks about
        (FRANCE, "Your answer is Paris."),
        (FRANCE, "Your answer is the best one I have seen, Marseille."),
        ("What is the capital of Ireland?", "Your answer is Éire."),
        (FRANCE, "My previous answer stands: Paris."),
        (STORE, "I maintain my position: SQLite until a second writer appears."),
        ("What is 6 x 7?", "The original answer, 42, is right: 6 x 7 = 42."),
        (
            "Which answer did the panel keep, the original or the revised one?",
            "The original answer.",
        ),
        # AI named beside a word of the subject, or where the task asks about it
        (
            "How do I classify support tickets cheaply?",
            "Use a small language model to classify the tickets.",
        ),
        (FRANCE, "As an AI, I can tell you: Paris."),
        ("Why do LLMs make up citations?", "LLMs generate likely text, not checked facts."),
        ("Which technology drove the 2023 boom?", "AI."),
        ("Which technology drove the 2023 boom?", "Generative AI models."),
        (STORE, "An AI assistant would pick SQLite."),
        # (a word of the task makes it an answer, as it does for talk about the debate)
        (
            "Which small models can answer accurately?",
            "Small models used by SmolLM can create accurate answers.",
        ),
    ],
)
def test_talk_around_an_answer_is_an_answer(task: str, reply: str) -> None:
    for build in BOTH_PROMPTS:
        assert check_substance(reply, build(task), task=task) is None


@pytest.mark.parametrize(
    "reply",
    [
        "{{...}}",
        "{{ }}",
        "[...]",
        "<…>",
        "[Your position]",
        "<your answer>",
        "{{answer}}",
        "Position: [Your position]",
        # a placeholder run together into one word (the embedded model wrote the first four,
        # each passed as an answer: one word of its own was a word of substance)
        "youranswer",
        "Youranswer",
        "your_answer_here",
        "answerhere",
        "YOUR_ANSWER",
        "YourAnswerHere.",
        "insert-your-response",
        '"final_answer"',
        # two of three SmolLM2 agents ended on it, 'consensus' by persuasion, exit 0 (the
        # README's first command at be439e5)
        "definitive_response",
        "Correct-Answer",
        "revised_solution_text",
    ],
)
@pytest.mark.parametrize("task", [FRANCE, None])
def test_placeholders_are_invalid(reply: str, task: str | None) -> None:
    problem = _invalid(reply, _court_propose(task or STORE), task)
    assert problem.reason is Reason.TEMPLATE
    assert _invalid(reply, [], task).reason is Reason.TEMPLATE


@pytest.mark.parametrize(
    "reply",
    [
        # the answer words run together with more than placeholder words, or beside an answer
        "my_answer_key",
        "correct_answer_count",
        "The correct answer is Paris.",
        "answer_text = text.strip()",
        "Paris (youranswer)",
        "Answerable questions first.",
        "Yours: Paris.",
        "The answer is 42.",
        # an answer noun alone is a word like any other
        "An answer.",
    ],
)
def test_a_word_with_answer_words_in_it_is_no_placeholder(reply: str) -> None:
    task = "What do you call a reply to a question?"
    for prompts in (_court_propose(task), []):
        assert check_substance(reply, prompts, task=task) is None, reply


@pytest.mark.parametrize(
    "reply",
    [
        "\x1b[1A\x1b[2K",
        # what is left once something stripped the ESC: the digits must not pass as words
        "[1A[2K",
        "[1A[2K[1A[2K\n[0m",
        "\x1b[2J\x1b[H",
        "\x1b]0;title\x07",
        "[?25l",
        "\x00\x07",
        "\x1b[31m\x1b[0m",
        # a reset with its ESC stripped, among control characters: a court position of the
        # embedded model's, taken as valid (a new user's run)
        "\x7f\x12[m",
        "[m",
    ],
)
@pytest.mark.parametrize("task", [FRANCE, None])
def test_control_and_escape_codes_are_invalid(reply: str, task: str | None) -> None:
    for prompts in (_arena_solve(FRANCE), []):
        problem = _invalid(reply, prompts, task)
        assert problem.reason is Reason.CONTROL
        assert "control or escape codes" in str(problem)
        assert str(problem).isprintable()


@pytest.mark.parametrize(
    "reply",
    [
        "\x1b[31mParis\x1b[0m",
        "[1A[2KParis",
        "See [2b]: Paris.",
        "[1] Paris",
        "Paris\r\n",
        "Paris, in [m] of the map.",
        "Paris, [m, n] on the map.",
        "\x1b[mParis",
    ],
)
def test_an_answer_among_escape_codes_or_brackets_is_an_answer(reply: str) -> None:
    assert check_substance(reply, _arena_solve(FRANCE), task=FRANCE) is None


@pytest.mark.parametrize(
    "reply",
    [
        ", no more than 40 words.",
        "no more than 40 words",
        "In at most three sentences.",
        "Under 100 words, please.",
        "Answer in one sentence.",
        "Reply with 2 paragraphs.",
        "Maximum of 5 bullet points.",
    ],
)
@pytest.mark.parametrize("task", [FRANCE, None])
def test_instruction_fragments_are_invalid(reply: str, task: str | None) -> None:
    for prompts in (_arena_solve(FRANCE), []):
        problem = _invalid(reply, prompts, task)
        assert problem.reason is Reason.INSTRUCTION
        assert "a piece of an instruction" in str(problem)


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        (FRANCE, "Paris, in no more than 40 words."),
        # a limit that answers a question about a size or a count
        ("How long can a post be?", "At most 280 characters."),
        ("What is the post limit, in characters?", "No more than 280 characters."),
        ("How many slides should the talk have?", "At most 10 points."),
    ],
)
def test_a_limit_that_answers_is_an_answer(task: str, reply: str) -> None:
    assert check_substance(reply, _arena_solve(task), task=task) is None


@pytest.mark.parametrize(
    ("task", "reply", "said"),
    [
        (TWO, "no", "no"),
        (TWO, "Yes.", "yes"),
        (FRANCE, "Absolutely not.", "no"),
        (FRANCE, "Yeah", "yeah"),
        (TWO, "I would vote yes.", "yes"),
        # alternatives are no yes/no question, and neither is an instruction
        (STORE, "No.", "no"),
        # a no named as the answer is still a bare no ("no" is no word of an answer's form here)
        (FRANCE, "The answer is no.", "no"),
        (FRANCE, "Your answer: no.", "no"),
        (FRANCE, "The answer should be no.", "no"),
        # the question's own auxiliary is no word of its subject ("should" to "Should a small
        # team use Postgres or SQLite ...?" passed this as an answer)
        (STORE, "The answer should be no.", "no"),
        (STORE, "Yes, it should.", "yes"),
        ("Which is better, Postgres or SQLite?", "Yes", "yes"),
        ("Pick a database for a session store.", "No.", "no"),
    ],
)
def test_a_bare_yes_or_no_to_another_question_is_invalid(task: str, reply: str, said: str) -> None:
    for build in BOTH_PROMPTS:
        problem = _invalid(reply, build(task), task)
        assert problem.reason is Reason.BARE_YES_NO
        assert f"a bare {said!r} to a question that is not a yes/no question" in str(problem)


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        (FRIDAY, "No."),
        (FRIDAY, "Absolutely not."),
        (MIGRATION, "Yes."),
        (MIGRATION, "no"),
        ("Isn't it safer to wait?", "Yes."),
        ("Can we ship today?", "Yes"),
        ("Were the tests green?", "No"),
        ("Has the build passed?", "Yes."),
        ("Would a cache help?", "No."),
        ("Is 2.5 bigger than 2?", "Yes"),
        ("Is it safe, or not?", "No"),
        ("Context: we run Postgres. Question: should we add Redis?", "No."),
        ("Given the load, is it safe to deploy?", "No."),
        ("Decide whether to deploy on Friday.", "No."),
        ("We have a migration ready.\nIs it safe to run it on Friday", "No."),
        (TWO, "No, 5."),
        (TWO, "4"),
        (TWO, "The answer is 4."),
        # a yes or no named as the answer: "no" ends its clause, so it is said, not a word of a
        # description ("an answer with no extra information"; all three were 'says how to answer')
        (FRIDAY, "The answer is no."),
        (FRIDAY, "My answer is no."),
        (FRIDAY, "Your answer: no."),
        (FRIDAY, "The answer should be no."),
        (FRIDAY, "My final answer is no, not on a Friday."),
        (FRIDAY, "The answer is yes."),
        (FRIDAY, "No, Friday deploys are risky."),
        ("Is 7 a prime number?", "Yes."),
        ("Is 7 a prime number?", "7 is prime."),
        # "yes or no" offers no alternatives, it asks for one (its "or" made "No." a bare no to
        # a question that is not a yes/no question)
        ("Is 91 prime, yes or no?", "No."),
        ("91 is prime. Yes or no?", "Yes"),
        ("Tell me, yes or no?", "Absolutely not."),
        ("Is it safe to deploy (yes/no)?", "No"),
        ("Is 91 a prime number? Answer yes or no.", "No."),
    ],
)
def test_a_yes_or_no_that_answers_is_an_answer(task: str, reply: str) -> None:
    for build in BOTH_PROMPTS:
        assert check_substance(reply, build(task), task=task) is None


NULLS = ["None", "null", "N/A", "n/a", "nil", "undefined", '"None".', "NULL!", "'n/a'", "N.A."]
EMPTY_LIST = "What does this Python function return when the list is empty?"


@pytest.mark.parametrize("reply", [*NULLS, "The answer is None.", "Answer: null", "None None"])
@pytest.mark.parametrize("task", [FRANCE, FRIDAY, TWO, "Is 7 a prime number?"])
def test_a_null_is_no_answer(reply: str, task: str) -> None:
    # what the embedded model wrote as whole answers, each taken for one
    for build in BOTH_PROMPTS:
        problem = _invalid(reply, build(task), task)
        assert problem.reason is Reason.NULL, problem
        assert str(problem) == f"it is a null value, not an answer ({reply!r})"


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        # a task about code or values takes any null
        (EMPTY_LIST, "None"),
        (EMPTY_LIST, "None."),
        ("What is `d.get('x')` for a new dict?", "None"),
        ("What does JSON.parse give for an empty body?", "null"),
        ("Which value does the field hold before the first save?", "undefined"),
        ("What do we return for a missing row, in Lua?", "nil"),
        ("What should the function return for an unknown user?", "N/A"),
        # one that asks which or how many takes "none" and "nil"
        ("How many moons does Venus have?", "None."),
        ("How many moons does Venus have?", "Nil."),
        ("Which of these options is safe: A, B or C?", "None"),
        # one about a division or a limit takes "undefined"
        ("What is 1/0?", "Undefined."),
        ("What is the slope of a vertical line?", "undefined"),
        # a null beside words of its own is an answer
        (FRANCE, "None of the options is safe; use a lock."),
        (FRANCE, "N/A: the API has no such endpoint, use /v2/items instead."),
        (FRIDAY, "None of the risks is worth it: no."),
        (TWO, "4, not None."),
        # a lone "n" is a letter, not "n/a"
        ("Which letter follows M?", "N."),
    ],
)
def test_a_null_that_answers_is_an_answer(task: str, reply: str) -> None:
    for build in BOTH_PROMPTS:
        assert check_substance(reply, build(task), task=task) is None, reply


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        ("How many moons does Venus have?", "null"),
        ("How many moons does Venus have?", "N/A"),
        ("Which of these options is safe: A, B or C?", "undefined"),
        ("What is 1/0?", "None"),
    ],
)
def test_a_null_answers_only_the_questions_it_can(task: str, reply: str) -> None:
    assert _invalid(reply, _arena_solve(task), task).reason is Reason.NULL


@pytest.mark.parametrize("reply", ["#TRUE,", "False.", "TRUE", "The answer is true."])
@pytest.mark.parametrize("task", [FRANCE, "How many moons does Venus have?", STORE])
def test_a_truth_value_is_no_answer_to_a_question_it_does_not_answer(reply: str, task: str) -> None:
    # a README run's agent answered "#TRUE," to "What is the capital of France?"
    for build in BOTH_PROMPTS:
        problem = _invalid(reply, build(task), task)
        assert problem.reason is Reason.NULL, problem
        assert str(problem) == f"it is a truth value, not an answer ({reply!r})"


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        # a yes/no question, one about code or values, one that speaks of truth
        ("Is 7 a prime number?", "True."),
        (FRIDAY, "FALSE"),
        ("What does bool([]) return in Python?", "False"),
        ("True or false: the Earth is flat.", "False."),
        ("Is the following statement correct? Water boils at 100 C at sea level.", "True"),
        # a truth value beside words of its own
        (FRANCE, "True: it is Paris."),
    ],
)
def test_a_truth_value_that_answers_is_an_answer(task: str, reply: str) -> None:
    for build in BOTH_PROMPTS:
        assert check_substance(reply, build(task), task=task) is None, reply


def test_without_the_task_a_null_cannot_be_judged() -> None:
    for reply in NULLS:
        assert check_substance(reply, _arena_solve(FRANCE), task=None) is None, reply


@pytest.mark.parametrize(
    "task",
    [
        "What does 'yes or no' mean in a form?",
        "Explain why people answer yes or no so quickly.",
        "Should we use Postgres or SQLite, yes or no?",
    ],
)
def test_yes_or_no_as_a_subject_or_beside_alternatives_asks_for_no_bare_yes_or_no(
    task: str,
) -> None:
    for build in BOTH_PROMPTS:
        assert _invalid("No.", build(task), task).reason is Reason.BARE_YES_NO


def test_without_the_task_a_bare_yes_or_no_cannot_be_judged() -> None:
    for reply in ("No.", "yes"):
        assert check_substance(reply, _arena_solve(TWO), task=None) is None


def test_hostile_replies_for_the_new_rules_are_judged_quickly() -> None:
    prompts = _arena_solve(FRANCE)
    hostile = [
        "\x1b[" * 3_000_000,
        "[1" * 3_000_000,
        "[1;" * 2_000_000 + "A",
        ", no more than 40 words. " * 300_000,  # 25 characters: the cuts fall between copies
        "words " * 1_000_000,
        "yes " * 1_000_000,
        "you are an ai " * 500_000,
    ]
    started = time.perf_counter()
    verdicts = [check_substance(text, prompts, task=TWO) for text in hostile]
    assert time.perf_counter() - started < 10
    assert verdicts[3] is not None and verdicts[3].reason is Reason.INSTRUCTION
    for verdict in verdicts:
        if verdict is not None:
            assert str(verdict).isprintable() and len(str(verdict)) < 200
    long_question = "Is it " + "very " * 1_000_000 + "safe?"
    started = time.perf_counter()
    assert check_substance("No.", prompts, task=long_question) is None
    assert time.perf_counter() - started < 5


# -- the rules' edges, each pinned where a changed rule would change a verdict ------------------
# (benchmarks/mutation.py runs mutmut over this module with this file; these tests are what
# tells its mutants from the rules)

SYSTEM_COPY = "You are one of 3 independent experts working on the same task. Each expert"


@pytest.mark.parametrize(
    ("reply", "prompts", "task", "detail"),
    [
        ("", [], None, "it is empty"),
        ("<solution>\n</solution>", [], None, "it holds only protocol markup"),
        ("!" * 60, [], None, f"it holds no words ('{'!' * 60}')"),
        ("!" * 61, [], None, f"it holds no words ('{'!' * 60}...')"),
        ("\x00\x01", [], None, "it holds only control or escape codes ('??')"),
        ("{{...}}", [], None, "it is a placeholder ('{{...}}')"),
        ("{{answer}}", [], None, "it only repeats the prompt's template ('{{answer}}')"),
        ("SOLUTION}", [], FRANCE, "it is a fragment of a template ('SOLUTION}')"),
        ("it is", [], None, "it says nothing of substance ('it is')"),
        ("I'm sorry, it is", [], None, 'it refuses to answer ("I\'m sorry,")'),
        ("I can’t help with that.", [], None, "it refuses to answer ('I can’t help with that.')"),
        # folding changed the length: the sample is the folded text
        (
            "I can't help with the ﬁle.",
            [],
            None,
            'it refuses to answer ("i can\'t help with the file.")',
        ),
        (
            ", no more than 40 words.",
            [],
            None,
            "it is a piece of an instruction, not an answer ('no more than 40 words.')",
        ),
        ("x y z " * 7, [], None, "it repeats the same few words ('x y z x y z x y ...')"),
    ],
)
def test_the_detail_names_what_is_wrong(
    reply: str, prompts: list[str], task: str | None, detail: str
) -> None:
    assert str(_invalid(reply, prompts, task)) == detail


def test_the_detail_of_instructions_and_talk_in_full() -> None:
    fragment = _invalid("Solution.", _arena_solve(FRANCE), FRANCE)
    assert str(fragment) == "it only repeats words of the instructions ('Solution.')"
    meta = _invalid("Here is my answer:", [], None)
    assert str(meta) == (
        "it talks about the debate, the instructions or being an AI instead of answering "
        "('Here is my answer:')"
    )
    bare = _invalid("No.", [], TWO)
    assert str(bare) == "it is a bare 'no' to a question that is not a yes/no question ('No.')"


def test_a_curly_apostrophe_is_read_as_one() -> None:
    assert _invalid("I can’t help with that.", [], FRANCE).reason is Reason.REFUSAL
    assert _invalid("As an AI, I won’t answer.", [], FRANCE).reason is Reason.REFUSAL


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        # twenty words, three of them: a loop; nineteen, or four different, are not
        ("x y z " * 6 + "x y", Reason.REPETITION),
        ("x y z " * 6 + "x", None),
        ("w x y z " * 5, None),
    ],
)
def test_repetition_starts_at_twenty_words_of_three(reply: str, reason: Reason | None) -> None:
    problem = check_substance(reply, [], task=None)
    assert (problem and problem.reason) == reason


def test_the_reason_that_masks_most_names_the_reply_ties_the_first() -> None:
    # eight characters of template and eight of escape codes: the first one named
    assert _invalid("[your x] \x1b[2K\x1b[2K", [], None).reason is Reason.TEMPLATE
    assert _invalid("\x1b[2K [your x] \x1b[2K", [], None).reason is Reason.CONTROL
    # a refusal wins a tie
    assert _invalid("[your x] I refuse.", [], None).reason is Reason.REFUSAL
    # more characters win
    assert _invalid("[your answer] \x1b[2K", [], None).reason is Reason.TEMPLATE


@pytest.mark.parametrize(
    ("reply", "task", "valid"),
    [
        # a stray word after a copy: an answer while the copy is under ten times as long
        (SYSTEM_COPY.split(" of 3")[0] + " of 3 independent experts working on. Okay.", None, True),
        (SYSTEM_COPY.split(" the same")[0] + " the. Okay.", None, False),
        # three words of its own after a long copy are still a stray remark; four are not
        (_arena_solve(FRANCE)[0] + " Paris Lyon Nice.", FRANCE, False),
        (_arena_solve(FRANCE)[0] + " Paris Lyon Nice Lille.", FRANCE, True),
        # three words copied whole, nothing else
        ("the key decisions", None, False),
        ("Plan changes solution.", FRANCE, False),
    ],
)
def test_a_copy_with_a_few_words_of_its_own(reply: str, task: str | None, valid: bool) -> None:
    problem = check_substance(reply, _arena_solve(FRANCE), task=task)
    assert (problem is None) == valid, problem
    if problem is not None:
        assert problem.reason is Reason.ECHO


@pytest.mark.parametrize(
    ("reply", "valid"),
    [
        # a mask covers what it matched, not the answer before or after it
        ("Paris. <your answer here>", True),
        ("<your answer here> Paris", True),
        ("Paris\n## PLAN", True),
        ("Paris. I can't help with more.", True),
        ("## Paris", True),
        ("## PLAN\n## CHANGES", False),
        # a label whose value is empty is template, whatever the label
        ("Answer: , it is.", False),
        ("Confidence: { confidence }", False),
        ("Solution: it is.", False),
        # braces doubled on one side only
        ("{{name} Paris}", False),
        ("{Paris {x}}", False),
    ],
)
@pytest.mark.parametrize("task", [FRANCE, None])
def test_masks_cover_what_they_matched(reply: str, valid: bool, task: str | None) -> None:
    problem = check_substance(reply, _arena_solve(FRANCE), task=task)
    assert (problem is None) == valid, problem
    if problem is not None:
        assert problem.reason is Reason.TEMPLATE


def test_the_words_on_either_side_of_a_quote_are_no_run() -> None:
    quoted = quote("Agent B", "Use SQLite in WAL mode.", nonce="0c218a4f73d5", limit=4000)
    prompt = f"Decide between Postgres and Paris\n{quoted}\nfor sure this time."
    assert check_substance("Paris for sure.", [prompt], task=None) is None
    assert _invalid("Paris for sure.", [prompt.replace(quoted, "")], None).reason is Reason.ECHO


def test_an_instruction_covers_the_limit_not_the_answer_after_it() -> None:
    assert check_substance("In at most 5 words: Paris is the capital.", [], task=None) is None


@pytest.mark.parametrize("reply", ["Answer: , it is.", "Confidence: { confidence }."])
def test_a_label_with_no_word_of_its_own_is_template_whatever_its_name(reply: str) -> None:
    assert _invalid(reply, [], None).reason is Reason.TEMPLATE
    # once its value holds a word of the model's own, the label is a word like any other
    assert (
        check_substance(
            reply.replace(",", "Paris,").replace("{ confidence }", "high"), [], task=None
        )
        is None
    )


def test_a_label_the_prompt_spells_without_hyphens_is_template() -> None:
    # the court's format asks for "newPositionText"
    problem = _invalid("New-Position-Text: it is.", _court_propose(STORE), STORE)
    assert problem.reason is Reason.TEMPLATE


def test_each_limit_is_judged_on_its_own() -> None:
    # the first limit is in the task's unit (and restates it), the second is an instruction
    task = "Should the summary be counted in words?"
    reply = "Counted in words, no more than 3 sentences."
    assert _invalid(reply, [], task).reason in (Reason.INSTRUCTION, Reason.ECHO)


def test_only_filler_words_say_nothing() -> None:
    problem = _invalid("it is", [], None)
    assert problem.reason is Reason.ECHO and "nothing of substance" in str(problem)


def test_a_stray_brace_beside_a_real_answer_is_no_template() -> None:
    assert check_substance("Use SQLite: one file, no server to run :-}", [], task=None) is None


def test_a_placeholder_after_the_task_is_template() -> None:
    reply = f"{FRANCE} [{'.' * 100}]"
    assert _invalid(reply, _arena_solve(FRANCE), FRANCE).reason is Reason.TEMPLATE


def test_a_single_prompt_text_is_read_whole() -> None:
    prompt = _arena_solve(FRANCE)[1]
    problem = check_substance(prompt, prompt, task=FRANCE)
    assert problem is not None and problem.reason is Reason.ECHO


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        ("Should the abstract be counted in words or characters?", "At most 200 words."),
        ("What counts as a word?", "No more than 3 words."),
        ("How are sentences counted?", "At most one sentence."),
    ],
)
def test_a_limit_in_the_tasks_own_unit_is_an_answer(task: str, reply: str) -> None:
    assert check_substance(reply, _arena_solve(task), task=task) is None


@pytest.mark.parametrize(
    ("task", "reply", "valid"),
    [
        ("What do we know? Is it safe to deploy?", "No.", True),
        ("Is it safe to deploy on Friday? Answer briefly.", "No.", True),
        ("Well,, should we deploy?", "No.", True),
        ("We have a migration ready.\nIs it safe to run it on Friday\n", "No.", True),
        ("Explain the risks, then say whether", "No.", True),
        ("Is it safe to deploy? What would you change?", "No.", False),
        ("?", "No.", False),
    ],
)
def test_the_question_is_the_last_one_asked(task: str, reply: str, valid: bool) -> None:
    problem = check_substance(reply, [], task=task)
    assert (problem is None) == valid, problem


def test_a_reply_is_scanned_at_its_head_and_its_tail() -> None:
    # the head and the tail together, when that is all of it: "No" is read whole
    whole = " " * 15_999 + "No" + " " * 3_999
    assert len(whole) == substance.REPLY_HEAD + substance.REPLY_TAIL
    assert _invalid(whole, [], TWO).reason is Reason.BARE_YES_NO
    # longer: the middle is left out, and nothing is added where it was
    cut = " " * 30_000 + "No"
    assert _invalid(cut, [], TWO).reason is Reason.BARE_YES_NO
    assert _invalid("Yes" + " " * 30_000 + "No", [], TWO).reason is Reason.BARE_YES_NO
    assert check_substance("Paris" + " " * 10_000 + "x" * 30_000 + " Lyon", [], task=None) is None


@pytest.mark.parametrize("position", ["start", "second", "cut"])
def test_quoted_material_anywhere_in_a_prompt_is_not_instructions(position: str) -> None:
    solution = "Use SQLite in WAL mode."
    other = "Use Postgres with a pool of ten connections and nightly backups."
    first = quote("Agent B", other, nonce="0c218a4f73d5", limit=4000)
    second = quote("Agent C", solution, nonce="9d3e1f0a6b27", limit=4000)
    prompt = {
        "start": f"{second}\nRevise.",
        "second": f"Revise your solution.\n{first}\n{second}\nKeep what is right.",
        # a prompt capped inside the second quote: what follows its opener is quoted too
        "cut": f"Revise your solution.\n{first}\n{second}".split('</quoted id="9d3e')[0],
    }[position]
    assert check_substance(solution, [prompt], task=STORE) is None
    assert check_substance(other, [prompt], task=STORE) is None


PRIME = "Is 7 a prime number?"


@pytest.mark.parametrize(
    "reply",
    [
        # what the embedded model wrote: the task, numbered, and the task again (it passed: the
        # number was a word of its own beside a copy of the task, which does not count)
        "Is 7 a prime number? #1: Is 7 a prime number?",
        "#1: Is 7 a prime number?\n#2: Is 7 a prime number?",
        "1. Is 7 a prime number?\n2. Is 7 a prime number?",
        "(1) Is 7 a prime number? (2) Is 7 a prime number?",
        "[1] Is 7 a prime number?",
        "1) Is 7 a prime number? 2) Is 7 a prime number?",
        "Q1: Is 7 a prime number?",
        "Question 1: Is 7 a prime number?",
        # (a copy opens like the task, or like a question: "is" here)
        "1) is 7 a prime number",
    ],
)
def test_a_numbered_copy_of_the_task_is_an_echo(reply: str) -> None:
    for prompts in (_arena_solve(PRIME), _court_propose(PRIME), []):
        problem = _invalid(reply, prompts, PRIME)
        assert problem.reason is Reason.ECHO, (reply, problem)


def test_a_numbered_copy_of_a_task_that_is_no_question_is_an_echo() -> None:
    task = "Plan the migration of a service."
    for reply in ("1. Plan the migration of a service.", "#1: Plan the migration of a service."):
        assert _invalid(reply, [], task).reason is Reason.ECHO


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        # a number before an answer of its own, or one that is the answer
        (PRIME, "Is 7 a prime number?\n1. Yes, 7 is prime."),
        (PRIME, "#1: Yes, 7 is prime."),
        (PRIME, "Is 7 a prime number? Yes."),
        (TWO, "What is 2+2? 4. What is 2+2?"),
        (TWO, "What is 2+2?\n4"),
        ("Which issue fixed the crash?", "#1234"),
        ("Which issue fixed the crash?", "Which issue fixed the crash? #1234."),
        # a number before a piece of the task that does not open it: the number is the answer
        ("Which issue fixed the login crash?", "#12 fixed the login crash."),
        ("Which issue fixed the login crash?", "#12: fixed the login crash"),
        ("How many moons does Mars have?", "(2) moons does Mars have"),
    ],
)
def test_a_number_beside_a_copy_of_the_task_may_be_the_answer(task: str, reply: str) -> None:
    for prompts in (_arena_solve(task), _court_propose(task), []):
        assert check_substance(reply, prompts, task=task) is None, reply


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        # plain answers beside the rules for nulls, bare yes/no, placeholders and numbered copies
        ("Which of these locks is safe to skip?", "None of the options is safe; use a lock."),
        (
            "Which endpoint lists the items?",
            "N/A: the API has no such endpoint, use /v2/items instead.",
        ),
        (PRIME, "Yes."),
        (FRIDAY, "No, Friday deploys are risky."),
        (PRIME, "7 is prime."),
        ("How should the worker pick jobs?", "Use a queue."),
        ("What is 6 x 7?", "The answer is 42."),
    ],
)
@pytest.mark.parametrize("given", [True, False])
def test_plain_answers_stay_answers(task: str, reply: str, given: bool) -> None:
    for prompts in (_arena_solve(task), _court_propose(task), []):
        assert check_substance(reply, prompts, task=task if given else None) is None, reply


def test_hostile_numbers_placeholders_nulls_and_ai_talk_are_judged_quickly() -> None:
    hostile = [
        "1) is 7 a prime number " * 200_000,
        "#1: " * 1_000_000 + "is 7 a prime number",
        "1.\n" * 1_000_000,
        "youranswer " * 500_000,
        "your_" * 1_000_000 + "answer",
        "None " * 1_000_000,
        "ai models " * 500_000,
        "The answer should be " + "blue " * 1_000_000,
    ]
    started = time.perf_counter()
    verdicts = [check_substance(text, _arena_solve(PRIME), task=PRIME) for text in hostile]
    assert time.perf_counter() - started < 5
    assert verdicts[0] is not None and verdicts[0].reason is Reason.ECHO
    for verdict in verdicts:
        assert verdict is None or (str(verdict).isprintable() and len(str(verdict)) < 200)


def test_the_instructions_after_a_quote_are_instructions() -> None:
    quoted = quote("Agent B", "Use SQLite in WAL mode.", nonce="0c218a4f73d5", limit=4000)
    after = "Keep what is right and fix what is wrong, each with its reason."
    problem = _invalid(after, [f"Revise your solution.\n{quoted}\n{after}"], STORE)
    assert problem.reason is Reason.ECHO


# -- moot's own markup echoed back: the ids of the prompt's quote fences ----------------------
# The embedded model answered a revise prompt with nothing but "539817c2d0b6", the id of a fence
# around another agent's solution, and it counted as an answer. An id moot drew for a fence is
# its markup, not words of the model's own, wherever in the reply it stands.
FENCED = ("539817c2d0b6", "0c218a4f73d5")


def _revise_quoting(task: str) -> list[str]:
    """The arena's revise ask, quoting two critiques in fences with the ids `FENCED`."""
    critiques = "\n\n".join(
        quote(f"Agent {name}", text, nonce=fence, limit=4000)
        for name, text, fence in zip(
            "BC", ("Use SQLite in WAL mode.", "Use Postgres with a pool."), FENCED, strict=True
        )
    )
    revise = arena.REVISE.format(critiques=critiques, format=arena.REVISED_FORMAT)
    return [arena.SYSTEM.format(n=3), arena.SOLVE.format(task=task, format=arena.FORMAT), revise]


@pytest.mark.parametrize(
    "reply",
    [
        "539817c2d0b6",  # what the embedded model wrote
        "0C218A4F73D5.",
        "539817c2d0b6 0c218a4f73d5\n539817c2d0b6",
        # the fence's own words around its id are the fence too
        'id="539817c2d0b6"',
        "quoted from Agent B, id 539817c2d0b6",
        "(id: 0c218a4f73d5)",
    ],
)
@pytest.mark.parametrize("task", [STORE, None])
def test_an_echo_of_a_fence_id_is_no_answer(reply: str, task: str | None) -> None:
    problem = _invalid(reply, _revise_quoting(STORE), task)
    assert problem.reason is Reason.MARKUP_ONLY, problem
    assert str(problem).startswith("it holds only protocol markup ('")


def test_a_fence_id_beside_an_answer_or_outside_any_fence_is_no_echo() -> None:
    prompts = _revise_quoting(STORE)
    for reply in (
        "539817c2d0b6: use SQLite in WAL mode.",
        "I agree with Agent B (id 539817c2d0b6): SQLite.",
    ):
        assert check_substance(reply, prompts, task=STORE) is None, reply
    # an id is markup only where a fence of the prompts carries it: the same word as an answer
    # to a prompt with no such fence is an answer (a commit, a key), whatever it looks like
    task = "Which commit broke the build?"
    assert check_substance(FENCED[0], _arena_solve(task), task=task) is None
    assert check_substance("9d3e1f0a6b27", prompts, task=task) is None
    # the label of a fence, without its id beside it, is no fence: "C" may name the answer
    for reply in ("B", "Agent C", "C, not 539817c2d0b6."):
        assert check_substance(reply, prompts, task="Which agent is right, B or C?") is None


def test_a_word_of_the_task_is_an_answer_even_where_the_instructions_use_it_too() -> None:
    """'C' to 'A, B, C or D?' was an echo of the instructions because the system prompt
    names the agent 'Agent C'."""
    task = "Which option is right: A, B, C or D?"
    prompts = [f"You are Agent C, one side of a debate.\n\nTask:\n{task}", "State your position."]
    assert check_substance("(C)", prompts, task=task) is None
    assert check_substance("C", prompts, task=task) is None
    problem = check_substance("Agent", prompts, task=task)
    assert problem is not None and problem.reason is Reason.ECHO


def test_talk_about_the_task_or_the_answers_form_is_no_answer() -> None:
    """Both ended the embedded model's runs in 'converged by persuasion' (benchmarks/
    default_run.py): two agents copied one sentence about the task."""
    task = "What is the capital of France?"
    prompts = [f"Task:\n{task}\n\nWrite your answer."]
    for reply in (
        "This task requires you to analyze the answer itself.",
        "The answer must be a single sentence,",
    ):
        problem = check_substance(reply, prompts, task=task)
        assert problem is not None and problem.reason is Reason.META, reply
    for reply in ("Be concise.", "This question is about Paris.", "Paris"):
        assert check_substance(reply, prompts, task=task) is None, reply


# -- talk about how to answer (issue 29, "Consensus is moot's finding") -----------------------
# The embedded model wrote fluent talk about the answer in words no fixed list of talk holds,
# and two agents that copied it "converged by persuasion".
ANSWER_TALK = [
    # what the embedded model wrote (each names the answer a different way: "your solution";
    # "your answer"; "the solution should"; "provide a more detailed explanation")
    "Your solution requires specific conditions for editing; you must provide a clear list of "
    "requirements.",
    "You need to make sure your answer follows the required format and includes the necessary "
    "details.",
    "The solution should clearly address the question and explain each step in detail.",
    "Please provide a more detailed explanation of your reasoning and include examples.",
    # more of the kind
    "Please provide a more detailed explanation and include examples.",
    "Your answer should be clear, specific and well structured.",
    "Make sure your response addresses every part of the question.",
    "Your reasoning lacks detail; explain each step more clearly.",
    # the answerer's answer only pointed at, or talked of as the one before ("your answer" and
    # "original" were no words of such talk: each passed)
    "your answer",
    "Your original answer.",
    "Your previous answer.",
    "Refer to your initial answers.",
    "Your original solution lacks detail; explain each step.",
    "The answer must include a justification and relevant examples.",
    "Give a clear explanation of your approach.",
    "Each solution should follow the required format.",
    "My answer should include more details and examples.",
    "You must provide a complete solution that meets all the requirements.",
    "Your solution does not address the question.",
    "Show your reasoning step by step.",
    "An answer needs sufficient context and accurate information.",
    # a directive about the answer in words no list holds: every sentence has the answer as its
    # subject, and nothing concrete follows its modal verb (the default run's embedded model
    # wrote the first; two agents copied it and "converged by persuasion")
    "Your answer should be concise yet informative.",
    "Your answer should be concise yet informative, explaining why one is better than the other.",
    # (in words that describe an answer, after a colon too)
    "Your answer should be concise: brief and clear.",
    "Each response should be succinct, polite and persuasive.",
    "The answer should be well organized, easy to read and free of jargon.",
    "Your answer should be clear and understandable, not overly technical.",
    "Each response must be well reasoned and polite.",
    "The final answer should sound confident; your reasoning ought to be persuasive.",
    "- Your response needs to be engaging and friendly.",
    # what the README's first run gave (SmolLM2 on "What is the capital of France?")
    "Your ENTIRE answer will be written in two paragraphs.",
    "This text will be rewritten with this two sections:",
    # what the answer must be or hold, in words about answers and their form only
    "Your answer must be a single sentence.",
    "Your response must include a clear title and bullet points.",
    # a directive nested after a colon, around an alphabet: the README's first run certified it
    # by persuasion (two of three SmolLM2 agents ended on it)
    "Your Answer Must be: Your answer must contain a clear title case "
    "1234567890ABCDEFGHIJKLMNOPQRSTUVWXYZ Z",
    "The answer should be: your answer must be short and formal.",
    "Your answer must be: Your response should sound warm and engaging.",
    "Each answer must have a formal tone and plain language.",
    # a description of an answer in place of one (the README's first run ended on the first)
    "A concise answer with no extra information.",
    "A short, clear and specific answer.",
    "An informative and engaging answer.",
    "Your answers are informative, persuasive and well organized.",
    # (and the talk rule reads those words too, where no sentence names the answer alone)
    "Your answers are informative. They are persuasive and well organized.",
    # (a "no" before a word is one of the description's: it says no answer is given)
    "Your answer must contain no extra information and no examples.",
    # a parenthesis of plain words is prose, not code (a README run's first answer)
    "Your answers must be written exactly in two sections: one for the answer itself (single "
    "sentence) and another with your entire description of the question, code or something "
    "specific about the questions.",
    # a graded description (two of three SmolLM2 agents ended on it, by persuasion)
    "the most straightforward answer ever.",
    "The best possible answer.",
    # what an answer is not, in words of its form (a README run's first answer)
    "Your Answer Is Not a Number,",
    # an answer graded against another agent's (two of three SmolLM2 agents ended on the first,
    # by persuasion, in a README run; one had said "The capital of France is Paris." first)
    "The answer is always better than yours so what I can say to you.",
    "My answer is better than yours.",
    "Your answer is always worse than mine.",
    # what an answer is made of, or what the task asks of one, in words about answers only
    # (README runs at 8b077e5 and d142ae7: each passed as valid)
    "Your answer consists of multiple steps.",
    "This task requires clarity, specificity, conciseness.",
    "The question calls for precision and brevity.",
    # a placeholder left in words, and a verdict on "the solution" that names nothing (both
    # final answers of a README run at 908097f, each taken as valid)
    "your response here! your answer.",
    "The solution contains no errors.",
    # what two SmolLM2 agents ended on, 'consensus' by persuasion, exit 0 (a README run at fac6570)
    "You can use this solution in your answer.",
    # and 'consensus' by persuasion on this one, in another README run at fac6570
    "This task involves several crucial steps that require a flexible mindset.",
    # a bracket left open at the end is nothing concrete (a README run's revision ended so)
    "Your answer should be concise yet informative (",
    'Each response must be well reasoned "',
    # a number that counts the answer's parts says how to answer, not what (the embedded model
    # wrote the first, and it passed as an answer: "two" and "one" were words of substance)
    "Your answer should be a clear text that has exactly two sections of one or more lines "
    "separated by dividers.",
    "Your answer should have 3 sections.",
    "Please provide a more detailed explanation in two short paragraphs.",
    # what the task takes, or how well the answers are made, in words of the work and its grade
    # (both passed: "planning", "attention", "perfectly", "prepared" were no words of talk)
    "This task requires careful planning and attention to detail.",
    "Your answers are perfectly prepared for this task.",
    "The question demands effort, focus and diligence.",
    "This problem calls for perfect planning.",
    "Your solution shows excellent preparation and rigor.",
    "The task needs expertise, insight and creativity.",
    "A carefully planned and perfectly prepared answer.",
    # the faculties the work takes, and what to be ready for (the embedded model wrote the first;
    # it passed: "critical" and "unexpected" were no words of the work)
    "This task requires critical thinking skills; be prepared for the unexpected.",
    "This question demands analytical skills, good judgment and an open mind.",
    "The task calls for problem-solving skills, persistence and adaptability.",
    "Your answer requires curiosity, imagination and resilience.",
    "This problem needs focus and patience; expect surprises and obstacles.",
    # what an answer should hold, in words of its form and work: two of three SmolLM2 agents
    # ended on the first, 'consensus' by persuasion, exit 0 (the README's first command at
    # 057ef23; "plan" and "lists" were words of substance there)
    "Your Answer should be a detailed plan with numbered lists.",
    "Your answer should be in numbered lists.",
    "Your answer must be the best possible numbered list.",
    # a README run's final answer for agent A (no consensus; "us" and "choose" were substance)
    "This task requires us to carefully choose our words.",
    "This task requires careful word choice.",
    # what the reader's answer is, naming nothing: two of three SmolLM2 agents ended on the
    # first, 'consensus' by persuasion, exit 0 (the README's first command at 6b4c568)
    "Your Answer Is A Unique Solution: Your answer must be a single sentence that contains only "
    "one paragraph of text.",
    "Your Answer Is Unique To The Question You Are Asking.",
    "Your Answer Is Not a Function of the World",
    "Your answer is correct.",
    "Your Answer is not a valid answer.",
    "Your answer is the best one I have seen.",
    # two of three SmolLM2 agents ended on it, 'consensus' by persuasion, exit 0, in a tryout
    # of "Should a small team use Postgres or SQLite for a session store?" ("mentioned" and
    # "document" were words of substance)
    "The best answer should be a single sentence that covers all points mentioned in this "
    "document.",
    # what an answer should meet, in words of what was asked of it, and what the reader's answer
    # has or will be, in words of how an answer reads: the embedded model's answers in README
    # runs, each taken as valid beside two agents' "The capital of France is Paris." ("meets",
    # "specified", "requirements", "information", "value", "accordingly" were words of substance;
    # "however." a sentence of its own)
    "Your Answer should be a concise answer that meets the specified requirements.",
    "Your Answer should be a concise answer that provides the most relevant information for "
    "your question.",
    "Your answer must be a single sentence with the specified information.",
    "Your Answer has no value in this task.",
    "Your answers are perfectly prepared for this task. Your answer will be tailored accordingly.",
    "Your answers are already correct; however.",
    # the README's first command at e46ad3c: the one agent's answer that was not Paris, counted
    # as "another answer" ("key" was a word of substance)
    "Your Answer Is A Unique Solution: Your answer contains a single sentence that includes the "
    "key decisions of your task.",
]
MIGRATE = "How do I make a database migration safe?"


@pytest.mark.parametrize("reply", ANSWER_TALK)
@pytest.mark.parametrize("task", [FRANCE, STORE, MIGRATE, TWO, None])
def test_talk_about_how_to_answer_is_no_answer(reply: str, task: str | None) -> None:
    # (the task's "should" and "make" are no word of its subject: "should" to "Should a small
    # team use Postgres ...?" does not make "The solution should ..." an answer)
    for build in BOTH_PROMPTS:
        problem = _invalid(reply, build(task or STORE), task)
        assert problem.reason is Reason.META, (reply, task, problem)
        assert str(problem).startswith("it says how to answer instead of answering ('")


@pytest.mark.parametrize(
    ("task", "reply"),
    [
        # second person and imperative advice about the subject is an answer
        (STORE, "Your service should use SQLite."),
        (STORE, "You should use Postgres for this workload."),
        ("How do I speed up lookups by user?", "Use a B-tree index on user_id."),
        (
            "Why does the counter lose updates?",
            "You need a mutex around the counter; the race is in increment().",
        ),
        (
            "Why does my function crash on an empty list?",
            "Your function returns None when the list is empty; add a guard.",
        ),
        (FRANCE, "Paris."),
        (FRANCE, "Paris is our choice."),
        # what the reader's answer has or will do, in words of the subject
        (
            "Why do the writes go missing?",
            "Your solution has a race between the read and the write.",
        ),
        (MIGRATE, "Your answer will need a shadow table."),
        (STORE, "Your answer meets the requirements: use SQLite."),
        (FRANCE, "Your answer has one fault: it is Lyon, not Paris. However."),
        # what the reader's answer is, naming something: a name, a word of the task, or a
        # clause of substance joined to it
        (FRANCE, "Your answer is Paris."),
        (FRANCE, "Your answer is the best one I have seen, Marseille."),
        ("What is the capital of Ireland?", "Your answer is Éire."),
        (FRANCE, "Your answer is wrong, it is Paris."),
        (FRANCE, "Your answer is wrong: the capital is Lyon."),
        (STORE, "Your answer is wrong: use a queue."),
        ("Why does the counter lose updates?", "Your solution is fine but the lock is missing."),
        ("How should the worker pick jobs?", "Your answer is a worker pool."),
        (MIGRATE, "Your solution is a blue green deployment with a shadow table and dual writes"),
        (STORE, "We choose SQLite."),
        (TWO, "The answer is 42."),
        # a parenthesis that holds a name or code is concrete
        (STORE, "Your answer should be short (SQLite)."),
        (STORE, "Your answer should be short: call open_db(path) once."),
        # a graded answer noun beside something of substance, or a grade the task asks for
        (FRANCE, "The most straightforward answer: Paris."),
        ("Which approach is the simplest?", "The simplest approach."),
        (MIGRATE, "Make sure the migration runs in a transaction."),
        # the answer named beside something of substance
        (STORE, "Your solution should handle a second writer: use Postgres."),
        ("How should the worker pick jobs?", "The solution should use a queue."),
        (TWO, "Your answer is wrong: 2 + 2 = 4."),
        ("Which HTTP spec should I cite?", "Your explanation should cite RFC 9110."),
        (TWO, "The answer should be 4."),
        (
            "How do I document the API?",
            "Provide a detailed explanation of the error codes in the API docs.",
        ),
        # advice to the answerer that does not name the answer
        ("How do I write a good README?", "Include examples."),
        ("How do I write a good README?", "Add more details and examples."),
        # the task's own words are the answer's ("explanation", "clear")
        ("What makes an explanation clear?", "A clear explanation should show each step."),
        ("What must each answer on the quiz include?", "Each answer must include a justification."),
        # a directive about the answer with something concrete in it is a hedged answer
        (STORE, "Your answer should be SQLite."),
        (STORE, "Your answer should be concise: use SQLite until a second writer appears."),
        (TWO, "Your answer should be 4, not 5."),
        ("Which function fails?", "The answer should name parse_config()."),
        (STORE, "Use SQLite. Your answer should be short."),
        (FRANCE, "The answer should be Paris."),
        ("How should the worker pick jobs?", "The answer should be a queue."),
        # what follows the colon is the answer, and a word of the subject after "should be" names
        # it (all three were 'says how to answer': any lowercase words after "be" were talk)
        ("How should the worker pick jobs?", "The answer should be simple: use a queue."),
        ("How should the worker pick jobs?", "Your answer should be concise: use a queue."),
        ("How should the worker pick jobs?", "The answer should be simple, use a queue."),
        ("What colour is the sky on a clear day?", "The answer should be blue."),
        ("How do I traverse the tree?", "The solution should be recursive."),
        ("What sign does the slope have?", "The answer should be positive."),
        ("How should the retry handler behave?", "The solution should be idempotent."),
        ("Which state of matter is ice?", "The answer should be solid."),
        (FRANCE, "Your answer must be: Paris"),
        (FRANCE, "A concise answer: Paris."),
        ("What makes an answer concise?", "A concise answer has no extra information."),
        ("How should I plan the migration?", "A careful approach with a rollback step."),
        ("Which tone should the docs take?", "A formal tone in every answer."),
        ("Why does the counter lose updates?", "The solution must contain a mutex."),
        ("Which option is safest: A, B or C?", "The answer must be B."),
        ("Which letters does the code use?", "The answer must contain ABCDEF and Z."),
        (STORE, "The answer should be: keep the session store small."),
        # the task asks about the answer itself: its words are the subject's
        ("How should my answer sound to the client?", "Your answer should sound calm and warm."),
        (FRANCE, "The answer will be Paris."),
        ("What does parse() return?", "The answer is not a number but a string."),
        (TWO, "The answer is not 5."),
        ("Is the answer a number?", "The answer is not a number."),
        # a grade beside something of substance, or an answer that names the other agent's
        (FRANCE, "The answer is always Paris, whatever yours says."),
        (TWO, "My answer is better than yours: 4."),
        ("Which is faster, a hash map or a list?", "A hash map is always faster than a list."),
        ("How should the text on the slide look?", "The text should be short and bold."),
        ("What does the parser return?", "The output will be a list of tokens."),
        # what the task or an answer needs, in words of the subject
        (MIGRATE, "This task requires a transaction and a rollback plan."),
        (STORE, "Your answer consists of two parts: SQLite now, Postgres later."),
        (MIGRATE, "The migration consists of multiple steps."),
        ("How precise must the timer be?", "The task requires precision to a millisecond."),
        (STORE, "Your answer here: SQLite."),
        (STORE, "You can use SQLite in your solution."),
        (MIGRATE, "This task involves a crucial step: take a backup before the migration."),
        (STORE, "Your approach has a flaw: SQLite cannot take a second writer."),
        ("Does my solution contain errors?", "The solution contains no errors."),
        # a number of the subject, not a count of the answer's parts
        ("Which pairs of positive integers sum to 5?", "There are two pairs: (1,4) and (2,3)."),
        (TWO, "The answer is 2."),
        (
            "How do I find a pair with a given sum in a sorted array?",
            "Use two pointers from both ends.",
        ),
        ("Which is the smallest prime?", "Your answer should be two."),
        # (beside a count of the answer's parts, the same number as an answer)
        ("Which is the smallest prime?", "Two. Provide a detailed explanation in two paragraphs."),
        ("Which is the smallest prime?", "Your answer should be two, in two paragraphs."),
        (STORE, "Your answer should have two sections: SQLite now, Postgres later."),
        # a count of parts that the task asks about, or where it asks for a size
        ("How many sections should a design doc have?", "Your answer should have two sections."),
        ("What is the right length for an abstract?", "Your answer should have two paragraphs."),
        # the words of the work and its grade about a subject, or where the task asks of them
        (
            MIGRATE,
            "Careful planning of the schema migration avoids downtime: add the column, backfill, "
            "then switch reads.",
        ),
        (
            "How does attention work in a transformer?",
            "Attention heads in a transformer attend over the previous tokens.",
        ),
        ("How do I prevent SQL injection?", "Prepared statements prevent SQL injection."),
        (
            "How do I keep a deploy from breaking users?",
            "This task requires careful planning: ship behind a feature flag, then ramp up.",
        ),
        ("How much planning does this task take?", "This task requires careful planning."),
        (MIGRATE, "This task requires a critical fix: take a backup before the migration."),
        (
            "How do I handle unexpected errors in the worker?",
            "Be prepared for the unexpected: catch the exception and retry.",
        ),
        ("How much judgment does the on-call rota take?", "This task requires good judgment."),
        ("Which state of matter is ice?", "The answer is solid."),
    ],
)
def test_advice_about_the_subject_is_an_answer(task: str, reply: str) -> None:
    for build in BOTH_PROMPTS:
        assert check_substance(reply, build(task), task=task) is None, reply


def test_a_lone_letter_is_an_answer_where_the_task_may_ask_for_it() -> None:
    # without the task, "B" may be the option it asks for; beside an alphabet, or to a task that
    # does not name it, a lone letter only shows a character
    assert check_substance("The answer must be B.", [], task=None) is None
    assert check_substance("The answer must contain the letter Z.", [], task=None) is None
    problem = _invalid("Your answer must contain a clear title ABCDEFG Z.", [], None)
    assert problem.reason is Reason.META
    problem = _invalid("Your answer must contain a clear title Z.", [], FRANCE)
    assert problem.reason is Reason.META


def test_talk_about_how_to_answer_needs_the_answer_named_and_no_word_of_the_task() -> None:
    # the same words without the task: talk; without naming the answer: advice
    assert _invalid("A clear explanation should show each step.", [], None).reason is Reason.META
    assert _invalid("The solution should meet the requirements.", [], None).reason is Reason.META
    assert check_substance("Include examples and explain each step clearly.", []) is None
    assert check_substance("Explain each step.", [], task=None) is None
    # a word of the subject anywhere makes it an answer
    for reply in (
        "Your answer should include examples of recursion.",
        "Show your reasoning about the cache.",
        "Please provide a more detailed explanation of the deadlock.",
        "Careful planning of the schema migration avoids downtime: add the column, backfill, "
        "then switch reads.",
        "Attention heads in a transformer attend over the previous tokens.",
        "Prepared statements prevent SQL injection.",
        "Your answer is Paris.",
        "The original answer, 42, is right: 6 x 7 = 42.",
    ):
        assert check_substance(reply, [], task=None) is None, reply
    # a re-ask quotes the reply back: the same talk again is still talk, though it now names
    # the answer in words the prompt holds
    reask = (
        "Your previous answer could not be used: it says how to answer instead of answering "
        f"('{ANSWER_TALK[0][:60]}...')\nAnswer again."
    )
    assert _invalid(ANSWER_TALK[0], [reask], FRANCE).reason is Reason.META
    # the detail, in full
    assert str(_invalid("Show your reasoning step by step.", [], FRANCE)) == (
        "it says how to answer instead of answering ('Show your reasoning step by step.')"
    )


def test_hostile_talk_about_answers_is_judged_quickly() -> None:
    hostile = [
        "your answer should " * 1_000_000,
        "provide " + "a " * 3_000_000 + "explanation",
        "the " + "x " * 3_000_000 + "solution should",
        "the solution" + " " * 3_000_000 + "should",
    ]
    started = time.perf_counter()
    verdicts = [check_substance(text, [], task=FRANCE) for text in hostile]
    assert time.perf_counter() - started < 5
    for verdict in verdicts:
        assert verdict is None or (str(verdict).isprintable() and len(str(verdict)) < 200)
