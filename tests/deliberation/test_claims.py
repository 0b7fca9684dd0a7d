"""The one agreement relation: what contradicts, what agrees, what stays unsure."""

from __future__ import annotations

import random
import re

import pytest

from moot.deliberation import claims
from moot.deliberation.claims import Relation, compare, extract_claim, group_claims


def relation(a: str, b: str) -> Relation:
    forward = compare(extract_claim(a), extract_claim(b)).relation
    backward = compare(extract_claim(b), extract_claim(a)).relation
    assert forward is backward, f"not symmetric: {a!r} / {b!r}"
    return forward


CONTRADICT = [
    # one word for another where the other is elsewhere in the claim too (swaps.one_for_another)
    ("The value is passed by reference.", "The value is passed by value."),
    # an off-by-one: folded, "n - 1" and "n + 1" are the same words (named.py, expressions)
    ("The loop runs n times.", "The loop runs n - 1 times."),
    ("The loop runs n + 1 times.", "The loop runs n - 1 times."),
    # a comparison turned round in other words (named.py, comparisons)
    (
        "Arrays are faster than linked lists for iteration.",
        "Linked lists iterate faster than arrays.",
    ),
    ("Arrays iterate faster than linked lists.", "Linked lists are faster to iterate than arrays."),
    # the same items in another order, where the order is the answer (named.py, sequences)
    (
        "Create a composite index on (user_id, created_at).",
        "Create a composite index on (created_at, user_id).",
    ),
    (
        "Index the columns in the order user_id, created_at.",
        "Index the columns in the order created_at, user_id.",
    ),
    ("Sort by priority, then age.", "Sort by age, then priority."),
    ("ORDER BY created_at, id", "ORDER BY id, created_at"),
    ("Call f(a, b).", "Call f(b, a)."),
    # a negation on one side
    ("The migration is safe to run on Friday.", "The migration is not safe to run on Friday."),
    ("The migration isn't safe.", "The migration is safe."),
    ("It is not at all safe.", "It is safe."),
    ("The migration is unsafe.", "The migration is safe."),
    ("Deploy without a feature flag.", "Deploy with a feature flag."),
    # numbers, with and without units
    ("30 seconds", "300 seconds"),
    ("The timeout should be 30 seconds.", "The timeout should be 300 seconds."),
    ("The answer is 391.", "The answer is 381."),
    ("408", "418"),
    ("30 seconds", "30 minutes"),
    ("2 + 3 = 5", "4"),
    ("It takes 5%.", "It takes 50%."),
    ("About 2 million people.", "About 3 million people."),
    ("408", "It costs 400 dollars."),
    # options and yes/no
    ("B", "C"),
    ("(A) Paris", "Option D"),
    # an option named in a sentence ("a" there is the letter, not the article)
    ("Option A is safest.", "Option C is safest."),
    ("Use option A.", "Use option C."),
    ("I pick choice (B) here.", "C"),
    # a capital letter that names something ("A" there is no article)
    ("Plan A", "Plan B"),
    ("We should go with plan A.", "We should go with plan B."),
    ("Team A owns the service.", "Team B owns the service."),
    ("A is right.", "B is right."),
    ("Vitamin D", "Vitamin C"),
    # a complexity, and a preference turned round
    ("It is O(n log n).", "It is O(n^2)."),
    ("SQLite is better than Postgres here.", "Postgres is better than SQLite here."),
    ("Prefer Postgres over SQLite.", "Use SQLite rather than Postgres."),
    ("Lock first, then read.", "Read first, then lock."),
    # one leaves the question open, the other settles it
    ("It is unknown whether P equals NP.", "P equals NP."),
    ("Yes, it is safe.", "No, it is not safe."),
    ("yes", "no"),
    # another entity or choice in the same place
    ("Paris", "Lyon"),
    ("Use SQLite.", "Use Postgres."),
    ("The sky is blue.", "The sky is red."),
    ("The capital is Paris.", "Lyon"),
    ("Yes, on Monday.", "Yes, on Friday."),
    ("The capital is Lyon, not Paris.", "Paris"),
    # a name for another in the same place of a long answer
    (
        "Store the user sessions in Redis with a sliding expiry so that every application "
        "server can read them and idle sessions disappear on their own without a cleanup job.",
        "Store the user sessions in Memcached with a sliding expiry so that every application "
        "server can read them and idle sessions disappear on their own without a cleanup job.",
    ),
    (
        "A LEFT JOIN keeps every row of the left table.",
        "An INNER JOIN keeps every row of the left table.",
    ),
    # a yes or no after a short lead-in
    ("Verdict: yes.", "Verdict: no."),
    ("In short: yes.", "In short: no."),
    # an operator for another
    ("Use === to compare them.", "Use == to compare them."),
    ("Use `is` to compare with None.", "Use `==` to compare with None."),
    ("Keep it while n < 10.", "Keep it while n > 10."),
    # "None" inside a sentence is a value, not a negation
    ("It returns an empty list.", "It returns None."),
    ("None of the tests pass.", "All of the tests pass."),
    # "prevents" against "permits" in the same place
    (
        "The GIL prevents parallel execution of Python bytecode in threads, so use processes "
        "for the CPU-bound work in this service and keep threads for the parts that wait.",
        "The GIL permits parallel execution of Python bytecode in threads, so use processes "
        "for the CPU-bound work in this service and keep threads for the parts that wait.",
    ),
    # versions and addresses: "3.10" is not "3.1", and "2.4.1" is no number to drop
    ("Python 3.10", "Python 3.1"),
    ("Upgrade to version 2.4.1.", "Upgrade to version 2.5.0."),
    ("Use v1.2.3.", "Use v1.2.4."),
    (
        "Point the service at the database host 10.0.0.12 on port 5432 and make sure the "
        "security group allows inbound traffic from the application subnet only.",
        "Point the service at the database host 10.0.0.21 on port 5432 and make sure the "
        "security group allows inbound traffic from the application subnet only.",
    ),
    # "non-" denies the word it is joined to; to recommend against denies what follows
    (
        "The rename is atomic on POSIX filesystems.",
        "The rename is non-atomic on POSIX filesystems.",
    ),
    ("The column should be nullable.", "The column should be non-nullable."),
    ("I recommend shipping it today.", "I recommend against shipping it today."),
    ("We advise enabling the cache.", "We advise against enabling the cache."),
    # the same words with two things turned round an asymmetric middle
    (
        "Arrays are faster than linked lists for iteration.",
        "Linked lists are faster than arrays for iteration.",
    ),
    ("Prefer composition to inheritance.", "Prefer inheritance to composition."),
    ("Threads use more memory than coroutines.", "Coroutines use more memory than threads."),
    ("An int64 is larger than an int32.", "An int32 is larger than an int64."),
    ("Redis beats Memcached here.", "Memcached beats Redis here."),
    (
        "A variable assigned in a function is local unless declared global.",
        "A variable assigned in a function is global unless declared local.",
    ),
    ("Drain the node, then upgrade it.", "Upgrade the node, then drain it."),
    ("First run the migration, then deploy.", "First deploy, then run the migration."),
    # one word for its opposite in the same place of a long answer
    (
        "The query cache is enabled by default in this release, so repeated identical SELECT "
        "statements from the reporting dashboard are answered from memory without the disk.",
        "The query cache is disabled by default in this release, so repeated identical SELECT "
        "statements from the reporting dashboard are answered from disk without the memory.",
    ),
    (
        "Validate every request payload on the server side before it reaches the database "
        "layer, because any check done in the browser can be bypassed by a crafted request.",
        "Validate every request payload on the client side before it reaches the database "
        "layer, because any check done in the browser can be bypassed by a crafted request.",
    ),
    (
        "The new wire format is backward compatible with version two clients, because every "
        "added field is optional and old readers skip the unknown tags when they decode.",
        "The new wire format is backward incompatible with version two clients, because every "
        "added field is required and old readers fail on the unknown tags when they decode.",
    ),
    (
        "The write call is synchronous: it returns only after the data has been flushed to the "
        "replica and acknowledged, which is why the latency doubles under load.",
        "The write call is asynchronous: it returns only after the data has been flushed to "
        "the replica and acknowledged, which is why the latency doubles under load.",
    ),
    # one says "only" of what the other joins to more with "and" (swaps.narrowed)
    ("Encrypt the data at rest and in transit.", "Encrypt the data in transit only."),
    ("Encrypt the data only in transit.", "Encrypt the data at rest and in transit."),
    ("Run it on Linux and macOS.", "Run it on Linux only."),
    ("Cache reads only.", "Cache both reads and writes."),
    ("Run it on Linux and macOS only.", "Run it on Linux only."),
    ("Only admins can delete posts.", "Only admins and editors can delete posts."),
]

AGREE = [
    ("Paris", "The capital of France is Paris."),
    ("It's Paris, of course.", "Paris"),
    ("Paris", "paris"),
    ("B", "(B) Paris"),
    ("Option C is safest.", "C"),
    ("I think plan B.", "Plan B is best."),
    ("A queue worker.", "A queue worker, as planned."),
    ("O(n²)", "O(n^2)"),
    # one word for another that names the same thing (a README run: "single" read as another
    # entity than "one" made its agents' first answers disagree with their own final ones)
    (
        "This can be solved with a single choice decision: the capital of France is Paris.",
        "This can be solved only by one choice decision: the capital of France is Paris.",
    ),
    ("O(n log n)", "The sort runs in O(n log n) time."),
    ("SQLite is less reliable than Postgres.", "Postgres is more reliable than SQLite."),
    ("Four.", "4"),
    ("$1,000", "1000 dollars"),
    ("Answer: 408", "After checking, 17*24 = 408.\nAnswer: 408"),
    ("The answer is 408.", "<answer>408</answer>"),
    ("Yes.", "Yes, it is safe."),
    ("yes", "yeah"),
    ("Use SQLite.", "Use SQLite, not Postgres."),
    ("It is not blue, it is red.", "It is red."),
    ("The migration is safe.", "The migration is safe to run on Friday."),
    (
        "Rayleigh scattering makes the sky blue.",
        "The sky is blue because of Rayleigh scattering of sunlight.",
    ),
    ("No, it is not safe.", "No. It is not safe to run it."),
    ("The call is non-blocking.", "The call is non-blocking, so it returns at once."),
    (
        "Use a CSRF token to guard against forged requests.",
        "A CSRF token guards against forged requests.",
    ),
    ("Upgrade from 2.4.1 to 2.5.0.", "Upgrade to 2.5.0."),
    ("Python 3.10 added match statements.", "Match statements were added in Python 3.10."),
    ("About 3.5 million users.", "About 3.5 million users signed up."),
    (
        "Keep the sessions in PostgreSQL with a sliding expiry so that every application server "
        "can read them and idle sessions disappear without a cleanup job.",
        "Keep the sessions in Postgres with a sliding expiry so that every application server "
        "can read them and idle sessions disappear without a cleanup job.",
    ),
    ("The capital of France is Paris.", "Paris is the capital of France, on the Seine."),
    (
        "The function returns None when the key is missing.",
        "When the key is missing, the function returns None.",
    ),
    ("dict.get returns None for a missing key.", "For a missing key, dict.get returns None."),
    ("In short: yes.", "Yes."),
    ("Verdict: no, it is not safe.", "No. It is not safe."),
    ("Compare with `==`.", "Use == to compare them."),
    ("**Use SQLite.** It is embedded.", "Use SQLite: it is embedded."),
    (
        "Enable the cache on the read path and disable it on the write path.",
        "Disable the cache on the write path and enable it on the read path.",
    ),
    # turned round a symmetric middle, or a phrase moved: the same either way round
    (
        "Postgres and MySQL both support this feature.",
        "MySQL and Postgres both support this feature.",
    ),
    ("The bottleneck is the disk.", "The disk is the bottleneck."),
    (
        "For this read-heavy workload Postgres is faster than MongoDB.",
        "Postgres is faster than MongoDB for this read-heavy workload.",
    ),
    (
        "Use Redis for caching and Postgres for storage, since the cache can be rebuilt.",
        "Use Postgres for storage and Redis for caching, since the cache can be rebuilt.",
    ),
    # a comparison said in other words, or with its condition moved; reasons in no order
    (
        "Postgres handles concurrent writes better than SQLite.",
        "Postgres is better than SQLite at concurrent writes.",
    ),
    (
        "Rust is safer than C because of its borrow checker.",
        "Thanks to the borrow checker, Rust is safer than C.",
    ),
    ("Use Redis (fast, simple) for sessions.", "Use Redis (simple, fast) for sessions."),
    # a function word for another is wording
    ("The value is passed by value.", "The value was passed by value."),
    # a hyphen is no minus: "n-1" is "n - 1", and "10-20" is 10 to 20
    ("The loop runs n - 1 times.", "It runs n-1 times."),
    ("Loop from 0 to k, where k = n - 1.", "Loop from 0 to n - 1."),
    # an answer that orders a pair both ways, each under its own condition: the same answer,
    # and its first half is part of it
    (
        "SQLite is better than Postgres for small apps; Postgres is better than SQLite for "
        "large ones.",
        "SQLite is better than Postgres for small apps; Postgres is better than SQLite for "
        "large ones.",
    ),
    (
        "Arrays are faster than lists for reads; lists are faster than arrays for inserts.",
        "Arrays are faster than lists for reads; lists are faster than arrays for inserts.",
    ),
    (
        "SQLite is better than Postgres for small apps; Postgres is better than SQLite for "
        "large ones.",
        "SQLite is better than Postgres for small apps.",
    ),
]

# "only" beside a part added without "and", or "not only ... but also", excludes nothing
ONLY_AGREE = [
    ("Use only parameterized queries.", "Use parameterized queries everywhere."),
    ("Encrypt not only in transit but also at rest.", "Encrypt at rest and in transit."),
    ("Run it on Linux and macOS.", "Run it on Linux and macOS only."),
    ("Only use HTTPS.", "Use HTTPS only."),
    ("It runs on Linux only.", "It runs on Linux and only on Linux."),
]

UNSURE = [
    ("No", "The migration is safe."),
    (
        "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "Blue light is bent and spread around by gas in the atmosphere more than red light is.",
    ),
    ("", "Paris"),
]


@pytest.mark.parametrize(("a", "b"), CONTRADICT)
def test_contradictions_are_found(a: str, b: str) -> None:
    assert relation(a, b) is Relation.CONTRADICT


@pytest.mark.parametrize(("a", "b"), ONLY_AGREE)
def test_only_beside_no_second_thing_is_no_contradiction(a: str, b: str) -> None:
    assert relation(a, b) is Relation.AGREE


def test_only_with_other_words_changed_is_left_to_the_other_rules() -> None:
    """ "Not only" says more, not less: only an "only" that is all one side changes narrows."""
    assert relation("Encrypt it not only in transit.", "Encrypt it in transit and at rest.") is (
        Relation.UNSURE
    )


@pytest.mark.parametrize(("a", "b"), AGREE)
def test_paraphrases_agree(a: str, b: str) -> None:
    assert relation(a, b) is Relation.AGREE


@pytest.mark.parametrize(("a", "b"), UNSURE)
def test_what_the_wording_cannot_settle_stays_unsure(a: str, b: str) -> None:
    assert relation(a, b) is Relation.UNSURE


def test_reasons_name_what_differs() -> None:
    def reason(a: str, b: str) -> str:
        return compare(extract_claim(a), extract_claim(b)).reason

    assert reason("30 seconds", "300 seconds") == "30 second vs 300 second"
    assert reason("The answer is 391.", "The answer is 381.") == "391 vs 381"
    assert reason("It is safe.", "It is not safe.") == "one says 'safe', the other says not 'safe'"
    assert reason("Use SQLite.", "Use Postgres.") == "sqlite vs postgres"
    assert reason("B", "C") == "option B vs option C"
    assert reason("Go with plan A.", "Go with plan B.") == "A vs B"
    assert reason("yes", "no") == "yes vs no"
    assert reason("unsafe", "safe") == "'unsafe' vs 'safe'"


def test_a_claim_is_the_explicit_final_answer_where_there_is_one() -> None:
    claim = extract_claim("Let me think. 17 * 24 is 408, not 418.\n\nFinal answer: 408")
    assert claim.text == "408"
    assert claim.kind == "number"
    assert extract_claim("\\boxed{B}").kind == "option"
    assert extract_claim("Yes, deploy it.").kind == "yesno"
    assert extract_claim("Yes, deploy it.").choice == "yes"
    # without one, the answer itself
    assert extract_claim("The sky is blue.").text == "The sky is blue."


def test_a_negation_denies_the_word_it_governs_within_its_clause() -> None:
    claim = extract_claim("It is not safe, but it is fast.")
    assert claim.denied == {"safe"}
    assert "fast" in claim.asserted
    assert "safe" not in claim.asserted


def test_quantities_keep_their_units_and_scales() -> None:
    claim = extract_claim("2 million users wait 30 secs and 5% fail")
    values = claim.values()
    assert values["user"] == {2_000_000}
    assert values["second"] == {30}
    assert values["percent"] == {5}


def test_hostile_text_is_capped() -> None:
    claim = extract_claim("word " * 100_000)
    assert len(claim.words) <= 400
    assert len(claim.text) <= 500
    assert extract_claim("9" * 5000).kind in ("number", "statement")


def test_groups_join_only_agents_that_agree_pairwise() -> None:
    claims = {
        "a": extract_claim("408"),
        "b": extract_claim("The answer is 408."),
        "c": extract_claim("418"),
        "d": extract_claim("Answer: 418"),
        "e": extract_claim("400"),
    }
    groups = group_claims(claims)
    assert [g.agents for g in groups] == [("a", "b"), ("c", "d"), ("e",)]


def test_a_chain_of_near_matches_does_not_join_contradicting_answers() -> None:
    # "safe" agrees with "safe on Friday" and with "safe, not on Friday" is unsure, but "safe on
    # Friday" and "not on Friday" contradict: complete linkage keeps them apart.
    claims = {
        "a": extract_claim("Run it on Friday."),
        "b": extract_claim("Run it."),
        "c": extract_claim("Run it, not on Friday."),
    }
    groups = group_claims(claims)
    assert all(not {"a", "c"} <= set(g.agents) for g in groups)


def test_a_group_speaks_in_the_words_of_its_most_common_member() -> None:
    claims = {
        "a": extract_claim("The capital of France is Paris."),
        "b": extract_claim("Paris"),
        "c": extract_claim("paris"),
    }
    (group,) = group_claims(claims)
    assert group.claim == "Paris"
    assert group.agents == ("a", "b", "c")


def test_confirmation_joins_unsure_pairs_never_contradicting_ones() -> None:
    claims = {
        "a": extract_claim(UNSURE[1][0]),
        "b": extract_claim(UNSURE[1][1]),
        "c": extract_claim("Shorter wavelengths scatter less, not more."),
    }
    assert len(group_claims(claims)) == 3
    confirmed = group_claims(claims, confirmed=True)
    assert confirmed[0].agents == ("a", "b")
    assert len(confirmed) == 2


def test_an_earlier_conflicting_pair_is_remembered_with_three_agents() -> None:
    # b agrees with a and with c, but a and c contradict: b joins a's group, c stays apart.
    claims = {
        "a": extract_claim("Use SQLite."),
        "b": extract_claim("SQLite or Postgres both work."),
        "c": extract_claim("Use Postgres."),
    }
    groups = group_claims(claims, confirmed=True)
    assert not any({"a", "c"} <= set(g.agents) for g in groups)


def test_a_denied_number_is_no_claim_of_it() -> None:
    assert relation("The answer is 4.", "The answer is not 4.") is Relation.CONTRADICT
    assert relation("The answer is not 4.", "5") is Relation.UNSURE
    assert relation("It is not 30 seconds, it is 300 seconds.", "30 seconds") is (
        Relation.CONTRADICT
    )
    assert relation("It is not 30 seconds, it is 300 seconds.", "300 seconds") is Relation.AGREE
    assert relation("2 + 2 = 4", "4") is Relation.AGREE


def test_a_claim_without_content_words_is_inside_no_other() -> None:
    assert relation("42", "Paris") is Relation.UNSURE
    assert relation("7", "I would rather not say.") is Relation.UNSURE
    assert relation("42", "There are 42 apples.") is Relation.AGREE
    assert relation("Yes.", "Yes, because it is safe.") is Relation.AGREE


def test_an_entity_swapped_in_the_first_sentence_contradicts() -> None:
    assert (
        relation(
            "Use SQLite for the sessions.",
            "Use PostgreSQL for the sessions; SQLite cannot take concurrent writes.",
        )
        is Relation.CONTRADICT
    )
    assert relation("Paris.", "Paris. Lyon is the second city.") is Relation.AGREE


def test_times_are_compared_in_seconds_and_fractions_as_values() -> None:
    assert relation("2 minutes", "120 seconds") is Relation.AGREE
    assert relation("2 days", "48 hours") is Relation.AGREE
    assert relation("30 seconds", "30 minutes") is Relation.CONTRADICT
    assert relation("0.5", "1/2") is Relation.AGREE
    assert relation("The answer is 3/4.", "0.75") is Relation.AGREE
    assert relation("1/3", "0.75") is Relation.CONTRADICT


REASONS = [
    (
        "Encrypt the data at rest and in transit.",
        "Encrypt the data in transit only.",
        Relation.CONTRADICT,
        "one says only, the other adds 'at rest and'",
    ),
    ("", "Paris", Relation.UNSURE, "an empty claim agrees with nothing"),
    ("Paris", "", Relation.UNSURE, "an empty claim agrees with nothing"),
    ("Paris", "paris", Relation.AGREE, "the same answer"),
    ("B", "(B) Paris", Relation.AGREE, "the same answer"),
    ("yes", "yeah", Relation.AGREE, "the same answer"),
    ("Four.", "4", Relation.AGREE, "the same number"),
    ("5 apples", "5 pears", Relation.CONTRADICT, "apple vs pear"),
    ("It costs 400 dollars.", "408", Relation.CONTRADICT, "400 vs 408"),
    ("408", "It costs 400 dollars.", Relation.CONTRADICT, "408 vs 400"),
    ("1/3", "0.75", Relation.CONTRADICT, "1/3 vs 3/4"),
    ("2 or 3", "5", Relation.CONTRADICT, "2, 3 vs 5"),
    ("0.5", "3", Relation.CONTRADICT, "1/2 vs 3"),
    (
        "It is not safe.",
        "It is safe.",
        Relation.CONTRADICT,
        "one says not 'safe', the other says 'safe'",
    ),
    (
        "The answer is not 4.",
        "The answer is 4.",
        Relation.CONTRADICT,
        "one says not '4', the other says '4'",
    ),
    ("nonlinear", "linear", Relation.CONTRADICT, "'nonlinear' vs 'linear'"),
    ("unfit", "fit", Relation.CONTRADICT, "'unfit' vs 'fit'"),
    ("No", "The migration is safe.", Relation.UNSURE, "a yes or no beside a statement"),
    ("Paris", "The capital of France is Paris.", Relation.AGREE, "one says all the other says"),
    ("42", "There are 42 apples.", Relation.AGREE, "the same numbers"),
    ("4", "2 + 2 = 4", Relation.AGREE, "the same numbers"),
    # numbers alone that hold all of the other's, and more: "2+2=4" was taken to agree
    ("2+2=4", "2+2=10; 3*4 = 15; 6*7 = 18},", Relation.CONTRADICT, "2+2=4 vs 2+2=10"),
    (
        "4",
        "2+2=10; 3*4 = 15; 6*7 = 18},",
        Relation.UNSURE,
        "nothing contradicts, but the wording does not confirm it",
    ),
    (
        "I live in New York.",
        "I live in Los Angeles.",
        Relation.CONTRADICT,
        "new york vs los angeles",
    ),
    (
        "Rayleigh scattering makes the sky blue.",
        "The sky is blue because of Rayleigh scattering of sunlight.",
        Relation.AGREE,
        "nearly the same words, and nothing contradicts",
    ),
    (
        "Use SQLite.",
        "Use a managed cloud database.",
        Relation.UNSURE,
        "nothing contradicts, but the wording does not confirm it",
    ),
    # a number before punctuation has no unit: "408." is the bare number 408
    ("The total is 408.", "The total is 418 apples.", Relation.CONTRADICT, "408 vs 418"),
    (
        "We sold 408; the rest spoiled.",
        "We sold 418 apples; the rest spoiled.",
        Relation.CONTRADICT,
        "408 vs 418",
    ),
]


@pytest.mark.parametrize(("a", "b", "expected", "why"), REASONS)
def test_each_rule_gives_its_reason(a: str, b: str, expected: Relation, why: str) -> None:
    comparison = compare(extract_claim(a), extract_claim(b))
    assert (comparison.relation, comparison.reason) == (expected, why)


def test_curly_apostrophes_and_minus_signs_read_as_plain_ones() -> None:
    assert extract_claim("It’s Paris.").content == {"paris"}
    assert relation("The migration isn’t safe.", "The migration is safe.") is Relation.CONTRADICT
    assert extract_claim("The temperature is −5 degrees.").values() == {"degree": {-5}}


def test_numbers_read_with_separators_scales_and_units() -> None:
    assert extract_claim("1,000 users").values() == {"user": {1000}}
    assert extract_claim("The population is 2 million").values() == {"": {2_000_000}}
    assert extract_claim("About 2 million people.").values() == {"people": {2_000_000}}
    assert extract_claim("About 2 million people").values() == {"people": {2_000_000}}
    assert extract_claim("In 2020, 2 million people voted.").values() == {
        "": {2020},
        "people": {2_000_000},
    }
    assert extract_claim("It is 5 of them").values() == {"": {5}}  # filler is no unit
    assert extract_claim("2 bus").values() == {"bus": {2}}  # too short to be a plural
    assert extract_claim("3 glass").values() == {"glass": {3}}


def test_a_number_of_more_than_40_digits_is_no_number() -> None:
    assert extract_claim("1" * 40).values() == {"": {int("1" * 40)}}
    assert extract_claim("1" * 41).values() == {}


def test_content_words_leave_out_negations_and_a_yes_or_no_answer() -> None:
    assert extract_claim("It isn't safe.").terms == ("safe",)
    # a yes or no answer's own yes-words are its choice, not its content
    yes = extract_claim("Yes, that is true. But it is slow.")
    assert (yes.kind, yes.choice, yes.terms, yes.head) == ("yesno", "yes", ("slow",), ())
    # in a statement, "true" is content
    assert extract_claim("That is true.").terms == ("true",)
    assert extract_claim("The sky is blue.").choice is None
    assert extract_claim("No not safe.").denied == {"safe"}


def test_a_claim_reads_its_explicit_answer_and_the_items_of_a_list() -> None:
    assert extract_claim("I first thought 418. <answer>408</answer>").text == "408"
    assert extract_claim("1. Paris").words == ("paris",)
    assert extract_claim("The sky is blue.").key == "text:the sky is blue"
    # a short number in words is the number; a longer sentence is left as written
    assert extract_claim("Four apples each.").text == "4 apples each"
    assert extract_claim("Four apples and pears").text == "Four apples and pears"


def test_a_long_answer_is_read_on_its_head() -> None:
    assert extract_claim("x. " * 400 + "5 apples").values() == {}


def test_groups_are_ordered_largest_first() -> None:
    claims = {"a": extract_claim("400"), "b": extract_claim("408"), "c": extract_claim("408")}
    assert [g.agents for g in group_claims(claims)] == [("b", "c"), ("a",)]


def test_nearly_the_same_words_agree_where_content_words_alone_would_not() -> None:
    # four words in fifteen reworded: under 0.6 of the content words shared, but the same
    # sentence word for word elsewhere
    a = (
        "We should run the database migration on Sunday night because the traffic is at its "
        "lowest then and the team is on call to watch the error rates and roll back if needed."
    )
    b = (
        "We should execute the database migration on Sunday night because the traffic is at its "
        "smallest then and the team is on call to monitor the error rates and roll back if "
        "required."
    )
    assert relation(a, b) is Relation.AGREE


def test_three_of_five_content_words_shared_is_enough_to_agree() -> None:
    # a word added in front and another dropped at the end: no single swap, 3 of 5 shared
    assert relation("Restart the web server now.", "Please restart the web server.") is (
        Relation.AGREE
    )


def test_a_short_answer_is_not_inside_a_long_one_that_names_many_things() -> None:
    essay = (
        "Lyon is larger than most French cities, has a famous old town, great food, two rivers, "
        "silk weaving history, a big university and a busy airport, but Paris is the capital."
    )
    assert relation("Paris", essay) is Relation.UNSURE


FRANCE = "What is the capital of France?"


def test_with_the_task_a_claim_knows_its_own_words() -> None:
    paris = extract_claim("The capital of France is Paris.", FRANCE)
    assert paris.new == {"paris"}
    assert not paris.repeats_task
    assert extract_claim("The capital of France is Paris.").new is None
    echo = extract_claim("The capital of France.", FRANCE)
    assert echo.repeats_task
    assert echo.new == frozenset()


def test_an_echo_of_a_wh_question_agrees_with_nothing() -> None:
    echo = extract_claim("The capital of France.", FRANCE)
    paris = extract_claim("The capital of France is Paris.", FRANCE)
    for a, b in ((echo, paris), (paris, echo)):
        comparison = compare(a, b)
        assert (comparison.relation, comparison.reason) == (
            Relation.UNSURE,
            "an answer that only repeats the question",
        )


def test_only_a_plain_restatement_repeats_the_task() -> None:
    # a yes, a number or a negation says something the question did not
    assert not extract_claim("Yes, the capital of France.", FRANCE).repeats_task
    assert not extract_claim("The capital of France is 2.", FRANCE).repeats_task
    assert not extract_claim("Not the capital of France.", FRANCE).repeats_task


@pytest.mark.parametrize(
    ("task", "answer", "repeats"),
    [
        ("What is 2 + 3?", "2 + 3 =", True),  # the question's numbers and nothing else
        ("What is 2 + 3?", "What is 2 + 3?", True),
        ("What is 2 + 2?", "2 + 2", True),
        ("What is 10% of 300?", "10% of 300", True),
        ("What is 2 + 3?", "2 + 3 = 5", False),  # a number of its own
        ("What is 2 + 3?", "5", False),
        ("What is 3 x 1?", "3", False),  # one of the question's numbers is an answer
        ("What is 3 x 1?", "3 x 1 = 3", False),  # the 3 again: as often as asked, no more
        ("Which two of 2, 5, 9, 11 sum to 14?", "5 and 9", False),  # a choice among them
        ("What is the capital of France in 2024?", "the capital of France", True),
        # the question's number alone, to a question that is no wh-question (a tryout's "Is 7
        # a prime number?" ended 'consensus' on "7", exit 0), unless it picks an alternative
        ("Is 7 a prime number?", "7", True),
        ("Is 7 a prime number?", "Seven.", True),
        ("Is 7 a prime number?", "7 Is 10", False),
        ("Is 7 a prime number?", "Yes, 7 is a prime number.", False),  # the yes answers
        ("Is it 7 or 8?", "7", False),
        ("Double 7.", "14", False),
    ],
)
def test_a_restatement_of_the_question_s_numbers_repeats_it(
    task: str, answer: str, repeats: bool
) -> None:
    assert extract_claim(answer, task).repeats_task is repeats


def test_the_question_is_the_last_sentence_before_the_last_question_mark() -> None:
    # a wh-word in an earlier sentence, or after the question mark, asks nothing
    task = "We ran tests. What we know is little. Is the migration safe on Friday?"
    assert not extract_claim(
        "We ran tests; we know little; migration safe on Friday.", task
    ).repeats_task
    task = "What do you think? The plan is ready. Is it safe to run it?"
    assert not extract_claim("Think: the plan is ready and safe to run.", task).repeats_task
    task = "Is the migration safe? Tell me what you think"
    assert not extract_claim("The migration is safe; tell what you think.", task).repeats_task


def test_each_answer_is_read_once_however_often_the_finding_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 23: the arena's finding runs after every round over every round so far, and a
    resume runs it all again; an answer's claim is read once, not once per round."""
    from moot.deliberation import claims, finding

    claims._kept_claim.cache_clear()
    read: list[str] = []
    real = claims._claim

    def counting(answer: str, task: str | None) -> claims.Claim:
        read.append(answer)
        return real(answer, task)

    monkeypatch.setattr(claims, "_claim", counting)
    history = [{a: f"The answer is {40 + r + i}." for i, a in enumerate("ABC")} for r in range(6)]
    for rounds in range(1, len(history) + 1):
        finding.judge_answers(history[:rounds], started=list("ABC"), task="What is it?")
    assert sorted(read) == sorted({t for rnd in history for t in rnd.values()})
    # a huge answer is read each time rather than kept
    huge = "word " * 30_000 + "The answer is 4."
    assert extract_claim(huge) == extract_claim(huge) and read.count(huge) == 2


def test_a_number_token_is_told_by_its_first_character() -> None:
    # `_numeric` stands in for the number pattern on tokens, without a regex per token
    rnd = random.Random(3)
    alphabet = list("0123456789-−.,/%abcXY'²٣ !?;:")
    for _ in range(5_000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12)))
        for token in claims._TOKEN.findall(text):
            assert bool(re.fullmatch(claims.NUMBER, token)) == claims._numeric(token), token


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("It needs a lock.", "It requires a lock."),
        ("Raise the limit.", "Increase the limit."),
        ("Use a single writer.", "Use only one writer."),
    ],
)
def test_a_word_for_one_that_names_the_same_thing_is_no_contradiction(a: str, b: str) -> None:
    assert compare(extract_claim(a), extract_claim(b)).relation is not Relation.CONTRADICT
    # another count or another thing still is
    assert compare(extract_claim(a), extract_claim("Use two writers.")).relation in (
        Relation.CONTRADICT,
        Relation.UNSURE,
    )
