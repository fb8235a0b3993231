"""Build the callbluff demo data sets from the hand-written banks beside this file.

    python scripts/demo_data/build.py [OUT_DIR]      (default: src/callbluff/data, the package's data)

Writes ``demo_prompts.json``, ``demo_content.jsonl``, ``demo_essays.jsonl`` and ``demo_squad.json``. The
output is a pure function of the banks and ``SEED``: running the script again gives the same bytes
(tests/test_demo_data.py checks this).

How answers are made. Whole answers written one by one are used as they are. The rest are composed from
hand-written clauses, each tagged with the rubric elements it earns; a composed answer's score is the number
of distinct elements among its clauses, so scores follow the rubric by construction. Surface noise (lower
case, missing stops, run-ons, typical misspellings) is added to some answers and never changes which
elements an answer contains. Essays are built from sentence banks written per quality level (see
essay_banks.py); the essay's score fixes the level of every sentence it may use and the number of surface
errors added. Exact duplicates (after lower-casing and dropping punctuation) are rejected.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGE_DATA = HERE.parents[1] / "src" / "callbluff" / "data"
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, str(HERE))

import content_demo1 as d1  # noqa: E402  (after the sys.path insert)
import content_demo2 as d2  # noqa: E402  (after the sys.path insert)
import essay_banks as eb  # noqa: E402  (after the sys.path insert)
import squad_text as sq  # noqa: E402  (after the sys.path insert)

from callbluff.seeding import derive_seed  # noqa: E402  (after the sys.path insert)

SEED = 20240601
TEST_FRACTION = 0.25

# Target score counts (about 30% top, 35% middle, 35% zero, as in ASAP-SAS).
CONTENT_COUNTS: dict[str, dict[int, int]] = {
    "demo-1": {2: 66, 1: 77, 0: 77},
    "demo-2": {3: 62, 2: 44, 1: 40, 0: 74},
}
ESSAY_COUNTS: dict[int, int] = {1: 12, 2: 18, 3: 27, 4: 31, 5: 20, 6: 12}


class Rng:
    """The few random draws the builder needs, made only from ``random.Random.random()`` with an integer seed:
    the one part of Python's ``random`` whose sequence is guaranteed not to change across Python versions,
    so the builder reproduces the committed files anywhere (NumPy does not promise stable streams)."""

    def __init__(self, seed: int) -> None:
        self._r = random.Random(seed)

    def random(self) -> float:
        return self._r.random()

    def integers(self, lo: int, hi: int | None = None) -> int:
        """Uniform integer in ``[lo, hi)``, or in ``[0, lo)`` when ``hi`` is omitted."""
        if hi is None:
            lo, hi = 0, lo
        if hi <= lo:
            raise ValueError(f"empty range [{lo}, {hi})")
        return lo + min(int(self._r.random() * (hi - lo)), hi - lo - 1)

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.integers(len(items))]

    def weighted_index(self, weights: Sequence[float]) -> int:
        x, acc = self._r.random() * sum(weights), 0.0
        for i, w in enumerate(weights):
            acc += w
            if x < acc:
                return i
        return len(weights) - 1

    def shuffle(self, items: list[Any]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.integers(i + 1)
            items[i], items[j] = items[j], items[i]

    def permutation(self, n: int) -> list[int]:
        order = list(range(n))
        self.shuffle(order)
        return order

    def sample(self, items: Sequence[Any], k: int) -> list[Any]:
        pool = list(items)
        self.shuffle(pool)
        return pool[:k]


def rng_for(*parts: Any) -> Rng:
    return Rng(derive_seed(SEED, "demo-data", *parts))


# ------------------------------------------------------------------------------------------------ helpers
def norm_key(text: str) -> str:
    """Key for duplicate detection: lower case, letters/digits only, single spaces."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def n_words(text: str) -> int:
    return len(text.split())


def cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def decap(s: str) -> str:
    """Lower-case the first letter unless the first word is "I" or an acronym."""
    first = s.split(" ", 1)[0]
    if first in {"I", "I'm", "I've"} or (len(first) > 1 and first[1:2].isupper()):
        return s
    return s[:1].lower() + s[1:]


class Picker:
    """Choose from banks, preferring the least-used items so that clauses spread over the data set."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self.used: Counter[str] = Counter()

    def pick(self, items: Sequence[Any], key: Callable[[Any], str] = str) -> Any:
        if not items:
            raise ValueError("empty bank")
        i = self.rng.weighted_index([1.0 / (1 + self.used[key(x)]) ** 2 for x in items])
        self.used[key(items[i])] += 1
        return items[i]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def randint(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))


def fill(template: str, clause: str) -> str:
    """Put a lower-case clause into a lead such as "It feels hot because {b}." ({B} = capitalised)."""
    return (
        template.replace("{b}", clause)
        .replace("{B}", cap(clause))
        .replace("{d}", clause)
        .replace("{D}", cap(clause))
        .replace("{e}", clause)
        .replace("{E}", cap(clause))
        .replace("{r}", clause)
        .replace("{R}", cap(clause))
    )


def sentence(clause: str) -> str:
    return cap(clause) + "."


# ------------------------------------------------------------------------------------------------ noise
TYPOS_CONTENT: dict[str, list[str]] = {
    "conduction": ["condution", "conducshun", "conducton"],
    "because": ["becuase", "becase", "cause"],
    "through": ["threw", "thru"],
    "particles": ["partickles", "particals"],
    "energy": ["enegry", "energie"],
    "travels": ["travles"],
    "handle": ["handel"],
    "metal": ["metel"],
    "vibrate": ["vibrait"],
    "their": ["thier", "there"],
    "bamboo": ["bambo", "bamboos"],
    "eucalyptus": ["eucaliptus", "eucalyptis", "ucalyptus"],
    "specialist": ["specalist", "spesialist"],
    "disappears": ["dissapears"],
    "starve": ["starv"],
    "koalas": ["kolas"],
    "generalist": ["generalest"],
    "habitat": ["habbitat"],
    "different": ["diffrent"],
    "can't": ["cant"],
    "don't": ["dont"],
    "it's": ["its"],
    "that's": ["thats"],
}


def replace_word(text: str, word: str, new: str, which: int) -> str:
    """Replace the ``which``-th whole-word occurrence of ``word`` (case-insensitive, keeps a capital)."""
    matches = list(re.finditer(rf"(?<![\w']){re.escape(word)}(?![\w'])", text, flags=re.IGNORECASE))
    if not matches:
        return text
    m = matches[which % len(matches)]
    rep = cap(new) if m.group(0)[:1].isupper() else new
    return text[: m.start()] + rep + text[m.end() :]


def split_sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def content_noise(p: Picker, text: str) -> str:
    """Student surface noise that keeps the meaning: typos, lower case, missing stop, run-ons."""
    if p.chance(0.3):
        present = [
            w for w in TYPOS_CONTENT if re.search(rf"(?<![\w']){re.escape(w)}(?![\w'])", text, re.IGNORECASE)
        ]
        for _ in range(min(len(present), p.randint(1, 2))):
            w = present.pop(int(p.rng.integers(len(present))))
            text = replace_word(text, w, str(p.rng.choice(TYPOS_CONTENT[w])), int(p.rng.integers(3)))
    sents = split_sentences(text)
    if len(sents) > 1 and p.chance(0.15):
        glue = str(p.rng.choice([" and ", ", "]))
        i = int(p.rng.integers(len(sents) - 1))
        sents[i : i + 2] = [sents[i].rstrip(".") + glue + decap(sents[i + 1])]
    text = " ".join(sents)
    if p.chance(0.22):
        text = " ".join(decap(s) for s in split_sentences(text))
    if p.chance(0.2) and text.endswith("."):
        text = text[:-1]
    return text


# ------------------------------------------------------------------------------------------------ demo-1
def compose_demo1(p: Picker, target: int) -> tuple[str, set[str]]:
    """One composed answer for demo-1 earning exactly ``target`` points; returns (text, elements)."""
    sents: list[str] = []
    elems: set[str] = set()
    if target == 2:
        kind = p.pick(["lead", "b_then_a", "a_then_b", "conductor_b"])
        if kind == "lead":
            sents.append(fill(p.pick(d1.A_LEADS), p.pick(d1.B_CLAUSES)))
        elif kind == "b_then_a":
            sents += [fill(p.pick(d1.B_LEADS), p.pick(d1.B_CLAUSES)), sentence(p.pick(d1.A_CLAUSES))]
        elif kind == "a_then_b":
            sents += [sentence(p.pick(d1.A_CLAUSES)), fill(p.pick(d1.B_LEADS), p.pick(d1.B_CLAUSES))]
        else:
            sents += [sentence(p.pick(d1.A_CONDUCTOR)), fill(p.pick(d1.B_LEADS), p.pick(d1.B_CLAUSES))]
            if p.chance(0.4):
                sents.append(sentence(p.pick(d1.A_CLAUSES)))
        elems = {"A", "B"}
        if p.chance(0.25):
            sents.append(sentence(p.pick(d1.NEUTRAL)))
    elif target == 1:
        if p.chance(0.5):  # A only
            first = p.pick(d1.A_CLAUSES + d1.A_CONDUCTOR)
            sents.append(sentence(first))
            if first in d1.A_CONDUCTOR and p.chance(0.5):
                sents.append(sentence(p.pick(d1.A_CLAUSES)))
            r = p.rng.random()
            if r < 0.5:
                sents.insert(int(p.rng.integers(2)), sentence(p.pick(d1.NEUTRAL)))
            elif r < 0.7:
                sents.insert(0, fill(p.pick(d1.B_LEADS), p.pick(d1.MISCONCEPTIONS)))
            elems = {"A"}
        else:  # B only
            sents.append(fill(p.pick(d1.B_LEADS), p.pick(d1.B_CLAUSES)))
            if p.chance(0.4):
                wrong = sentence(p.pick(d1.WRONG_PROCESS))
                sents.insert(0, wrong) if p.chance(0.5) else sents.append(wrong)
            if p.chance(0.3):
                sents.append(sentence(p.pick(d1.NEUTRAL)))
            elems = {"B"}
    else:
        kind = p.pick(["mis", "mis_wrong", "wrong_neutral", "neutral", "mis_neutral"])
        if "mis" in kind:
            sents.append(fill(p.pick(d1.B_LEADS), p.pick(d1.MISCONCEPTIONS)))
        if "wrong" in kind:
            sents.append(sentence(p.pick(d1.WRONG_PROCESS)))
        if "neutral" in kind:
            sents.append(sentence(p.pick(d1.NEUTRAL)))
            if kind == "neutral" and p.chance(0.6):
                sents.insert(0, sentence(p.pick([n for n in d1.NEUTRAL if cap(n) + "." not in sents])))
        if p.chance(0.3) and len(sents) > 1:
            sents.reverse()
    return " ".join(sents), elems


# ------------------------------------------------------------------------------------------------ demo-2
def compose_demo2(p: Picker, target: int) -> tuple[str, set[str]]:
    """One composed answer for demo-2 earning exactly ``target`` points; returns (text, elements)."""
    want: set[str] = set()
    if target:
        order = list("DER")
        p.rng.shuffle(order)
        want = set(order[:target])
    animal = str(p.rng.choice(["panda", "koala"]))
    parts: dict[str, str] = {}
    got: set[str] = set()

    if "R" in want:
        use_re = "E" in want and p.chance(0.55)
        pool = [
            r
            for r in d2.R_CLAUSES
            if (r[1] == frozenset("RE") and r[2] == animal) == use_re and (use_re or r[2] == "any")
        ]
        text, tags, _ = p.pick(pool, key=lambda r: r[0])
        parts["R"] = fill(p.pick(d2.R_LEADS), text)
        got |= set(tags)
    if "D" in want:
        d = p.pick(d2.D_CLAUSES)
        if "E" in want and "E" not in got and " like " not in d and p.chance(0.45):
            like = p.pick([x for x in d2.E_LIKE if x[1] == animal], key=lambda x: x[0])[0]
            parts["D"] = fill(p.pick(d2.D_LEADS), d + ", " + like)
            got.add("E")
        else:
            parts["D"] = fill(p.pick(d2.D_LEADS), d)
        got.add("D")
    if "E" in want and ("E" not in got or p.chance(0.3)):
        e = p.pick([x for x in d2.E_CLAUSES if x[1] in (animal, "both")], key=lambda x: x[0])[0]
        parts["E"] = fill(p.pick(d2.E_LEADS), e)
        got.add("E")

    # Things that earn nothing, in the slots the answer leaves empty.
    if "D" not in want and (p.chance(0.35) or (target == 0 and p.chance(0.4))):
        parts["D"] = fill(p.pick(d2.D_LEADS), p.pick(d2.WRONG_D))
    if "R" not in want and (p.chance(0.35) or (target == 0 and p.chance(0.5))):
        parts["R"] = fill(p.pick(d2.R_LEADS), p.pick(d2.WRONG_R))
    if "E" not in got and p.chance(0.15 if target else 0.35):
        parts["E"] = fill(p.pick(d2.E_LEADS), p.pick(d2.WRONG_E))
    if p.chance(0.2) or not parts:
        parts["N"] = sentence(p.pick(d2.NEUTRAL))

    keys = ["D", "E", "R", "N"]
    if p.chance(0.2):
        keys = ["R", "D", "E", "N"]
    if p.chance(0.4):
        keys.remove("N")
        keys.insert(0, "N")
    assert got == want, (got, want)
    return " ".join(parts[k] for k in keys if k in parts), got


# ------------------------------------------------------------------------------------------------ content set
def build_content(
    prompt_id: str,
    whole: list[tuple[str, int]],
    compose: Callable[[Picker, int], tuple[str, set[str]]],
    seen: set[str],
) -> list[dict[str, Any]]:
    """All answers of one prompt; ``seen`` holds the duplicate keys of every answer so far (all prompts)."""
    counts = CONTENT_COUNTS[prompt_id]
    p = Picker(rng_for("content", prompt_id))
    answers: list[tuple[str, int]] = []
    for text, score in whole:
        k = norm_key(text)
        if k in seen:
            raise ValueError(f"{prompt_id}: hand-written answer repeated: {text!r}")
        seen.add(k)
        answers.append((text, score))
    have = Counter(s for _, s in answers)
    for score, n in sorted(counts.items()):
        if have[score] > n:
            raise ValueError(
                f"{prompt_id}: {have[score]} hand-written answers with score {score} > target {n}"
            )
        tries = 0
        while have[score] < n:
            tries += 1
            if tries > 20000:
                raise RuntimeError(f"{prompt_id}: cannot compose enough distinct answers with score {score}")
            text, elems = compose(p, score)
            if len(elems) != score:
                raise AssertionError((text, elems, score))
            text = content_noise(p, text)
            k = norm_key(text)
            if k in seen or n_words(text) > 60:
                continue
            seen.add(k)
            answers.append((text, score))
            have[score] += 1
    return with_splits_and_ids(prompt_id, answers, p.rng)


def with_splits_and_ids(prompt_id: str, answers: list[tuple[str, int]], rng: Rng) -> list[dict[str, Any]]:
    """Shuffle, number ``<prompt>-0001``..., and mark a score-stratified 25% as ``test``."""
    order = rng.permutation(len(answers))
    answers = [answers[i] for i in order]
    by_score: dict[int, list[int]] = {}
    for i, (_, s) in enumerate(answers):
        by_score.setdefault(s, []).append(i)
    test: set[int] = set()
    for _s, idx in sorted(by_score.items()):
        k = round(TEST_FRACTION * len(idx))
        test |= set(rng.sample(idx, k))
    return [
        {
            "id": f"{prompt_id}-{i + 1:04d}",
            "prompt_id": prompt_id,
            "text": t,
            "score": s,
            "split": "test" if i in test else "train",
        }
        for i, (t, s) in enumerate(answers)
    ]


# ------------------------------------------------------------------------------------------------ essays
ESSAY_ERRORS: dict[str, list[str]] = {
    "because": ["becuase", "beacause", "cause"],
    "a lot": ["alot"],
    "their": ["there"],
    "they're": ["there", "their"],
    "volunteer": ["volunter", "voluntear"],
    "volunteering": ["volunterring", "volenteering"],
    "community": ["comunity", "communty"],
    "responsibility": ["responsability"],
    "responsible": ["responsable"],
    "don't": ["dont"],
    "doesn't": ["doesnt"],
    "it's": ["its"],
    "that's": ["thats"],
    "I'm": ["im"],
    "too": ["to"],
    "than": ["then"],
    "really": ["realy"],
    "people": ["poeple"],
    "students": ["studens", "student"],
    "different": ["diffrent"],
    "believe": ["beleive"],
    "required": ["requierd"],
    "opinion": ["opinon"],
    "experience": ["experiance"],
    "schedule": ["schedual"],
    "would have": ["would of"],
    "could have": ["could of"],
    "something": ["somthing"],
    "probably": ["probly"],
    "important": ["importent"],
    "everyone": ["every one"],
    "you're": ["your"],
    "college": ["collage"],
    "finally": ["finaly"],
}


def inject_errors(p: Picker, paragraphs: list[str], k: int, ops: Sequence[str]) -> list[str]:
    """Add ``k`` surface errors drawn from ``ops``: ``word`` (misspelling), ``lower`` (lower-case sentence
    start), ``splice`` (comma splice), ``comma`` (dropped comma after a transition), ``i`` (lower-case I)."""
    paras = list(paragraphs)
    for _ in range(k):
        op = str(p.rng.choice(list(ops)))
        j = int(p.rng.integers(len(paras)))
        text = paras[j]
        if op == "word":
            present = [
                w
                for w in ESSAY_ERRORS
                if re.search(rf"(?<![\w']){re.escape(w)}(?![\w'])", text, re.IGNORECASE)
            ]
            if present:
                w = str(p.rng.choice(present))
                text = replace_word(text, w, str(p.rng.choice(ESSAY_ERRORS[w])), int(p.rng.integers(4)))
        elif op == "lower":
            s = split_sentences(text)
            i = int(p.rng.integers(len(s)))
            s[i] = decap(s[i])
            text = " ".join(s)
        elif op == "splice":
            s = split_sentences(text)
            if len(s) > 2:
                i = int(p.rng.integers(len(s) - 1))
                if s[i].endswith("."):
                    s[i : i + 2] = [s[i][:-1] + ", " + decap(s[i + 1])]
                text = " ".join(s)
        elif op == "comma":
            text = re.sub(
                r"\b(First|Second|Also|In addition|For example|However|Finally|In conclusion),",
                r"\1",
                text,
                count=1,
            )
        elif op == "i":
            text = re.sub(r"\bI\b(?!')", "i", text, count=int(p.rng.integers(1, 4)))
        paras[j] = text
    return paras


# Topic sentences that announce a later point ("Another reason...", "... also ...") never open the body, and
# get no ordinal; topics that announce the first point ("One reason is...") only open it.
NON_INITIAL = re.compile(r"^(Another|Also|In addition|Beyond|Instead|Finally)\b|\balso\b", re.IGNORECASE)
INITIAL_ONLY = re.compile(r"^One reason\b")
ORDINALS = {  # by position of the reason paragraph; "last" for the final one (when it is not the first)
    "hi": {
        "first": ["First,", "To begin with,", ""],
        "second": ["Second,", "In addition,", ""],
        "third": ["Third,", "In addition,", ""],
        "last": ["Finally,", "Lastly,", ""],
    },
    "mid": {
        "first": ["First,", "First of all,", ""],
        "second": ["Second,", "Also,", ""],
        "third": ["Third,", "Also,", ""],
        "last": ["Last,", "Also,", "Finally,", ""],
    },
    "lo": {
        "first": ["First", ""],
        "second": ["Second", "Also", "And", ""],
        "third": ["Third", "Also", "And", ""],
        "last": ["Also", "And", "Last", ""],
    },
}


class EssaySlots:
    def __init__(self, p: Picker) -> None:
        self.p = p
        self.principal = p.pick(eb.PRINCIPALS)
        self.school = p.pick(eb.SCHOOLS)
        self.hours = p.pick(eb.HOURS)
        self.name = p.pick(eb.NAMES)
        self.person = p.pick(eb.PERSONS)
        self.person_pos = p.pick(eb.PERSONS_POSSESSIVE)
        self.places = list(p.rng.permutation(len(eb.PLACES)))

    def fmt(self, template: str) -> str:
        kind = None
        m = re.match(r"^\[(\w+)\]", template)
        if m:
            kind, template = m.group(1), template[m.end() :]
        if "{place}" in template or "{activity}" in template:
            i = next(i for i in self.places if kind is None or kind in eb.PLACES[i][2])
            self.places.remove(i)
            self.places.append(i)  # rotate: the next example uses another place
            place, activity, _ = eb.PLACES[i]
        else:
            place = activity = ""
        person = self.person_pos if "{person}'s" in template else self.person
        out = template.format(
            principal=self.principal,
            school=self.school,
            hours=self.hours,
            name=self.name,
            person=person,
            place=place,
            activity=activity,
        )
        return " ".join(cap(s) for s in split_sentences(out)) if out else out


def reason_paragraph(
    p: Picker,
    slots: EssaySlots,
    bank: dict[str, list[str]],
    pos: int,
    last: bool,
    level: str,
    n_support: int,
    p_example: float,
    p_wrap: float,
) -> str:
    if pos == 0:
        topics = [t for t in bank["topic"] if not NON_INITIAL.search(t)]
    else:
        topics = [t for t in bank["topic"] if not INITIAL_ONLY.search(t)]
    if not topics:
        raise ValueError(f"no topic sentence usable at position {pos}: {bank['topic']}")
    topic = p.pick(topics)
    if not NON_INITIAL.search(topic) and not INITIAL_ONLY.search(topic):
        slot = "first" if pos == 0 else "last" if last else "second" if pos == 1 else "third"
        ordinal = str(p.rng.choice(ORDINALS[level][slot]))
        if ordinal:
            topic = ordinal + " " + decap(topic)
    supports: list[str] = []
    for _ in range(min(n_support, len(bank["support"]))):
        supports.append(p.pick([x for x in bank["support"] if x not in supports]))
    sents = [topic] + supports
    if bank["example"] and p.chance(p_example):
        sents.append(p.pick(bank["example"]))
    if bank["wrap"] and p.chance(p_wrap):
        sents.append(p.pick(bank["wrap"]))
    return " ".join(slots.fmt(s) for s in sents)


LEVEL_WORDS = {6: (250, 350), 5: (210, 330), 4: (170, 290), 3: (140, 240), 2: (120, 200)}


def build_essay(p: Picker, score: int, stance: str) -> str:
    slots = EssaySlots(p)
    reasons = list(eb.REASONS[stance])
    p.rng.shuffle(reasons)
    R = eb.REASONS[stance]
    paras: list[str] = []
    if score >= 5:
        n = p.randint(2, 3)
        paras.append(
            slots.fmt(
                p.pick(eb.INTROS[stance]["hi"] if score == 6 or p.chance(0.7) else eb.INTROS[stance]["mid"])
            )
        )
        for i, r in enumerate(reasons[:n]):
            paras.append(
                reason_paragraph(
                    p,
                    slots,
                    R[r]["hi"],
                    i,
                    i == n - 1,
                    "hi",
                    p.randint(1, 2),
                    0.85 if score == 6 else 0.65,
                    0.5 if score == 6 else 0.35,
                )
            )
        if score == 6:
            paras.append(slots.fmt(p.pick(eb.COUNTERS[stance]["hi"])))
        elif p.chance(0.3):
            paras.append(slots.fmt(p.pick(eb.COUNTERS[stance]["mid"])))
        paras.append(
            slots.fmt(
                p.pick(
                    eb.CONCLUSIONS[stance]["hi"]
                    if score == 6 or p.chance(0.6)
                    else eb.CONCLUSIONS[stance]["mid"]
                )
            )
        )
        errors = 0 if score == 6 else p.randint(0, 2)
    elif score == 4:
        n = p.randint(2, 3)
        paras.append(slots.fmt(p.pick(eb.INTROS[stance]["mid"])))
        hi_at = p.randint(0, n) if p.chance(0.3) else -1
        for i, r in enumerate(reasons[:n]):
            lvl = "hi" if i == hi_at else "mid"
            paras.append(reason_paragraph(p, slots, R[r][lvl], i, i == n - 1, lvl, p.randint(1, 2), 0.6, 0.4))
        if p.chance(0.3):
            paras.append(slots.fmt(p.pick(eb.COUNTERS[stance]["mid"])))
        paras.append(slots.fmt(p.pick(eb.CONCLUSIONS[stance]["mid"])))
        errors = p.randint(2, 4)
    elif score == 3:
        n = p.randint(2, 3)
        paras.append(
            slots.fmt(p.pick(eb.INTROS[stance]["mid"] if p.chance(0.5) else eb.INTROS[stance]["lo"]))
        )
        for i, r in enumerate(reasons[:n]):
            lvl = "mid" if p.chance(0.6) else "lo"
            paras.append(reason_paragraph(p, slots, R[r][lvl], i, i == n - 1, lvl, p.randint(1, 2), 0.4, 0.2))
        extra = [p.pick(eb.REPEATS[stance])]
        if p.chance(0.3):
            extra.append(p.pick(eb.DIGRESSIONS))
        paras[-1] += " " + " ".join(extra)
        if p.chance(0.4):  # two reasons run together in one paragraph
            paras[1:3] = [paras[1] + " " + paras[2]]
        paras.append(
            slots.fmt(
                p.pick(eb.CONCLUSIONS[stance]["lo"] if p.chance(0.6) else eb.CONCLUSIONS[stance]["mid"])
            )
        )
        errors = p.randint(5, 8)
    else:  # 2: one block of lo sentences with repetition and digression
        n = p.randint(3, 4)
        body = [slots.fmt(p.pick(eb.INTROS[stance]["lo"]))]
        for i, r in enumerate(reasons[:n]):
            body.append(
                reason_paragraph(p, slots, R[r]["lo"], i, i == n - 1, "lo", p.randint(1, 2), 0.5, 0.0)
            )
        body.insert(p.randint(2, len(body)), p.pick(eb.REPEATS[stance]))
        body.insert(p.randint(1, len(body)), p.pick(eb.DIGRESSIONS))
        if p.chance(0.5):
            body.append(p.pick(eb.DIGRESSIONS))
        body.append(slots.fmt(p.pick(eb.CONCLUSIONS[stance]["lo"])))
        paras = [" ".join(body)]
        errors = p.randint(10, 15)
    lvl = "hi" if score >= 5 else "mid" if score >= 3 else "lo"
    ops = ["word", "comma"] if score >= 5 else ["word", "word", "word", "lower", "splice", "comma"]
    paras = inject_errors(p, paras, errors, ops + (["i"] if score <= 3 else []))
    greeting = slots.fmt(p.pick(eb.GREETINGS[lvl])) if score >= 3 or p.chance(0.6) else ""
    signoff = slots.fmt(p.pick(eb.SIGNOFFS[lvl])) if score >= 4 or p.chance(0.5) else ""
    if score == 2:
        return " ".join(x for x in [greeting, paras[0], signoff] if x)
    return "\n\n".join(x for x in [greeting, *paras, signoff] if x)


def count_sentences(text: str) -> int:
    return len([s for s in re.split(r"[.!?]+(?:\s+|$)", text) if len(s.split()) >= 2])


def build_essays(stances: Counter[str] | None = None) -> list[dict[str, Any]]:
    """All essays; ``stances`` (if given) counts the stance of the built essays (scores 2-6)."""
    p = Picker(rng_for("essays"))
    seen: set[str] = set()
    essays: list[tuple[str, int]] = []
    for text in eb.WHOLE_1:
        if not 120 <= n_words(text) <= 350 or count_sentences(text) < 5:
            raise ValueError(f"score-1 essay out of bounds ({n_words(text)} words): {text[:60]!r}")
        seen.add(norm_key(text))
        essays.append((text, 1))
    if len(eb.WHOLE_1) != ESSAY_COUNTS[1]:
        raise ValueError(f"{len(eb.WHOLE_1)} score-1 essays, expected {ESSAY_COUNTS[1]}")
    for score in range(2, 7):
        lo, hi = LEVEL_WORDS[score]
        made, tries = 0, 0
        while made < ESSAY_COUNTS[score]:
            tries += 1
            if tries > 5000:
                raise RuntimeError(f"cannot build essays of score {score} within {lo}-{hi} words")
            stance = "for" if p.chance(0.6) else "against"
            text = build_essay(p, score, stance)
            k = norm_key(text)
            if not lo <= n_words(text) <= hi or count_sentences(text) < 5 or k in seen:
                continue
            seen.add(k)
            essays.append((text, score))
            made += 1
            if stances is not None:
                stances[stance] += 1
    return with_splits_and_ids(eb.PROMPT_ID, essays, p.rng)


# ------------------------------------------------------------------------------------------------ squad
def build_squad() -> dict[str, Any]:
    data = []
    for ai, art in enumerate(sq.ARTICLES, start=1):
        ctx = art["context"]
        qas = []
        for qi, (question, answers) in enumerate(art["qas"], start=1):
            golds = []
            for ans in answers:
                n = ctx.count(ans)
                if n != 1:
                    raise ValueError(
                        f"squad {art['title']} q{qi}: answer {ans!r} occurs {n} times in the context"
                    )
                start = ctx.index(ans)
                assert ctx[start : start + len(ans)] == ans
                golds.append({"text": ans, "answer_start": start})
            qas.append({"id": f"demo-squad-{ai}-{qi}", "question": question, "answers": golds})
        data.append({"title": art["title"], "paragraphs": [{"context": ctx, "qas": qas}]})
    return {"version": "1.1", "data": data}


# ------------------------------------------------------------------------------------------------ prompts
def build_prompts() -> list[dict[str, Any]]:
    return [
        {
            "id": d1.PROMPT_ID,
            "task": "content",
            "text": d1.QUESTION,
            "source": None,
            "score_min": 0,
            "score_max": 2,
            "rubric": d1.RUBRIC,
        },
        {
            "id": d2.PROMPT_ID,
            "task": "content",
            "text": d2.QUESTION,
            "source": d2.ARTICLE_TITLE + "\n\n" + d2.ARTICLE,
            "score_min": 0,
            "score_max": 3,
            "rubric": d2.RUBRIC,
        },
        {
            "id": eb.PROMPT_ID,
            "task": "essay",
            "text": eb.PROMPT,
            "source": None,
            "score_min": 1,
            "score_max": 6,
            "rubric": eb.RUBRIC,
        },
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def build(out: Path) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    content = build_content(d1.PROMPT_ID, d1.WHOLE, compose_demo1, seen)
    content += build_content(d2.PROMPT_ID, d2.WHOLE, compose_demo2, seen)
    stances: Counter[str] = Counter()
    essays = build_essays(stances)
    squad = build_squad()
    (out / "demo_prompts.json").write_text(
        json.dumps(build_prompts(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    write_jsonl(out / "demo_content.jsonl", content)
    write_jsonl(out / "demo_essays.jsonl", essays)
    (out / "demo_squad.json").write_text(
        json.dumps(squad, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return {
        "content": len(content),
        "essays": len(essays),
        "essay_stances_scores_2_6": dict(sorted(stances.items())),
        "squad_questions": sum(len(p["qas"]) for a in squad["data"] for p in a["paragraphs"]),
    }


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE_DATA
    print(build(target))
