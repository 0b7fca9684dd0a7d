"""The words of talk about answers, the debate and being an AI instead of an answer: what the
substance check (deliberation/substance.py) reads as no answer of a model's own. Beside them,
deliberation/directive.py holds the words an answer is graded, worked and described in.

Pure data and regexes; every pattern is linear."""

from __future__ import annotations

import re

from moot.deliberation import directive
from moot.deliberation.directive import ANSWER_NOUNS

__all__ = [
    "ABOUT_ANSWERS",
    "ABOUT_THE_ANSWER",
    "ANSWER_TALK",
    "DIRECTIVE_TALK",
    "FILLER",
    "FORM_TALK",
    "META_ANCHOR",
    "META_WORDS",
]

# Words too common to make an answer on their own.
FILLER = frozenset(
    "a an the is are was were be been of to in on at for with by and or but if so as it its "
    "this that these those i we you he she they my our your me us mine ours yours".split()
)


# Talk about the deliberation instead of an answer. A reply is META when it names the debate, the
# instructions, its own answer or being an AI (an anchor below) and every word of its own is a
# word of such talk (`META_WORDS`, the task's words taken out): "As per the instructions, I will
# now give my position." One word of anything else ("My answer is Paris.") makes it an answer.
# An answer named by which one it is only points at one ("See my earlier answer.", "My answer
# stands."): the words that say which, or that it stands, are such talk too ("The original
# answer, 42, is right." gives one). Up to two words may say which, here and in the talk rule's
# anchor ("your original answer" is talk to the answerer, below).
WHICH = r"(?:[\w'-]{1,24}\s+){0,2}?"
META_ANCHOR = re.compile(
    r"\b(?:(?:you|i|we)\s+(?:are|am)\s+(?:(?:just|only|not)\s+)?(?:an?\s+)?"
    r"(?:ai|assistant|language\s+model|chatbot|bot)"
    r"|(?:you're|i'm)\s+(?:(?:just|only|not)\s+)?(?:an?\s+)?(?:ai|assistant|language\s+model|chatbot)"
    r"|as\s+an?\s+(?:ai|assistant|language\s+model|chatbot)"
    # (with up to two words between: "a challenging task", "this tricky question")
    r"|(?:the|this|these|your|my|our|a|an)\s+(?:[\w'-]{1,24}\s+){0,2}?"
    r"(?:instructions?|prompt|rules|debate|discussion|"
    r"deliberation|court|arena|tournament|vote|round|format|template|task|question)"
    r"|(?:my|our|the)\s+" + WHICH + r"(?:answer|position|response|reply|stance|opinion|view|"
    r"vote|solution)s?"
    r"|per\s+(?:the\s+)?instructions?|as\s+instructed)\b"
)
META_WORDS = frozenset(
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
# Talk about how to answer instead of an answer (issue 29): "Your solution requires specific
# conditions for editing; you must provide a clear list of requirements." Such a reply names the
# answer itself as what it is about (`ABOUT_THE_ANSWER`: "your solution", "the answer should",
# "provide a detailed explanation") and every word of its own is talk about answers: the words
# above, and the parts, qualities and verbs of an answer below. Advice about the subject names
# the subject ("Your service should use SQLite.", "Make sure the migration runs in a
# transaction."): one domain noun, number, name or word of the task makes it an answer, and
# advice to the answerer that does not name the answer ("Include examples.") is no such talk. A
# number that counts the answer's parts ("in two paragraphs") is talk (`directive.only_counts`).
ABOUT_THE_ANSWER = re.compile(
    # the answerer's (or the speaker's) own answer: "your solution", "my reasoning"
    r"\b(?:your|my|our)\s+" + WHICH + ANSWER_NOUNS + r"\b"
    # what an answer should do: "the solution should", "each answer must", "an answer needs"
    r"|\b(?:the|this|that|each|every|an?)\s+(?:[\w'-]{1,24}\s+){0,2}?"
    + ANSWER_NOUNS
    + r"\s+(?:should|must|needs?|requires?|has\s+to|have\s+to|ought|lacks?|is\s+missing)\b"
    # a request for one: "provide a more detailed explanation", "give your reasoning"
    r"|\b(?:provide|give|include|add|write|offer|present|show)\s+(?:[\w'-]{1,24}\s+){0,4}?"
    + ANSWER_NOUNS
    + r"\b"
    # what the task asks of an answer: "this task requires clarity"
    r"|\b(?:the|this|that|your|my|our)\s+(?:[\w'-]{1,24}\s+){0,2}?"
    r"(?:task|question|problem|challenge|exercise)\s+(?:requires?|needs?|demands?|involves?|"
    r"calls\s+for|asks\s+for)\b"
)
# (an answer noun is itself such a word: "Your answer." only points at one)
ABOUT_ANSWERS = frozenset(
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
# and the words a description of an answer grades it, its work or how it reads with
# (`directive.GRADE`, `directive.WORK`, `directive.QUALITY`): "This task requires careful
# planning and attention to detail."
ANSWER_TALK = META_WORDS | ABOUT_ANSWERS | directive.GRADE | directive.WORK | directive.QUALITY
# words a directive about the answer may use and still say nothing (see `directive`)
DIRECTIVE_TALK = META_WORDS | ABOUT_ANSWERS | FILLER
# What an instruction about the form of a reply speaks of, beside its length: the container an
# answer goes in and how many of its parts ("up to 35 words of text in JSON object (only one json
# element)", the embedded model's position in a tournament). Beside a piece of an instruction
# they are talk (substance's INSTRUCTION rule), unless the task speaks of such things itself.
FORM_TALK = frozenset(
    """
    json object objects element elements field fields key keys value values string strings text
    texts array arrays item items entry entries output format formatted
    zero one two three four five six seven eight nine ten eleven twelve twenty hundred
    """.split()
)
