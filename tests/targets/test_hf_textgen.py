"""HFTarget ``task = "text-generation"``: a local causal LM as a chat grader, with the chat target's templates and
reply reading (tests/targets/test_openai_target.py covers those rules).

Two real models: a tiny Llama built here whose weights are all zero (every logit is 0, so greedy decoding emits
token 0, which this vocabulary makes the word "3": a reply known in advance, to check the chat template, greedy
decoding, the parsing, the scale check and the cache), and the real SmolLM2-135M-Instruct GGUF file that
``make setup`` extracts (loaded through transformers + gguf, as a user's own GGUF would be; converted to a model
directory in the callbluff cache on first use, about a minute once per machine, a second afterwards)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="HF targets need the 'hf' extra (torch + transformers)")

from callbluff.engine.target_factory import from_config  # noqa: E402
from callbluff.records import Prompt  # noqa: E402
from callbluff.resources.local_llm import gguf_path  # noqa: E402
from callbluff.targets import CachedTarget, Input, PredictionCache  # noqa: E402
from callbluff.targets.validate import OutputCheck  # noqa: E402

PROMPTS = {"q": Prompt(id="q", task="content", text="What is a stack?", score_min=0, score_max=5,
                       reference="A last-in first-out list."),
           "narrow": Prompt(id="narrow", task="content", text="Is it LIFO?", score_min=0, score_max=2)}
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


@pytest.fixture(scope="module")
def zero_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["3", "</s>", "[UNK]", "<|system|>", "<|user|>", "<|assistant|>", "stack", "LIFO", "Question:",
             "Student", "answer:"]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", eos_token="</s>", pad_token="</s>")
    tok.chat_template = TEMPLATE
    cfg = LlamaConfig(vocab_size=len(words), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                      eos_token_id=1, pad_token_id=1, bos_token_id=1, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    d = tmp_path_factory.mktemp("zero-llama")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d


def test_text_generation_uses_the_chat_template_greedy_and_the_shared_reading(zero_llama: Path,
                                                                              tmp_path: Path) -> None:
    t = from_config({"type": "hf", "task": "text-generation", "model_dir": str(zero_llama), "max_tokens": 3})
    t.bind_prompts(PROMPTS)
    kind, messages = t._messages(Input("content", "LIFO", prompt_id="q"))
    assert kind == "score" and messages[0]["role"] == "system"
    assert "Reply with the score only" in messages[0]["content"] and "from 0 (wrong or irrelevant) to 5" in \
        messages[0]["content"]
    assert messages[1]["content"] == ("Question: What is a stack?\nReference answer: A last-in first-out list.\n"
                                      "Student answer: LIFO")
    with PredictionCache(tmp_path / "p.sqlite") as cache:
        ct = CachedTarget(t, cache, check=OutputCheck("score", prompts=PROMPTS))
        ok, outside = ct.predict([Input("content", "LIFO", prompt_id="q"),
                                  Input("content", "LIFO", prompt_id="narrow")])
        assert ok.score == 3 and ok.error is None  # the reply "3 3 3", read by the default last-number regex
        assert outside.error.startswith("score 3 outside 0-2 for prompt narrow")
        assert t.stats.usage["completion_tokens"] == 6 and t.stats.usage["prompt_tokens"] > 10
        calls = t.stats.calls
        [again] = ct.predict([Input("content", "LIFO", prompt_id="q")])
        assert again == ok and t.stats.calls == calls  # cached under the rendered messages
    # a reading rule the reply cannot satisfy: an error row with the reply's snippet, never a 0
    strict = from_config({"type": "hf", "task": "text-generation", "model_dir": str(zero_llama), "max_tokens": 3,
                          "score_path": "score"})
    strict.bind_prompts(PROMPTS)
    [bad] = strict.predict([Input("content", "LIFO", prompt_id="q")])
    assert bad.error == "unparseable reply (not JSON): '3 3 3'" and bad.score is None
    assert strict.fingerprint != t.fingerprint
    # an answer for a QA input (no prompt): the whole reply
    [qa] = t.predict([Input("reading", "Who?", context="Brunelleschi built it.")])
    assert qa.answer == "3 3 3"


def test_text_generation_config_errors(zero_llama: Path, tmp_path: Path) -> None:
    from callbluff.targets.config import TargetConfigError

    with pytest.raises(TargetConfigError, match="key 'system' is for task = \"text-generation\" only"):
        from_config({"type": "hf", "task": "text-classification", "model_dir": str(zero_llama), "system": "x"})
    with pytest.raises(FileNotFoundError, match="no GGUF file at"):
        from_config({"type": "hf", "task": "text-generation", "model_dir": str(tmp_path / "none.gguf")})


@pytest.mark.slow
def test_real_gguf_file_grades_through_transformers() -> None:
    path = gguf_path()
    if not path.is_file():
        pytest.skip(f"no GGUF model at {path}: run `python -m callbluff.resources.local_llm` (`make setup` does it)")
    pytest.importorskip("gguf", reason="GGUF files need the 'gguf' package (the 'hf' extra)")
    t = from_config({"type": "hf", "task": "text-generation", "model_dir": str(path), "max_tokens": 6})
    t.bind_prompts(PROMPTS)
    ct = CachedTarget(t, None, check=OutputCheck("score", prompts=PROMPTS))
    [o] = ct.predict([Input("content", "A list where the last item added is the first removed.", prompt_id="q")])
    t.close()
    assert t.stats.usage["completion_tokens"] <= 6 and t.stats.calls == 1
    # SmolLM2-135M is not a valid grader: whatever it says is either read as a score on the scale or recorded as
    # an error row naming the cause, never a silent 0
    if o.error is None:
        assert 0 <= o.score <= 5
    else:
        assert o.error.startswith(("unparseable reply", "score ")), o.error
