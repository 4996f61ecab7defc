#!/usr/bin/env python3
"""Export small Hugging Face transformers models (random weights) to ONNX
the way kiln.export will: torch.export.export, then torch.onnx.export of
the ExportedProgram with dynamo=True at opset 18.

Not run by CI: it needs torch, transformers, onnx and onnxscript (the
Python environment of requirements.txt); nothing is downloaded (every
model is built from a config, HF_HUB_OFFLINE=1). Usable for benchmarks:

    python3 tests/bench/transformers/export.py OUT [--models bert,gpt2,...]

writes, per model:

    OUT/NAME/model.onnx
    OUT/NAME/inputs/INPUT.npy, OUT/NAME/outputs/OUTPUT.npy   (eager PyTorch at the main shape)
    OUT/NAME/inputs_1/..., OUT/NAME/outputs_1/...            (a second point of the dims' domain)
    OUT/NAME/meta.json    {"dims": {"s43": [1, 4], ...}, "inputs": [...], "outputs": [...]}
    OUT/NAME/dims         the --dim flags of those ranges
    OUT/NAME/test_data_set_0/, test_data_set_1/   the same data for kiln onnx-test

With --tiny (hidden 16, one layer, no .npy folders, node metadata dropped) it writes the
regression cases of tests/onnx-transformers (tests/onnx/onnx_transformers.sh):

    python3 tests/bench/transformers/export.py tests/onnx-transformers --tiny

Each model is traced strictly (TorchDynamo) first and, when that fails,
non-strictly (meta.json says which, and why strict failed). The graph's
input and output names are the ONNX ones (torch's dim_param
symbols, s43, s53, ..., name the dynamic sizes; meta.json gives each its
declared range, for kiln import-onnx --dim). check.py imports and runs
them with kiln and compares.
"""
import argparse
import json
import os
import shutil
import sys
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from torch.export import Dim  # noqa: E402
from torch.utils import _pytree as pytree  # noqa: E402

OPSET = 18


class Size:
    """The model sizes: the default ones (Llama: hidden 64, 2 layers, 4 heads, 2 kv heads), or --tiny's
    (hidden 16, 1 layer, 2 heads, 1 kv head: the regression cases of tests/onnx-transformers)."""

    vocab, hidden, layers, heads, kv_heads, ffn = 1000, 64, 2, 4, 2, 128

    @classmethod
    def tiny(cls):
        cls.vocab, cls.hidden, cls.layers, cls.heads, cls.kv_heads, cls.ffn = 64, 16, 1, 2, 1, 32


def token_inputs(batch, seq, mask=True, padded=0):
    """Token ids, and a mask whose last `padded` positions of the first sequence are padding."""
    inputs = {"input_ids": torch.randint(0, Size.vocab, (batch, seq))}
    if mask:
        inputs["attention_mask"] = torch.ones(batch, seq, dtype=torch.int64)
        if padded:
            inputs["attention_mask"][0, -padded:] = 0
    return inputs


def text_model(model):
    """A model of input_ids and attention_mask: batch 1..4, sequence length 1..64."""
    batch, seq = Dim("batch", min=1, max=4), Dim("seq", min=1, max=64)
    return (model, lambda b, s, padded=0: token_inputs(b, s, padded=padded),
            {name: {0: batch, 1: seq} for name in ("input_ids", "attention_mask")})


def bert():
    return text_model(transformers.BertModel(transformers.BertConfig(
        vocab_size=Size.vocab, hidden_size=Size.hidden, num_hidden_layers=Size.layers, num_attention_heads=Size.heads,
        intermediate_size=Size.ffn, max_position_embeddings=128)))


def gpt2():
    return text_model(transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=Size.vocab, n_embd=Size.hidden, n_layer=Size.layers, n_head=Size.heads, n_positions=128,
        use_cache=False, bos_token_id=0, eos_token_id=0)))


def llama():
    return text_model(transformers.LlamaModel(transformers.LlamaConfig(
        vocab_size=Size.vocab, hidden_size=Size.hidden, intermediate_size=Size.ffn, num_hidden_layers=Size.layers,
        num_attention_heads=Size.heads, num_key_value_heads=Size.kv_heads, max_position_embeddings=128,
        use_cache=False)))


def t5():
    return text_model(transformers.T5EncoderModel(transformers.T5Config(
        vocab_size=Size.vocab, d_model=Size.hidden, d_kv=Size.hidden // Size.heads, d_ff=Size.ffn,
        num_layers=Size.layers, num_heads=Size.heads, use_cache=False)))


def vit():
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=Size.hidden,
                                 num_hidden_layers=Size.layers, num_attention_heads=Size.heads,
                                 intermediate_size=Size.ffn)
    return (transformers.ViTModel(cfg, add_pooling_layer=True),
            lambda b, s, padded=0: {"pixel_values": torch.randn(b, 3, 32, 32)},
            {"pixel_values": {0: Dim("batch", min=1, max=4)}})


def whisper_encoder():
    # The encoder takes exactly 2 * max_source_positions frames (it checks): only the batch is dynamic.
    cfg = transformers.WhisperConfig(vocab_size=Size.vocab, num_mel_bins=16, d_model=Size.hidden,
                                     encoder_layers=Size.layers, encoder_attention_heads=Size.heads,
                                     decoder_layers=1, decoder_attention_heads=Size.heads, encoder_ffn_dim=Size.ffn,
                                     decoder_ffn_dim=Size.ffn, max_source_positions=32, max_target_positions=32,
                                     pad_token_id=0, bos_token_id=0, eos_token_id=0, decoder_start_token_id=0)
    return (transformers.WhisperModel(cfg).get_encoder(),
            lambda b, s, padded=0: {"input_features": torch.randn(b, 16, 64)},
            {"input_features": {0: Dim("batch", min=1, max=4)}})


def wav2vec2():
    cfg = transformers.Wav2Vec2Config(vocab_size=32, hidden_size=Size.hidden, num_hidden_layers=Size.layers,
                                      num_attention_heads=Size.heads, intermediate_size=Size.ffn,
                                      conv_dim=(Size.hidden // 2, Size.hidden // 2), conv_stride=(5, 2),
                                      conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                      num_conv_pos_embedding_groups=Size.heads, feat_extract_norm="group",
                                      do_stable_layer_norm=False, apply_spec_augment=False)
    # 40 * s samples (frames (n - 10) / 5 + 1, then (f - 3) / 2 + 1). torch.export guards the
    # sample count to a multiple of 10 (its suggested fix): 10 * tens, tens in 8..160.
    tens = Dim("tens", min=8, max=160)
    return (transformers.Wav2Vec2Model(cfg), lambda b, s, padded=0: {"input_values": torch.randn(b, s * 40)},
            {"input_values": {0: Dim("batch", min=1, max=4), 1: 10 * tens}})


MODELS = {"bert": bert, "gpt2": gpt2, "llama": llama, "t5": t5, "vit": vit, "whisper_encoder": whisper_encoder,
          "wav2vec2": wav2vec2}
# (batch, seq, padded positions of the first sequence's mask) of the data sets (wav2vec2: 40 * seq samples)
SHAPES = [(2, 16, 0), (3, 9, 3)]


def leaves(output):
    return [t for t in pytree.tree_leaves(output) if isinstance(t, torch.Tensor)]


def save_arrays(folder, names, tensors):
    os.makedirs(folder)
    for name, t in zip(names, tensors):
        np.save(os.path.join(folder, name + ".npy"), t.detach().numpy())


def save_data_set(folder, names, tensors, kind):
    """The same values in the ONNX backend-test layout kiln onnx-test reads (input_K.pb, output_K.pb)."""
    os.makedirs(folder, exist_ok=True)
    for k, (name, t) in enumerate(zip(names, tensors)):
        with open(os.path.join(folder, f"{kind}_{k}.pb"), "wb") as f:
            f.write(onnx.numpy_helper.from_array(t.detach().numpy(), name).SerializeToString())


def export_one(name, out_dir, npy=True):
    torch.manual_seed(0)
    model, make_inputs, dynamic_shapes = MODELS[name]()
    model.eval()
    inputs = make_inputs(*SHAPES[0])
    with torch.no_grad():
        # strict (TorchDynamo) tracing first; transformers' models often need non-strict tracing.
        strict_error = None
        try:
            ep = torch.export.export(model, (), inputs, dynamic_shapes=dynamic_shapes, strict=True)
        except Exception as e:  # noqa: BLE001 - any tracing failure: fall back
            strict_error = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}" if str(e) else type(e).__name__
            ep = torch.export.export(model, (), inputs, dynamic_shapes=dynamic_shapes, strict=False)
        program = torch.onnx.export(ep, dynamo=True, opset_version=OPSET, verbose=False)
    case = os.path.join(out_dir, name)
    shutil.rmtree(case, ignore_errors=True)
    os.makedirs(case)
    path = os.path.join(case, "model.onnx")
    program.save(path)
    if not npy:
        # The regression copies drop each node's metadata (torch's stack traces and module paths,
        # 90% of the bytes), which the importer does not read; node names stay.
        model_proto = onnx.load(path)
        for node in model_proto.graph.node:
            del node.metadata_props[:]
        onnx.save(model_proto, path)
    graph = onnx.load(path).graph
    input_names = [i.name for i in graph.input]
    output_names = [o.name for o in graph.output]
    # The range of each of torch's symbols (s43, ...) as the ExportedProgram proved it; a dim_param
    # is one of them or an expression over them (10*s12).
    dims = {str(symbol): [int(r.lower), int(r.upper)] for symbol, r in ep.range_constraints.items()
            if getattr(symbol, "is_Symbol", False)}
    for k, shape in enumerate(SHAPES):
        data = inputs if k == 0 else make_inputs(*shape)
        with torch.no_grad():
            expected = leaves(model(**data))
        if len(expected) != len(output_names):
            raise RuntimeError(f"{name}: eager gives {len(expected)} tensors, the graph {len(output_names)} outputs")
        suffix = "" if k == 0 else f"_{k}"
        if npy:
            save_arrays(os.path.join(case, "inputs" + suffix), input_names, [data[n] for n in input_names])
            save_arrays(os.path.join(case, "outputs" + suffix), output_names, expected)
        save_data_set(os.path.join(case, f"test_data_set_{k}"), input_names, [data[n] for n in input_names], "input")
        save_data_set(os.path.join(case, f"test_data_set_{k}"), output_names, expected, "output")
    with open(os.path.join(case, "meta.json"), "w") as f:
        json.dump({"model": name, "transformers": transformers.__version__, "torch": torch.__version__,
                   "opset": OPSET, "size": "tiny" if Size.hidden == 16 else "default", "strict": strict_error is None,
                   "strict_error": strict_error, "dims": dims, "inputs": input_names, "outputs": output_names,
                   "data_sets": len(SHAPES)}, f, indent=1)
    # The --dim flags of kiln import-onnx and onnx-test, for shell scripts.
    with open(os.path.join(case, "dims"), "w") as f:
        f.write(" ".join(f"--dim {symbol}={lo}..{hi}" for symbol, (lo, hi) in sorted(dims.items())) + "\n")
    return case


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the directory to write one folder per model into")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated, of: " + ", ".join(MODELS))
    parser.add_argument("--tiny", action="store_true",
                        help="hidden 16, 1 layer, and no .npy folders: the regression cases of tests/onnx-transformers")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.tiny:
        Size.tiny()
    failed = 0
    for name in args.models.split(","):
        try:
            print(f"{name}: {export_one(name, args.out, npy=not args.tiny)}", flush=True)
        except Exception as e:  # noqa: BLE001 - report every model, then fail
            failed += 1
            print(f"{name}: export failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
