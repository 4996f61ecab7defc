"""kiln.export_methods: several PyTorch programs sealed as the methods of one artifact (format
1.3) — a tiny attention decoder's prefill (the prompt, no cache) and decode (one token, the cache
passed in and out) over one set of weights, stored once, each method with its own dims and
evidence, each matching eager PyTorch; and the refusals of bad method specs."""
import pytest

from conftest import numpy, torch

import kiln

Dim = pytest.importorskip("torch.export").Dim

D, VOCAB = 16, 32


class TinyDecoder(torch.nn.Module):
    """Embedding, one attention head over the tokens so far, and logits; prefill returns the keys and
    values it made, decode appends one token's to the cache it is given."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(VOCAB, D)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.out = torch.nn.Linear(D, VOCAB)

    def attend(self, x, past_k, past_v):
        q, k, v = self.qkv(x).split(D, dim=-1)
        k = torch.cat([past_k, k], dim=1)
        v = torch.cat([past_v, v], dim=1)
        scores = q @ k.transpose(1, 2) / D ** 0.5
        return self.out(torch.softmax(scores, dim=-1) @ v), k, v


class Prefill(torch.nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, ids):
        x = self.decoder.embed(ids)
        empty = x[:, :0, :]
        return self.decoder.attend(x, empty, empty)


class Decode(torch.nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, ids, past_k, past_v):
        return self.decoder.attend(self.decoder.embed(ids), past_k, past_v)


@pytest.fixture(scope="module")
def sealed():
    decoder = TinyDecoder()
    seq, past = Dim("seq", min=1, max=8), Dim("past", min=1, max=15)
    ids = torch.tensor([[3, 1, 4, 1]])
    cache = torch.zeros(1, 4, D)
    artifact = kiln.export_methods({
        "prefill": {"program": Prefill(decoder), "args": (ids,), "dynamic_shapes": {"ids": {1: seq}},
                    "output_names": ["logits", "k", "v"]},
        "decode": {"program": Decode(decoder), "args": (ids[:, :1], cache, cache),
                   "dynamic_shapes": {"ids": None, "past_k": {1: past}, "past_v": {1: past}},
                   "output_names": ["logits", "k", "v"]},
    }, name="tiny")
    return decoder, artifact, artifact.load()


def test_the_methods_share_one_set_of_weights(sealed):
    decoder, artifact, program = sealed
    assert list(program.methods) == ["prefill", "decode"]
    assert program.name == "tiny"
    assert [d.name for d in program.dims] == ["seq"]
    assert [d.name for d in program.decode.dims] == ["past"]
    weights = sum(p.numel() * 4 for p in decoder.parameters())
    # Each parameter once (beside a few small constants of the graphs), not once per method.
    table = program.inspect()["weights"]
    names = [w["name"] for w in table["tensors"]]
    assert len(names) == len(set(names))
    assert weights <= table["bytes"] < weights + 1024
    assert {case["method"] for case in artifact.evidence} == {"prefill", "decode"}
    assert all(r["passed"] for case in artifact.evidence if case["results"] for r in case["results"])


def test_a_greedy_loop_over_prefill_and_decode_matches_eager(sealed):
    decoder, _, program = sealed
    ids = numpy.array([[5, 9, 2]], dtype=numpy.int64)
    logits, k, v = program.prefill(ids)
    with torch.no_grad():
        want, want_k, want_v = Prefill(decoder)(torch.from_numpy(ids))
    numpy.testing.assert_allclose(logits, want.numpy(), rtol=1e-5, atol=1e-5)
    tokens, eager_tokens = [], []
    token = int(logits[0, -1].argmax())
    eager_token = int(want[0, -1].argmax())
    for _ in range(6):
        tokens.append(token)
        eager_tokens.append(eager_token)
        logits, k, v = program.decode(numpy.array([[token]], dtype=numpy.int64), k, v)
        with torch.no_grad():
            want, want_k, want_v = Decode(decoder)(torch.tensor([[eager_token]]), want_k, want_v)
        numpy.testing.assert_allclose(logits, want.numpy(), rtol=1e-5, atol=1e-5)
        token, eager_token = int(logits[0, -1].argmax()), int(want[0, -1].argmax())
    assert tokens == eager_tokens
    assert k.shape == (1, 3 + 6, D)
    # The cache is bounded by the declared dim: past 15 is the last the decode method takes.
    with pytest.raises(kiln.ContractError, match="past"):
        program.decode(numpy.array([[1]], dtype=numpy.int64), numpy.zeros((1, 16, D), numpy.float32),
                       numpy.zeros((1, 16, D), numpy.float32))


def test_bad_method_specs_are_refused():
    with pytest.raises(kiln.ArgumentError, match="non-empty dict"):
        kiln.export_methods({})
    with pytest.raises(kiln.ArgumentError, match="must be a dict with a 'program'"):
        kiln.export_methods({"prefill": Prefill(TinyDecoder())})
    with pytest.raises(kiln.ArgumentError, match="unknown keys dims"):
        kiln.export_methods({"prefill": {"program": Prefill(TinyDecoder()), "dims": {}}})
    ids = torch.tensor([[3, 1]])
    with pytest.raises(kiln.ArgumentError, match="not an identifier"):
        kiln.export_methods({"prefill": {"program": Prefill(TinyDecoder()), "args": (ids,), "evidence": None},
                             "de code": {"program": Prefill(TinyDecoder()), "args": (ids,), "evidence": None}})
