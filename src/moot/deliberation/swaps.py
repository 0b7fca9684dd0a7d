"""What two nearly identical wordings swap: the contradictions that sharing words hides.

Two answers can share almost every word and still contradict. Word overlap, which confirms
agreement where nothing contradicts, cannot see these two, so `claims.compare` asks here first:

  opposites    one word in one claim stands where the other claim has its opposite, in the
               same place of the same wording: an antonym of a small technical list
               ("enabled" / "disabled", "client" / "server", "before" / "after") or the word
               with a negating prefix ("compatible" / "incompatible", "synchronous" /
               "asynchronous"). Only aligned words count: "after" somewhere in one long answer
               and "before" somewhere in another is no contradiction.
  renamed      a name in one claim stands where the other has another name, in the same place
               ("sessions in Redis" / "sessions in Memcached", "a LEFT JOIN" / "an INNER JOIN"):
               words written as names (`named.proper`) are things, not wording, so one for
               another is another thing, unless one is a short form of the other ("Postgres" /
               "PostgreSQL").
  one for another  a content word of a short claim replaced by another where the other word
               is elsewhere in the claim too ("the value is passed by reference" / "... by
               value"): claims' terms name each word once, so only the aligned words show it.
  narrowed     one claim says "only" where the other joins one more thing with "and", and
               nothing else differs ("encrypt the data at rest and in transit" / "encrypt the
               data in transit only", "Linux and macOS only" / "Linux only"): the one excludes
               what the other adds. "Not only ... but also" adds, and a part added without
               "and" ("use only parameterized queries" / "... everywhere") is no second thing.
  turned round the same words with two parts exchanged around an asymmetric middle ("arrays
               are faster than linked lists" / "linked lists are faster than arrays", "drain
               the node, then upgrade it" / "upgrade the node, then drain it", "prefer
               composition to inheritance"). A symmetric middle ("Postgres and MySQL",
               "the disk is the bottleneck") or none (a phrase moved to the front) says the
               same either way round.

Pure and linear in the words (the aligned words come from the comparison's own matcher; the
exchange is searched only in a bounded middle).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

__all__ = ["narrowed", "one_for_another", "opposite", "renamed", "same_thing", "turned_round"]

_ALIGNED = 3  # a replaced span longer than this is rewording, not one word for its opposite
_MIDDLE = 40  # words: the differing middle searched for an exchange
_PREFIXES = ("un", "non", "in", "im", "il", "ir", "dis", "a")
_PAIRS = """
enable disable enabled disabled enables disables enabling disabling on off true false
present absent open closed pass fail passes fails passed failed succeed fail succeeds fails
succeeded failed success failure local global locally globally sync async before after
above below client server horizontal vertical horizontally vertically increase decrease
increases decreases increased decreased allow forbid allowed forbidden allow deny allowed denied
accept reject accepted rejected hit miss inner outer upper lower ascending descending min max
minimum maximum higher lower more less more fewer larger smaller bigger smaller faster slower
better worse safe dangerous read write reads writes reader writer readers writers push pull
static dynamic statically dynamically strong weak eager lazy eagerly lazily optimistic
pessimistic stateful stateless inclusive exclusive first last include exclude included excluded
required optional mandatory optional public private internal external caller callee upstream
downstream input output big little add remove added removed start stop started stopped
encrypt decrypt leader follower primary replica primary secondary sender receiver producer
consumer parent child ingress egress inbound outbound earlier later older newer oldest newest
positive negative low high shallow deep online offline up down left right prevent allow
prevents allows prevented allowed prevent permit prevents permits prevented permitted
""".split()
_OPPOSITES = frozenset(
    pair for x, y in zip(_PAIRS[::2], _PAIRS[1::2], strict=True) for pair in ((x, y), (y, x))
)
# words a middle may hold and still read the same either way round ("X and Y", "X is Y")
_SYMMETRIC = frozenset(
    "and or nor vs versus plus with both as equal equals equivalent identical same like is are "
    "was were be the a an its".split()
)
# opposites that say the same of two things exchanged ("X before Y" is "Y after X")
_CONVERSE = frozenset(
    "more less fewer better worse faster slower higher lower larger smaller bigger earlier "
    "later older newer before after above below caller callee parent child upstream "
    "downstream sender receiver producer consumer leader follower".split()
)
_NEGATING = frozenset("not no never non without cannot".split())
_EQUALITY = frozenset("equal equals equivalent identical same".split())
# words too slight to be one of the two things exchanged
_SLIGHT = frozenset(
    "the a an it its this that is are was were be to of in on at for with by".split()
)


def _negating(word: str) -> bool:
    return word in _NEGATING or word.endswith("n't")


def _opposed(x: str, y: str) -> bool:
    if (x, y) in _OPPOSITES:
        return True
    for longer, shorter in ((x, y), (y, x)):
        for prefix in _PREFIXES:
            if longer == prefix + shorter and len(shorter) >= 4:
                return True
    return False


def opposite(
    a: Sequence[str], b: Sequence[str], opcodes: Sequence[tuple[str, int, int, int, int]]
) -> str | None:
    """The first word of `a` replaced in `b` by its opposite, in the same place ("'enabled' vs
    'disabled'"), from the opcodes that turn `a` into `b`."""
    replaced = [(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in opcodes if tag == "replace"]
    # things exchanged as well turn a converse back: "SQLite is less reliable than Postgres"
    # is "Postgres is more reliable than SQLite"
    exchanged = any(not set(x).isdisjoint(b) and not set(y).isdisjoint(a) for x, y in replaced)
    count_a, count_b = Counter(a), Counter(b)
    for old, new in replaced:
        if len(old) > _ALIGNED or len(new) > _ALIGNED:
            continue
        if any(_negating(w) for w in (*old, *new)):
            continue  # "not safe" where the other says "unsafe" says the same
        for x in old:
            if count_a[x] <= count_b[x]:  # moved, not replaced: "enable X and disable Y"
                continue
            for y in new:
                if count_b[y] <= count_a[y]:
                    continue
                if _opposed(x, y) and not (exchanged and x in _CONVERSE):
                    return f"'{x}' vs '{y}'"
    return None


_ONLY = frozenset("only solely exclusively".split())
_JOINING = frozenset("and both plus".split())


def narrowed(
    a: Sequence[str], b: Sequence[str], opcodes: Sequence[tuple[str, int, int, int, int]]
) -> str | None:
    """What one claim joins with "and" where the other, saying "only", leaves it out and
    differs in nothing else ("at rest and in transit" / "in transit only"), or None."""
    changed = _changed(opcodes)
    a_side = [w for _, i1, i2, _, _ in changed for w in a[i1:i2]]
    b_side = [w for _, _, _, j1, j2 in changed for w in b[j1:j2]]
    for wide, narrow, whole in ((a_side, b_side, b), (b_side, a_side, a)):
        if not set(whole) & _ONLY or not set(narrow) <= _ONLY | _SLIGHT:
            continue  # no "only", or other words changed too ("not only ... but also")
        if not set(wide) & _JOINING:
            continue  # "only parameterized queries" / "parameterized queries everywhere"
        # a thing the narrow claim does not name ("Linux only" / "Linux and only Linux")
        if any(w not in _SLIGHT | _JOINING | _ONLY and w not in whole for w in wide):
            return f"one says only, the other adds '{' '.join(wide)}'"
    return None


def _changed(
    opcodes: Sequence[tuple[str, int, int, int, int]],
) -> list[tuple[str, int, int, int, int]]:
    return [op for op in opcodes if op[0] != "equal"]


def _symmetric(middle: Sequence[str]) -> bool:
    words = set(middle)
    if words & _EQUALITY:  # "X is equal to Y"
        words.discard("to")
    return words <= _SYMMETRIC


def turned_round(a: Sequence[str], b: Sequence[str]) -> str | None:
    """The two parts exchanged when `b` is `a` with them turned round an asymmetric middle
    ("arrays / linked lists"), or None."""
    if len(a) != len(b) or a == b or Counter(a) != Counter(b):
        return None
    n = len(a)
    start = next(i for i in range(n) if a[i] != b[i])
    end = n - next(i for i in range(n) if a[n - 1 - i] != b[n - 1 - i])
    x, y = a[start:end], b[start:end]
    m = len(x)
    if m > _MIDDLE:
        return None
    # x = first + middle + second and y = second + middle + first, the middle not empty
    for k in range(1, m - 1):
        if y[m - k :] != x[:k]:
            continue
        for j in range(1, m - k):
            first, second, middle = x[:k], y[:j], x[k : m - j]
            if x[m - j :] != second or y[j : m - k] != middle:
                continue
            if _symmetric(middle) or set(first) <= _SLIGHT or set(second) <= _SLIGHT:
                continue
            said, one, other = " ".join(middle), " ".join(first), " ".join(second)
            return f"{one} {said} {other} vs {other} {said} {one}"
    return None


def renamed(
    a: Sequence[str],
    b: Sequence[str],
    opcodes: Sequence[tuple[str, int, int, int, int]],
    names_a: frozenset[str],
    names_b: frozenset[str],
) -> str | None:
    """The words of `a` replaced in `b` where one is a name (`names_a`) and the other another
    name (`names_b`), in the same place ("redis vs memcached"): a name that the other claim
    says less often, against one that it says more often (a name moved is no other name)."""
    count_a, count_b = Counter(a), Counter(b)
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "replace" or i2 - i1 > _ALIGNED or j2 - j1 > _ALIGNED:
            continue
        old, new = a[i1:i2], b[j1:j2]
        for x in old:
            if x not in names_a or count_a[x] <= count_b[x]:  # "Paris" moved, not replaced
                continue
            for y in new:
                if y not in names_b or count_b[y] <= count_a[y] or x.startswith(y):
                    continue
                if not y.startswith(x):
                    return f"{' '.join(old)} vs {' '.join(new)}"
    return None


# Words that name the same thing, for the one-word swap of two short wordings (claims rule 5):
# "a single choice" / "one choice" is no other entity. Kept small and exact: a false agreement
# costs more than a false disagreement.
_SAME = (
    ("single", "one"),
    ("needs", "requires"),
    ("need", "require"),
    ("needed", "required"),
    ("wrong", "incorrect"),
    ("increase", "raise"),
    ("big", "large"),
    ("quick", "fast"),
)
_SAME_PAIRS = frozenset(pair for x, y in _SAME for pair in ((x, y), (y, x)))


_PLAIN = frozenset("only just exactly".split())  # "a single" / "only one"


def one_for_another(
    a: Sequence[str],
    b: Sequence[str],
    opcodes: Sequence[tuple[str, int, int, int, int]],
    *,
    most: int = 2,
    content: frozenset[str] | None = None,
) -> str | None:
    """The words of `a` that `b` replaces with others, at most `most` a side, where that is
    all that differs ("use SQLite" / "use Postgres"), unless the two name the same thing.
    With `content`, only its words count ("is" / "was" is wording, not another thing): so
    claims read their words, where their terms (each word once) would hide the swap ("the
    value is passed by reference" / "... by value")."""
    changed = _changed(opcodes)
    if len(changed) != 1 or changed[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changed[0]
    old, new = a[i1:i2], b[j1:j2]
    if len(old) > most or len(new) > most:
        return None
    if content is not None and not content.issuperset((*old, *new)):
        return None
    return None if same_thing(old, new) else f"{' '.join(old)} vs {' '.join(new)}"


def same_thing(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two swapped spans are one word each that name the same thing ("only" and the
    like beside it said nothing of its own)."""
    x, y = [w for w in a if w not in _PLAIN], [w for w in b if w not in _PLAIN]
    return len(x) == 1 and len(y) == 1 and (x[0], y[0]) in _SAME_PAIRS
