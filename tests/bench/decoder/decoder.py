"""A GPT-style decoder written in PyTorch with its key/value cache explicit, and its prefill and
decode steps: what tests/bench/decoder measures (bench.py) and tests/python checks.

The model: token and position embeddings, LAYERS pre-norm blocks (causal multi-head attention,
a GELU MLP), a final norm and logits tied to the token embedding (GPT-2's layout), random
weights. Prefill takes `ids` [1, seq] and returns the logits and each layer's keys and values
[1, heads, seq, head_dim]; decode takes one token, its position and every layer's cache
[1, heads, past, head_dim] and returns the logits and the caches one longer.
"""
import torch

VOCAB, D, HEADS, LAYERS, CONTEXT = 1024, 256, 4, 4, 2048
HEAD = D // HEADS


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.norm2 = torch.nn.LayerNorm(D)
        self.up = torch.nn.Linear(D, 4 * D)
        self.down = torch.nn.Linear(4 * D, D)

    def forward(self, x, past_k, past_v, causal):
        seq = x.shape[1]
        q, k, v = self.qkv(self.norm1(x)).split(D, dim=-1)
        q = q.reshape(1, seq, HEADS, HEAD).transpose(1, 2)
        k = torch.cat([past_k, k.reshape(1, seq, HEADS, HEAD).transpose(1, 2)], dim=2)
        v = torch.cat([past_v, v.reshape(1, seq, HEADS, HEAD).transpose(1, 2)], dim=2)
        scores = q @ k.transpose(2, 3) * HEAD ** -0.5
        if causal:
            total = k.shape[2]
            mask = torch.ones(seq, total, dtype=torch.bool).tril(total - seq)
            scores = scores.masked_fill(~mask, float("-inf"))
        attended = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(1, seq, D)
        x = x + self.proj(attended)
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x)))), k, v


class Decoder(torch.nn.Module):
    def __init__(self, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.tokens = torch.nn.Embedding(VOCAB, D)
        self.positions = torch.nn.Embedding(CONTEXT, D)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = torch.nn.LayerNorm(D)

    def run(self, ids, start, caches, causal):
        seq = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(seq) + start)
        out = []
        for block, (k, v) in zip(self.blocks, caches):
            x, k, v = block(x, k, v, causal)
            out += [k, v]
        return (self.norm(x) @ self.tokens.weight.T, *out)


class Prefill(torch.nn.Module):
    """ids [1, seq] -> logits [1, seq, VOCAB], then k0, v0, k1, ... [1, HEADS, seq, HEAD]."""

    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, ids):
        empty = torch.zeros(1, HEADS, 0, HEAD)
        return self.decoder.run(ids, 0, [(empty, empty)] * LAYERS, causal=True)


class Decode(torch.nn.Module):
    """One token: ids [1, 1], position [1] (= past), the caches [1, HEADS, past, HEAD] -> logits
    [1, 1, VOCAB] and the caches one longer."""

    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    # Named parameters (not *caches): torch.export's dynamic_shapes name each cache input.
    def forward(self, ids, position, k0, v0, k1, v1, k2, v2, k3, v3):
        caches = (k0, v0, k1, v1, k2, v2, k3, v3)
        pairs = [(caches[2 * i], caches[2 * i + 1]) for i in range(LAYERS)]
        x = self.decoder.tokens(ids) + self.decoder.positions(position)
        out = []
        for block, (k, v) in zip(self.decoder.blocks, pairs):
            x, k, v = block(x, k, v, causal=False)  # one query attends to every key
            out += [k, v]
        return (self.decoder.norm(x) @ self.decoder.tokens.weight.T, *out)


def cache_names(prefix=""):
    """k0, v0, k1, ... (the decode inputs), or with a prefix the outputs (present_k0, ...)."""
    return [f"{prefix}{kind}{i}" for i in range(LAYERS) for kind in ("k", "v")]


def export_methods(kiln, decoder, max_prompt=512, state=True, generation=None):
    """The artifact: prefill (seq 1..max_prompt) and decode (past 1..CONTEXT-1), one set of weights.
    state=True keeps each layer's cache as a kiln state (present_k0, ...) that prefill starts and
    decode extends in place, CONTEXT rows long: decode then takes only ids and position. False:
    the caches are inputs and outputs, as in the graph. generation: kiln.export_methods's
    generation cases (with state only)."""
    from torch.export import Dim
    seq, past = Dim("seq", min=1, max=max_prompt), Dim("past", min=1, max=CONTEXT - 1)
    ids = torch.randint(0, VOCAB, (1, 8))
    caches = [torch.randn(1, HEADS, 8, HEAD) for _ in range(2 * LAYERS)]
    names, present = cache_names(), cache_names("present_")
    prefill = {"program": Prefill(decoder), "args": (ids,), "dynamic_shapes": {"ids": {1: seq}},
               "output_names": ["logits"] + present, "evidence": "example"}
    decode = {"program": Decode(decoder), "args": (ids[:, :1], torch.tensor([8]), *caches),
              "dynamic_shapes": {"ids": None, "position": None, **{n: {2: past} for n in names}},
              "output_names": ["logits"] + present, "evidence": "example"}
    if not state:
        return kiln.export_methods({"prefill": prefill, "decode": decode}, name="decoder")
    prefill["state"] = {p: None for p in present}
    decode["state"] = dict(zip(present, names))
    return kiln.export_methods({"prefill": prefill, "decode": decode}, name="decoder", context=CONTEXT,
                               generation=generation)
