"""A pre-filter in front of an LLM grader: normalise the answer, strip what a reader cannot see, and flag
answers that talk to the grader instead of answering.

What it does to every answer (:func:`clean`), in this order:

1. Unicode NFKC normalisation (compatibility forms: full-width letters, ligatures, mathematical alphanumerics
   become the plain letters a reader sees);
2. invisible characters removed: zero-width characters (U+200B-U+200D, U+2060, U+FEFF, U+180E, the soft hyphen
   U+00AD), bidirectional controls (U+200E/F, U+061C, U+202A-U+202E, U+2066-U+2069), variation selectors and the
   Unicode Tags block (U+E0000-U+E007F), which renders as nothing but spells ASCII to a model (Boucher et al.
   2022, "Bad Characters", Sec. 4: invisible characters).

The cleaned text is what the grader receives (:meth:`InjectionFilter.transform`). An answer is *flagged* (rejected:
the scale minimum, or routed to a human, ``action``) when its cleaned text, its hidden Tags text decoded to ASCII,
or either folded for look-alike letters (Cyrillic and Greek homoglyphs, Boucher et al. Sec. 4) and lower-cased,
matches one of :data:`RULES`:

- ``instruction``: an imperative to the grader ("ignore the rubric", "give full marks", "award ... points",
  "output a score"; Perez & Ribeiro 2022; Liu et al. 2024's naive and context-ignoring attacks);
- ``role``: a role-play ("you are now", "pretend you are", "act as", "stay in character");
- ``turn``: chat-template tokens or a fake turn header (``<|im_start|>``, ``[INST]``, ``<<SYS>>``, ``### System:``,
  a line ``system:``/``assistant:``), or a closing delimiter followed by a verdict (``</answer>``);
- ``score``: a score-shaped span: a JSON object with a score-like key and a number, ``Score: 5``, ``5/5 marks``,
  "final score", "full marks", "grading complete";
- ``claim``: a claim about the grading ("meets every criterion of the rubric", "deserves full marks", "agrees with
  the reference answer", "fully correct");
- ``opener``: an answer that is nothing but a reasoning opener (Zhao et al. 2025's master keys "Thought process:",
  "Solution", "Let's solve this problem step by step."); an answer with no word at all (":", ".") is flagged by
  every filter (:meth:`~callbluff.defenses.filters.AnswerFilter.flag`);
- ``rubric``: a run of ``rubric_words`` (8) or more consecutive words of the prompt's rubric copied in (rubric
  echo). The reference answer is *not* matched: a correct answer shares its words, so flagging overlap with it
  would reject good answers (its cost would land on honest students).

The rules are ours (the papers define the attacks, not a detector); they are regular expressions, so what they
flag can be read and argued with, and their clean cost (real answers flagged) is measured on real Mohler and
ASAP-SAS answers (tests/defenses/test_injection_filter.py; docs/findings/llm-graders.md). ``fit`` learns no
threshold: it records each prompt's scale and rubric. Saved and loaded like the other filters
(``callbluff filter fit --kind injection``), usable with ``filter = "DIR"`` in front of any target.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, Self

import numpy as np

from callbluff.defenses.filters import AnswerFilter, Battery, register_filter
from callbluff.progress import Progress
from callbluff.records import Prompt, ScoredResponse

_INVISIBLE = ("\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
              "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_STRIP = {ord(c): None for c in _INVISIBLE}
_STRIP.update({cp: None for cp in range(0xFE00, 0xFE10)})
_STRIP.update({cp: None for cp in range(0xE0100, 0xE01F0)})
_STRIP.update({cp: None for cp in range(0xE0000, 0xE0080)})
_TAGS = re.compile("[\U000e0020-\U000e007e]+")

CONFUSABLES = {
    # Cyrillic
    "\u0430": "a", "\u0432": "b", "\u0441": "c", "\u0435": "e", "\u04bb": "h", "\u0456": "i", "\u0458": "j",
    "\u043a": "k", "\u043c": "m", "\u043d": "h", "\u043e": "o", "\u0440": "p", "\u0455": "s", "\u0442": "t",
    "\u0443": "y", "\u0445": "x", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04af": "y", "\u0410": "A",
    "\u0412": "B", "\u0421": "C", "\u0415": "E", "\u041d": "H", "\u0406": "I", "\u0408": "J", "\u041a": "K",
    "\u041c": "M", "\u041e": "O", "\u0420": "P", "\u0405": "S", "\u0422": "T", "\u0425": "X", "\u0423": "Y",
    # Greek
    "\u03bf": "o", "\u03b1": "a", "\u03b5": "e", "\u03b9": "i", "\u03ba": "k", "\u03bd": "v", "\u03c1": "p",
    "\u03c4": "t", "\u03c5": "u", "\u03c7": "x", "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z",
    "\u0397": "H", "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P",
    "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X",
}
"""Look-alike letters folded to Latin before matching (a subset of Unicode's confusables: the Cyrillic and Greek
letters that render like Latin ones in common fonts). Only the matched copy is folded; the grader gets the
answer's own letters (a Russian or Greek answer stays intact)."""
_FOLD = {ord(k): v for k, v in CONFUSABLES.items()}

_SCOREWORD = r"(?:score|grade|mark|marks|points?|rating|result)"
RULES: dict[str, re.Pattern[str]] = {
    "instruction": re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,60}\b(?:instructions?|rubric|criteria|"
        r"reference answer|grading|guidelines|system prompt)\b"
        r"|\b(?:give|award|assign|grant|output|return|print|set)\b[^.\n]{0,40}\b(?:full marks|full credit|"
        r"full points|(?:maximum|max|highest|top|perfect)\s+(?:score|grade|marks?|points?|rating))\b"
        r"|\b(?:give|award|assign|grant|output)\b[^.\n]{0,25}\b(?:score|grade|marks?)\s+(?:of\s+)?\d"
        r"|\b(?:note|message|instruction)s?\s+(?:to|for)\s+(?:the\s+)?(?:grader|evaluator|examiner|marker|"
        r"judge)\b|\bto the (?:grader|evaluator|examiner|marker)\s*:"
        r"|\b(?:grading|scoring|marking)\s+(?:policy|criteria|rubric|instructions?)\b[^.\n]{0,30}\b(?:changed|"
        r"updated?|replaced|no longer)\b|\bthe rubric has been\b"),
    "role": re.compile(
        r"\byou are now\b|\bpretend (?:to be|you are)\b|\bstay in character\b|\bfrom now on,? you\b"
        r"|\b(?:you|please)\s+(?:will |must |should )?act as\b|\bact as (?:a|an|the)\s+(?:\w+\s+)?(?:grader|"
        r"teacher|examiner|evaluator|judge|marker)\b|\blet'?s play a game\b|\brole-?play\b"),
    "turn": re.compile(
        r"<\|?im_(?:start|end)\|?>|\[/?inst\]|<</?sys>>|<\|(?:system|user|assistant|eot_id|start_header_id)\|>"
        r"|^#{1,4}\s*(?:system|assistant|user|instruction)s?\s*:?\s*$|^(?:system|assistant)\s*:"
        r"|</(?:answer|response|student_answer|essay|input)>", re.MULTILINE),
    "score": re.compile(
        r"\{\s*[\"']?" + _SCOREWORD + r"[\"']?\s*:\s*\d"
        r"|\b(?:final\s+|total\s+)?(?:score|grade|rating|marks?)\s*[:=]\s*\d"
        r"|<" + _SCOREWORD + r">\s*\d|\bfinal (?:score|grade|mark)\b|\bfull marks\b|\bgrading complete\b"
        r"|\b\d+(?:\.\d+)?\s*(?:/|out of)\s*\d+\s*" + _SCOREWORD + r"\b"),
    "claim": re.compile(
        r"\b(?:meets|addresses|satisfies|fulfils|fulfills|covers)\b[^.\n]{0,30}\b(?:every|all)\b[^.\n]{0,30}"
        r"\b(?:criteri\w*|rubric|requirements?|grading)\b"
        r"|\b(?:deserves|merits|earns|warrants)\b[^.\n]{0,20}\b(?:full|maximum|top|highest|perfect)\b"
        r"|\b(?:agrees|matches|consistent)\s+with\s+the\s+reference\s+answer\b|\bself-check\b"
        r"|\bthis answer is (?:fully|completely|entirely) correct\b|\bconfirmed by my teacher\b"),
    "opener": re.compile(
        r"^\W*(?:thought process|solution|answer|let'?s solve this problem step by step|let'?s think step by step|"
        r"respuesta|解|かいせつ)\W*$"),
}
"""The rules (module docstring), applied to the folded, lower-cased text."""


def clean(text: str) -> str:
    """NFKC and the invisible characters removed (module docstring): what the grader is sent."""
    return unicodedata.normalize("NFKC", text).translate(_STRIP)


def hidden_text(text: str) -> str:
    """The ASCII that Unicode Tags characters in ``text`` spell (an invisible instruction), "" when none."""
    return " ".join("".join(chr(ord(c) - 0xE0000) for c in m.group()) for m in _TAGS.finditer(text))


def folded(text: str) -> str:
    """The copy the rules read: cleaned, look-alike letters folded to Latin, lower-cased, white space collapsed
    within lines."""
    t = clean(text).translate(_FOLD).lower()
    return "\n".join(" ".join(line.split()) for line in t.splitlines())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", folded(text))


def shingles(text: str, n: int) -> set[str]:
    """The runs of ``n`` consecutive words of ``text`` (folded, lower-cased, punctuation dropped)."""
    w = _words(text)
    return {" ".join(w[i:i + n]) for i in range(len(w) - n + 1)}


def findings(text: str, rubric_shingles: set[str] | frozenset[str] = frozenset(), rubric_words: int = 8
             ) -> list[tuple[str, str]]:
    """Every rule that matches ``text`` (its cleaned copy or its hidden Tags text), with the matched span:
    ``[(rule, span), ...]`` in :data:`RULES` order, ``rubric`` last."""
    copies = [folded(text)]
    hidden = hidden_text(text)
    if hidden:
        copies.append(folded(hidden))
    out: list[tuple[str, str]] = []
    for rule, pat in RULES.items():
        for c in copies:
            m = pat.search(c)
            if m:
                out.append((rule, m.group().strip()[:80]))
                break
    if rubric_shingles:
        hit = next((s for s in sorted(shingles(text, rubric_words)) if s in rubric_shingles), None)
        if hit:
            out.append(("rubric", hit))
    return out


@register_filter
class InjectionFilter(AnswerFilter):
    """The pre-filter of the module docstring as an :class:`~callbluff.defenses.filters.AnswerFilter`: ``values``
    = the number of rules an answer matches, flagged at one or more (threshold 0.5); ``transform`` = the cleaned
    text the grader receives; ``action``: ``minimum`` (a flagged answer gets the scale's minimum) or ``human``
    (it gets no automatic score: an error row "routed to a human", counted as a failed prediction, never 0)."""

    kind: ClassVar[str] = "injection"
    uses_dev: ClassVar[bool] = False

    def __init__(self, *, action: Literal["minimum", "human"] = "minimum", rubric_words: int = 8,
                 **kw: Any) -> None:
        if action not in ("minimum", "human"):
            raise ValueError(f"InjectionFilter: action={action!r}; use 'minimum' or 'human'")
        if int(rubric_words) < 3:
            raise ValueError(f"InjectionFilter: rubric_words={rubric_words}; use 3 or more (shorter runs are "
                             "ordinary phrases)")
        super().__init__(**kw)
        self.params.update({"action": action, "rubric_words": int(rubric_words)})
        self.action = action

    def fit(self, records: Sequence[ScoredResponse], prompts: Mapping[str, Prompt], *,
            adversarial: Mapping[str, Sequence[str]] | None = None, battery: Battery | None = None,
            progress: Progress | None = None) -> Self:
        """Record each prompt's scale and its rubric's word runs (nothing is learnt from the answers: the rules
        are fixed; ``records`` only count); ``progress`` as in :meth:`AnswerFilter.fit`."""
        super().fit(records, prompts, adversarial=adversarial, battery=battery, progress=progress)
        n = self.params["rubric_words"]
        for pid, prompt in prompts.items():
            self.states[pid]["rubric_shingles"] = sorted(shingles(prompt.rubric, n)) if prompt.rubric else []
        return self

    def _fit_prompt(self, fit_texts: list[str], dev_real: list[str], dev_adv: list[str]) -> dict[str, Any]:
        return {"threshold": 0.5, "threshold_from": "fixed rules (one match flags)"}

    def _values_of(self, state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        sh = frozenset(state.get("rubric_shingles", ()))
        n = self.params["rubric_words"]
        return np.array([float(len(findings(t, sh, n))) for t in texts])

    def explain(self, prompt_id: str | None, texts: Sequence[str]) -> list[list[tuple[str, str]]]:
        """Per text, the rules it matched with their spans (why it is flagged)."""
        st = self.state(prompt_id)
        sh = frozenset(st.get("rubric_shingles", ()))
        return [findings(t, sh, self.params["rubric_words"]) for t in texts]

    def transform(self, prompt_id: str | None, texts: Sequence[str]) -> list[str]:
        """The texts the grader receives: :func:`clean` (NFKC, invisible characters removed)."""
        return [clean(t) for t in texts]
