"""The reference copy's word lists and its later rules (see substance_reference.py, which
imports them): moved here when that copy reached the 600 lines a module may hold. Frozen as it
is: change the rule in src, then this copy in the same commit if the change is meant.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

__all__ = [
    "_ABOUT_ANSWERS",
    "_AUXILIARIES",
    "_FORM_TALK",
    "_META_WORDS",
    "_RUN_TOGETHER",
    "_ai_talk",
    "_asks_yes_or_no",
    "_form_talk",
    "_is_yes_no_question",
    "_loop_start",
    "_null_no_answer",
    "_numbering",
    "_says_neither",
    "_template_value",
    "_template_values",
]

# the words of talk about the deliberation (substance_reference's META rule)
_META_WORDS = frozenset(
    """
    ai assistant language model chatbot bot artificial intelligence human
    am i'm you're i'll we'll you'll not will shall would could can cannot can't won't allowed we us
    permitted able unable going now here below above following follows then first next ok okay
    sure certainly alright let let's give giving state present share provide offer write put
    make express speak speaking talk say argue participate take part join engage contribute
    answer answers answering respond response reply position positions stance view opinion
    vote final own instructions instruction instructed prompt rules rule format template task
    proposed current revised updated original previous earlier initial prior see refer same
    stated stand stands remains unchanged maintain
    question per according follow followed accordance debate discussion deliberation court
    arena tournament round rounds turn judge judges agent agents participant participants
    panel other others do does did has have had being ready happy glad request requested
    asked required about must should may might need want please thank thanks there what
    which who how why when just only also all
    requires require required requiring analyze analyse analyzing analysing itself yourself
    single sentence sentences paragraph paragraphs section sections list lists line lines word words
    short brief concise exactly less fewer most least
    complex simple difficult easy hard tricky multiple many several various different possible
    careful carefully thought thinking think ambiguous unclear nuanced
    challenging demanding involved involves involve layer layers level levels aspect aspects
    consider considers considered considering consideration considerations decision decisions
    ensure ensures ensuring correctly properly thoroughly needs every each
    """.split()
)


# (an answer noun is itself such a word: "Your answer." only points at one)
_ABOUT_ANSWERS = frozenset(
    """
    answer answers response responses reply replies
    solution solutions explanation explanations reasoning justification rationale argument
    arguments submission proposal approach method work content output draft summary conclusion
    detail details example examples step steps requirement requirements condition conditions
    criteria criterion information context clarity structure structured logic thought thoughts
    point points aspect aspects part parts problem questions
    include includes included including explain explains explained explaining address
    addresses addressed describe describes clarify clarifies elaborate justify justifies
    support supports show shows demonstrate demonstrates cover covers discuss mention
    consider outline summarize summarise focus expand ensure ensures check meet meets mentioned
    satisfy satisfies adhere adheres add adds lack lacks lacking missing contain contains
    needs edit edits editing revise revision improve based consist consists consisting
    specificity conciseness brevity precision accuracy completeness simplicity readability
    coherence relevance call calls demand demands here error errors mistake mistakes flaw flaws
    use uses crucial essential important flexible mindset choose chooses choosing choice choices
    clear clearly clearer specific specifically necessary detailed more each every relevant
    appropriate appropriately proper properly correct correctly complete completely accurate
    accurately thorough thoroughly precise precisely explicit explicitly better further
    additional full fully well careful carefully sufficient enough logical any some both
    than from into using without
    """.split()
)


# A placeholder run together into one word: "youranswer", "your_answer_here", "answerhere",
# "YOUR_ANSWER" (folded); one more part makes it a name ("my_answer_key").
_SLOT_NOUN = (
    r"(?:answers?|responses?|reply|solutions?|positions?|reasoning|explanations?|votes?|stance|"
    r"opinion)"
)
_RUN_TOGETHER = re.compile(
    r"(?<!\w)(?:(?:(?:your|my|our|the|insert|enter|put|write|add|final|definitive|correct|"
    r"best|right|true|actual|real|complete|full|short|brief|detailed|revised|updated|improved|"
    r"proposed|new)[_-]?){1,3}"
    + _SLOT_NOUN
    + r"(?:[_-]?(?:here|text))?|"
    + _SLOT_NOUN
    + r"[_-]?(?:here|text))(?!\w)"
)


# A literal null alone ("None", "null", "N/A", "nil", "undefined"), perhaps named as the answer,
# answers a task about code or values (any null), one that asks which or how many ("none",
# "nil"), one about a division or a limit ("undefined"), and no other.
_NULLS = {"none", "null", "nil", "undefined"}
_ABOUT_VALUES = set(
    """
    return returns returned returning value values result results output outputs print prints
    printed evaluate evaluates evaluated evaluation expression expressions variable variables
    field fields key keys property properties attribute attributes type types function
    functions method methods code snippet program programs script query queries column columns
    cell cells row rows default defaults parameter parameters argument arguments pointer
    pointers object objects api json yaml sql python javascript typescript java php kotlin lua
    null none nil undefined nan void
    """.split()
)
_WHICH_OR_HOW_MANY = set(
    "which whichever who whom whose many much any option options choice choices".split()
)


def _null_no_answer(own: Sequence[str], folded_reply: str, task: str, yes_no: bool) -> bool:
    """Whether the reply's own words (`own`: filler and talk out) are only one null or truth
    value that the task (`yes_no`: a yes/no question) does not take."""
    if not own:
        return False
    if all(w == "n" for w in own):
        if not re.search(r"\bn\s*[/.]\s*a\b", folded_reply):
            return False
        null = "n/a"
    elif all(w in _NULLS or w in ("true", "false") for w in own) and all(w == own[0] for w in own):
        null = own[0]
    else:
        return False
    folded = unicodedata.normalize("NFKC", task[:60_000]).replace("\u2019", "'").casefold()
    words = set(re.findall(r"[^\W_]+(?:'[^\W_]+)?", folded))
    if words & _ABOUT_VALUES or re.search(r"`|\w\(|[=!<>]=|=>|->|\s=\s", folded):
        return False
    if null in ("none", "nil") and words & _WHICH_OR_HOW_MANY:
        return False
    if null in ("true", "false"):
        return not yes_no and not words & set(
            "true false truth statement statements claim claims".split()
        )
    division = r"[\w)]\s*/\s*[\w(]|\b(?:divided|division|divide|limit|log|ln|sqrt|tan|slope|"
    division += r"derivative|integral|domain)\b"
    return not (null == "undefined" and re.search(division, folded))


# Talk about AI in the third person, in words of what models are and do: it names AI, every word
# of its own is talk about answers or such a word, one is no name of AI, none is the task's.
_AI_NAMES = set(
    """
    ai ai's artificial intelligence llm llms llm's language model models model's chatbot
    chatbots bot bots assistant assistants machine machines gpt chatgpt smollm qwen openai
    """.split()
)
_AI_WORDS = _AI_NAMES | set(
    """
    capability capabilities ability abilities power powerful smart intelligent trained training
    train pretrained tuned finetuned fine parameters testing tested verified verify verifies
    verification generate generates generated generating generation create creates created
    creating produce produces produced producing learn learns learned learning used like
    even small tiny large big little tool tools help helps helped amazing impressive
    remarkable incredible capable
    """.split()
)


def _ai_talk(
    folded: str, content: Sequence[str], talk: AbstractSet[str], task_words: AbstractSet[str]
) -> bool:
    names = [w for w in content if w.rstrip("0123456789") in _AI_NAMES]
    anchor = re.search(
        r"\b(?:ai|a\.i|artificial\s+intelligence|llms?|language\s+models?|chatbots?|chatgpt|"
        r"gpt|smollm\d*|qwen\d*|openai)\b",
        folded,
    )
    return (
        anchor is not None
        and all(w in talk or w in _AI_WORDS or w in names for w in content)
        and len(names) < len(content)
        and not any(w in task_words for w in content)
    )


# A list marker ("#1:", "(1)", "[1]", "1)", "Q1:", "Question 1:", "1." where a line starts)
# numbers a copy when the word after it is copied and opens it as the task or a question opens
# (`opens`): its words are the copy's.
_MARKER = re.compile(
    r"(?:(?<![\w.#])(?:(?:q|question|task|item|step|part)\s?)?"
    r"(?:#\s?\d{1,3}[.):]?|\(\d{1,3}\)|\[\d{1,3}\]|\d{1,3}[):])|^[ \t]*\d{1,3}\.)(?=\s)",
    re.MULTILINE,
)


def _numbering(
    folded: str,
    spans: Sequence[tuple[int, int]],
    copied: Sequence[bool],
    opens: AbstractSet[str],
) -> list[int]:
    found: list[int] = []
    for m in _MARKER.finditer(folded):
        inside = [i for i, (start, _) in enumerate(spans) if m.start() <= start < m.end()]
        after = [i for i, (start, _) in enumerate(spans) if start >= m.end()]
        if after and copied[after[0]] and folded[slice(*spans[after[0]])] in opens:
            found.extend(inside)
    return found


# Beside a piece of an instruction, the words of an answer's container and its parts are talk
# ("up to 35 words of text in JSON object (only one json element)"), unless the task has them.
_FORM_TALK = frozenset(
    """
    json object objects element elements field fields key keys value values string strings text
    texts array arrays item items entry entries output format formatted
    zero one two three four five six seven eight nine ten eleven twelve twenty hundred
    """.split()
)


def _form_talk(content: Sequence[str], task_words: AbstractSet[str]) -> bool:
    """Whether every word of its own is talk, a word of the form or a number, none the task's."""
    form = set() if task_words & _FORM_TALK else _FORM_TALK
    talk = [w for w in content if w in _META_WORDS or w in form or w.isdigit()]
    return not task_words & set(content) and len(talk) == len(content)


_NUMBER_WORDS = set(
    "zero one two three four five six seven eight nine ten eleven twelve twenty hundred".split()
)


def _value_shape(words: Sequence[str]) -> tuple[str, ...]:
    """Words with every run of numbers (digits or number words) as one "#"."""
    out: list[str] = []
    for w in words:
        number = w.isdigit() or w in _NUMBER_WORDS
        if number and out and out[-1] == "#":
            continue
        out.append("#" if number else w)
    return tuple(out)


def _template_value(
    tokens: Sequence[str],
    values: AbstractSet[tuple[str, ...]],
    task_words: AbstractSet[str],
    sizes: AbstractSet[str],
) -> bool:
    """A reply of up to 12 words that is a value of the prompt's JSON template, numbers aside,
    unless it has a number and the task asks for a size (a word of `sizes`)."""
    shape = _value_shape(tokens)
    return len(tokens) <= 12 and shape in values and not ("#" in shape and sizes & task_words)


def _template_values(folded_part: str) -> set[tuple[str, ...]]:
    """The shapes of a prompt part's JSON template values of 2 to 12 words: each quoted string
    after ":", "[", "," or "|" that no ":" follows, and its pieces between "," ";" and ":"."""
    found: set[tuple[str, ...]] = set()
    for m in re.finditer(r'[:\[,|][ \t]*"([^"\n]{1,80})"(?![ \t]*:)', folded_part):
        for piece in [m.group(1), *re.split(r"[,;:]", m.group(1))]:
            words = re.findall(r"[^\W_]+(?:'[^\W_]+)?", piece)
            if 2 <= len(words) <= 12:
                found.add(_value_shape(words))
    return found


def _loop_start(
    tokens: Sequence[str], spans: Sequence[tuple[int, int]], mask: bytearray, echo: int
) -> int | None:
    """Where the first run of 12 words (6 of them different) that occurs 3 times or more in one
    section starts, when such runs cover more than half the reply's own words (those `mask`
    leaves 0); else None. A word that a mask other than the echo's (`echo`) touches, a header
    or label of the prompt, ends a section."""
    ends = [any(b not in (0, echo) for b in mask[start:end]) for start, end in spans]
    section = [-1 if end else ends[:i].count(True) for i, end in enumerate(ends)]
    own = [mask.count(0, start, end) == end - start for start, end in spans]
    windows = [
        (section[i], tuple(tokens[i : i + 12]))
        for i in range(len(tokens) - 11)
        if -1 not in section[i : i + 12]
    ]
    counts: dict[tuple[int, tuple[str, ...]], int] = {}
    for key in windows:
        counts[key] = counts.get(key, 0) + 1
    starts = [
        i
        for i in range(len(tokens) - 11)
        if -1 not in section[i : i + 12]
        and counts[(section[i], tuple(tokens[i : i + 12]))] >= 3
        and len(set(tokens[i : i + 12])) >= 6
    ]
    looped = [any(s <= i < s + 12 for s in starts) for i in range(len(tokens))]
    share = sum(1 for i in range(len(tokens)) if looped[i] and own[i])
    if starts and share * 2 > sum(own):
        return starts[0]
    return None


# A question that a bare yes/no answers starts with an auxiliary verb ("Is it safe to run the
# migration on Friday?"), unless it offers alternatives ("Should we use Postgres or SQLite?");
# "yes or no" offers none, it asks for one, and a clause that only asks for one is a yes/no
# question too ("91 is prime. Yes or no?").
_AUXILIARIES = frozenset(
    """
    is are was were am do does did can could should would will shall has have had may might must
    need ought isn't aren't wasn't weren't don't doesn't didn't can't couldn't shouldn't
    wouldn't won't hasn't haven't hadn't mustn't shan't mightn't needn't
    """.split()
)
_YES_OR_NO = r"\b(?:yes\W{0,3}(?:or|/)\W{0,3}no|no\W{0,3}(?:or|/)\W{0,3}yes|y\s?/\s?n)\b"
_ASKING_FOR_IT = set(
    "answer reply respond say state tell me us please just only simply with a an in one word "
    "plain simple clear single".split()
)
_WORD = r"[^\W_]+(?:'[^\W_]+)?"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("\u2019", "'").casefold()


def _is_yes_no_question(task: str) -> bool:
    """Does a bare yes or no answer `task`? Its question (the last sentence that ends in "?",
    else its last sentence) asks "whether", or offers no alternatives ("or", other than "or
    not" and "yes or no") and has a clause that starts with an auxiliary verb or only asks for
    a yes or no."""
    folded = _fold(task[:60_000])
    if "?" in folded:
        folded = folded[: folded.rfind("?")]
    question = re.split(r"[.!?](?=\s)|[\n:]", folded.strip())[-1]
    words = re.findall(_WORD, re.sub(_YES_OR_NO, " ", question))
    if "whether" in words:
        return True
    if "or" in words and " or not " not in f" {' '.join(words)} ":
        return False
    clauses = re.split(r"[,;]|\s-+\s", question)
    for clause in clauses:
        clause_words = re.findall(_WORD, clause)
        if clause_words and clause_words[0] in _AUXILIARIES:
            return True
    for clause in clauses:
        rest = re.findall(_WORD, re.sub(_YES_OR_NO, " ", clause))
        if re.search(_YES_OR_NO, clause) and all(w in _ASKING_FOR_IT for w in rest):
            return True
    return False


def _asks_yes_or_no(task: str) -> bool:
    """A yes/no question whose task says "yes or no" (or "yes/no", "y/n") anywhere."""
    return _is_yes_no_question(task) and re.search(_YES_OR_NO, _fold(task[:60_000])) is not None


# A reply to such a question says neither yes nor no when no word of its own takes a side (a yes
# or no, a truth value or verdict, a word that affirms, a negation, an auxiliary verb) nor may
# (any word but numbers, dates, times, a word that names a number, filler and talk), and no sign
# states something ("=", "7*13").
_SIDE_WORDS = _AUXILIARIES | set(
    """
    yes yeah yep yup yea aye nope nah no not never neither nor none nothing nobody cannot ain't
    true false correct incorrect right wrong affirmative negative absolutely definitely
    certainly surely sure indeed course
    """.split()
)
_NO_SIDE_WORDS = set(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion
    am pm p m utc gmt january february march april june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday
    friday saturday sunday
    number numbers numeral numerals integer integers digit digits
    """.split()
)


def _says_neither(own: Sequence[str], folded_reply: str, filler: AbstractSet[str]) -> bool:
    if not own:
        return False
    for w in own:
        if w in _SIDE_WORDS:
            return False
        known = w in _NO_SIDE_WORDS or w in filler or w in _META_WORDS
        if not known and not re.fullmatch(r"\d+(?:st|nd|rd|th|am|pm)?", w):
            return False
    return not re.search(r"[=≠≤≥]|\d\s{0,3}[*×·<>]\s{0,3}\d", folded_reply)
