"""Generation over a GPT-style decoder sealed as prefill + decode with its caches as state
(tests/bench/decoder/decoder.py: 4 layers, d 256, vocab 1024, context 2048): the artifact holds one
set of weights, and 256 greedy tokens from Python (Program.generate) and from C (kiln generate)
equal eager PyTorch's, the logits within 1e-4; sampling is seeded; a full cache is refused with
the dims named (spec/generate.md). The artifact carries eager PyTorch's greedy tokens as a
generation case, which Program.replay_generation, kiln.verify and `kiln verify` replay, and tokens
that eager PyTorch does not make are refused when sealed (spec/compatibility.md §5.1)."""
import json
import os
import sys

import pytest

from conftest import numpy, torch

import kiln

pytest.importorskip("torch.export")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "decoder"))
import decoder as model  # noqa: E402

PROMPT = [17, 300, 5, 911, 42, 7, 256, 1000]
TOKENS = 256
CASE_TOKENS = 64  # the generation case sealed with the artifact


@pytest.fixture(scope="module")
def sealed(tmp_path_factory):
    decoder = model.Decoder(seed=1)
    # GPT-2's initializer range for the token embedding: with N(0, 1) the tied logits favour the
    # last token so much that every greedy token repeats it, which would prove little.
    with torch.no_grad():
        decoder.tokens.weight.mul_(0.02)
    decoder.eval()
    tokens, _ = eager_greedy(decoder, PROMPT, CASE_TOKENS)
    artifact = model.export_methods(kiln, decoder, generation=[{"name": "eager", "prompt": PROMPT, "tokens": tokens}])
    path = tmp_path_factory.mktemp("generate") / "decoder.kiln"
    artifact.save(path)
    return decoder, path, kiln.load(path)


def eager_greedy(decoder, prompt, count):
    """Tokens and last-row logits of eager PyTorch, its cache passed along."""
    with torch.no_grad():
        out = model.Prefill(decoder)(torch.tensor([prompt]))
        logits, caches = out[0][0, -1], list(out[1:])
        tokens, rows = [], []
        step = model.Decode(decoder)
        for i in range(count):
            rows.append(logits.numpy())
            token = int(logits.argmax())
            tokens.append(token)
            out = step(torch.tensor([[token]]), torch.tensor([len(prompt) + i]), *caches)
            logits, caches = out[0][0, -1], list(out[1:])
    return tokens, rows


def test_one_set_of_weights(sealed):
    decoder, path, program = sealed
    weights = sum(p.numel() * 4 for p in decoder.parameters())
    assert os.path.getsize(path) <= 1.01 * weights
    assert program.state_names == model.cache_names("present_")
    assert [i.name for i in program.decode.inputs] == ["ids", "position"]


def test_greedy_tokens_equal_eager_pytorch(sealed, run_kiln):
    decoder, path, program = sealed
    want_tokens, want_rows = eager_greedy(decoder, PROMPT, TOKENS)
    assert len(set(want_tokens)) > 100  # a real sequence, not one token repeated
    tokens, rows = program.generate(PROMPT, TOKENS, return_logits=True)
    assert tokens == want_tokens
    for i, (got, want) in enumerate(zip(rows, want_rows)):
        numpy.testing.assert_allclose(got, want, rtol=0, atol=1e-4, err_msg="token %d" % i)
    done = run_kiln("generate", str(path), "--prompt", ",".join(map(str, PROMPT)), "--tokens", str(TOKENS), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["prompt"] == PROMPT and report["tokens"] == want_tokens
    assert report["prefill_ms"] > 0 and report["decode_ms_per_token"] > 0


def test_sampling_is_seeded(sealed, run_kiln):
    _, path, program = sealed
    a = program.generate(PROMPT, 24, temperature=1.5, top_k=50, seed=11)
    assert a == program.generate(PROMPT, 24, temperature=1.5, top_k=50, seed=11)
    assert a != program.generate(PROMPT, 24, temperature=1.5, top_k=50, seed=12)
    done = run_kiln("generate", str(path), "--prompt", ",".join(map(str, PROMPT)), "--tokens", "24",
                    "--temperature", "1.5", "--top-k", "50", "--seed", "11")
    assert done.returncode == 0, done.stderr
    assert [int(t) for t in done.stdout.split()] == a


def test_stopping_and_refusals(sealed, run_kiln):
    _, path, program = sealed
    first = program.generate(PROMPT, 8)
    assert program.generate(PROMPT, 8, stop=first[2]) == first[:first.index(first[2]) + 1]
    seen = []
    assert program.generate(PROMPT, 8, on_token=lambda i, t: seen.append(t) or i < 3) == first[:4]
    assert seen == first[:4]
    with pytest.raises(ZeroDivisionError):
        program.generate(PROMPT, 8, on_token=lambda i, t: 1 / 0)
    with pytest.raises(kiln.ContractError, match="seq") as caught:
        program.generate(list(range(600)), 4)  # prefill takes 512 at most
    assert caught.value.tokens == []
    with pytest.raises(kiln.ArgumentError, match="no input 'tokens'"):
        program.generate(PROMPT, 4, ids="tokens")
    for args, message in [(["--tokens", "0"], "--tokens takes at least 1"),
                          (["--temperature", "-1"], "--temperature takes a number >= 0"),
                          (["--prompt", "1,,2"], "--prompt takes token ids"),
                          (["--decode", "step"], "step")]:
        done = run_kiln("generate", str(path), *(["--prompt", "1,2"] if "--prompt" not in args else []), *args)
        assert done.returncode != 0 and message in done.stderr, done.stderr


def test_the_context_bound_is_refused_with_the_dims_named(sealed):
    _, _, program = sealed
    state = program.new_state()
    prefill, decode = program.session(state=state), program.decode.session(state=state)
    prefill.run(ids=numpy.array([PROMPT], dtype=numpy.int64))
    for name in program.state_names:
        state.set_length(name, model.CONTEXT - 1)
    decode.run(ids=numpy.array([[1]], dtype=numpy.int64), position=numpy.array([model.CONTEXT - 1], numpy.int64))
    with pytest.raises(kiln.ContractError, match="past.*2048|2048.*past"):
        decode.run(ids=numpy.array([[1]], dtype=numpy.int64), position=numpy.array([model.CONTEXT], numpy.int64))
    assert state.length(program.state_names[0]) == model.CONTEXT


def test_the_generation_case_replays(sealed, run_kiln):
    decoder, path, program = sealed
    tokens, _ = eager_greedy(decoder, PROMPT, CASE_TOKENS)
    [case] = program.generation
    assert case == {"name": "eager", "prefill_method": "prefill", "decode_method": "decode", "prompt": PROMPT,
                    "tokens": tokens, "margin": 1e-4}
    assert program.replay_generation() == [("eager", {"passed": True, "matched": CASE_TOKENS})]
    assert kiln.verify(path)["generation"] == [("eager", {"passed": True, "matched": CASE_TOKENS})]
    done = run_kiln("verify", str(path), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    [replayed] = json.loads(done.stdout)["generation"]
    assert replayed["passed"] and replayed["matched"] == CASE_TOKENS and replayed["tokens"] == CASE_TOKENS
    done = run_kiln("verify", str(path))
    assert "generation 1 case, 0 failed" in done.stdout


def test_tokens_the_model_does_not_make_are_refused(sealed):
    decoder, _, _ = sealed
    tokens, rows = eager_greedy(decoder, PROMPT, 12)
    wrong = list(tokens)
    wrong[5] = int(numpy.argsort(rows[5])[-3])  # the third largest logit, not the largest
    with pytest.raises(kiln.EvidenceError, match="generation case 'wrong' fails on this runtime: token 5 of 12") as caught:
        model.export_methods(kiln, decoder, max_prompt=16, generation=[{"name": "wrong", "prompt": PROMPT,
                                                                          "tokens": wrong}])
    assert caught.value.results["expected"] == wrong[5] and caught.value.results["chosen"] == tokens[5]
    with pytest.raises(kiln.ArgumentError, match="generation\\[0\\] must be a dict"):
        model.export_methods(kiln, decoder, max_prompt=16, generation=[{"prompt": PROMPT}])
