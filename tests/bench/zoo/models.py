#!/usr/bin/env python3
"""models.py -- export the model zoo of run.sh (issue #18): real models, random
init with a fixed seed, as ONNX with a dynamic batch (and a dynamic sequence
or time axis where natural), each with one test input at batch 1 and
PyTorch's output on it.

Usage: PYTHON tests/bench/zoo/models.py [--dynamo] OUT_DIR [NAME...]
       (run.sh runs it with $KILN_PYTHON, by default the checkout's .venv/bin/python)

Needs torch (2.13 in requirements.txt) and onnx. The exporter:

- by default torch.onnx.export(..., dynamo=False), the TorchScript exporter
  (deprecated in torch 2.9+, still working in 2.13) at opset 14: the
  exporter of the torch 1.13 exports tests/bench/zoo/RESULTS.md measured,
  and the one whose models kiln imports today. kiln's importer reads
  default-domain opsets 1..17, and torch 2.13's torch.export-based exporter
  writes opset 18 at the least (asked for less, it converts down with
  onnx's version converter, which it warns "may not be successful");
- with --dynamo, torch.onnx.export(..., dynamo=True, opset_version=18),
  once kiln imports opset 18 (checked with torch 2.13: encoder_block,
  gpt_block, lstm_classifier, gru_tagger and unet_small export and ORT runs
  them; audio_cnn does not export, torch.export cannot solve its strided
  `time` axis, and is reported and left out). torch.export specializes an
  axis whose example size is 1 to the constant 1, so the model is traced at
  batch 2 (the test input repeated) with the --dim ranges of the manifest as
  torch.export.Dim bounds; the test input and PyTorch's output stay batch 1.

The torchvision families need torchvision, and are skipped with a note when
it does not import (PyPI's torchvision wheels do not import beside the CPU
torch of requirements.txt). Writes, for each model NAME:
  OUT_DIR/NAME/model.onnx     the exported model
  OUT_DIR/NAME/<input>.npy    the test input(s), batch 1
  OUT_DIR/NAME/expected.npy   PyTorch's output on them (the model's one output, "y")
and OUT_DIR/manifest.txt, one line a model:
  NAME|import-onnx --dim options|input names, space-separated|description
A model whose export fails is reported on stderr and left out of the manifest.
"""
import math
import os
import re
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torchvision
    TORCHVISION_MISSING = None
except Exception as error:  # ImportError, or a wheel built for another torch (RuntimeError, ...)
    torchvision = None
    TORCHVISION_MISSING = "%s: %s" % (type(error).__name__, str(error).splitlines()[0] if str(error) else "")

OPSET = 14          # the TorchScript exporter's (the default)
DYNAMO_OPSET = 18   # the torch.export-based exporter's lowest
SEED = 18


# ---------------------------------------------------------------- hand-written

class EncoderBlock(nn.Module):
    """Post-norm transformer encoder layer (BERT-style), d128 h4 ff512, written
    out so that the export does not depend on PyTorch's fused fast path."""

    def __init__(self, d=128, heads=4, ff=512):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        h = self.heads
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // h), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.proj(y))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class MiniGPT(nn.Module):
    """GPT-2 style: token + position embeddings, one pre-norm decoder block with
    a causal mask (a buffer sliced to the sequence, as nanoGPT does), tied-free
    LM head. vocab 512, d128 h4, context 64."""

    def __init__(self, vocab=512, d=128, heads=4, ctx=64):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

    def forward(self, tokens):
        b, t = tokens.shape
        positions = torch.arange(0, t, dtype=torch.long, device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)
        d = x.shape[2]
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, h, d // h).transpose(1, 2)
        k = k.view(b, t, h, d // h).transpose(1, 2)
        v = v.view(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc(self.ln2(x))))
        return self.head(self.lnf(x))


class LSTMClassifier(nn.Module):
    """Text classifier: embedding 1000x64, 2-layer LSTM 128, linear on the
    last step's output."""

    def __init__(self, vocab=1000, emb=64, hidden=128, classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens):
        out, _ = self.lstm(self.emb(tokens))
        return self.fc(out[:, -1, :])


class GRUTagger(nn.Module):
    """Bidirectional GRU over 40 features a frame (speech-like), a linear
    layer per frame."""

    def __init__(self, features=40, hidden=64, classes=10):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.fc(out)


class AudioCNN(nn.Module):
    """1-D CNN over raw audio (M5-like): strided conv, BN, ReLU, max pools,
    global average, linear."""

    def __init__(self, classes=12):
        super().__init__()
        layers = []
        channels = [1, 32, 32, 64, 64]
        for i in range(4):
            k, s = (80, 4) if i == 0 else (3, 1)
            layers += [nn.Conv1d(channels[i], channels[i + 1], k, stride=s, padding=k // 2),
                       nn.BatchNorm1d(channels[i + 1]), nn.ReLU(), nn.MaxPool1d(4)]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.features(x)
        return self.fc(x.mean(dim=2))


class SmallUNet(nn.Module):
    """UNet, 3 levels (16-32-64 channels, bottleneck 128), bilinear x2
    upsampling and skip concatenation, 1x1 head to 2 classes."""

    def __init__(self, cin=3, classes=2, base=16):
        super().__init__()

        def block(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(inplace=True),
                                 nn.Conv2d(b, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(inplace=True))

        self.d1, self.d2, self.d3 = block(cin, base), block(base, 2 * base), block(2 * base, 4 * base)
        self.mid = block(4 * base, 8 * base)
        self.u3, self.u2, self.u1 = block(12 * base, 4 * base), block(6 * base, 2 * base), block(3 * base, base)
        self.head = nn.Conv2d(base, classes, 1)

    def forward(self, x):
        up = lambda t: F.interpolate(t, scale_factor=2.0, mode="bilinear", align_corners=False)
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.d3(F.max_pool2d(b, 2))
        m = self.mid(F.max_pool2d(c, 2))
        c = self.u3(torch.cat([up(m), c], 1))
        b = self.u2(torch.cat([up(c), b], 1))
        a = self.u1(torch.cat([up(b), a], 1))
        return self.head(a)


class OutOnly(nn.Module):
    """torchvision's segmentation models return a dict; keep its 'out'."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


# ---------------------------------------------------------------- the zoo

def tv(name, **kw):
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def image(size):
    return lambda: {"x": torch.randn(1, 3, size, size)}


B = {"x": {0: "batch"}, "y": {0: "batch"}}
B1 = "--dim batch=1..8"

# name, builder, inputs, dynamic axes, import dims, description, needs torchvision
ZOO = [
    ("resnet18", tv("resnet18"), image(112), B, B1, "torchvision ResNet-18, 3x112x112", True),
    ("mobilenet_v2", tv("mobilenet_v2"), image(112), B, B1, "torchvision MobileNetV2, 3x112x112", True),
    ("mobilenet_v3_small", tv("mobilenet_v3_small"), image(112), B, B1, "torchvision MobileNetV3-S, 3x112x112", True),
    ("squeezenet1_1", tv("squeezenet1_1"), image(112), B, B1, "torchvision SqueezeNet 1.1, 3x112x112", True),
    ("shufflenet_v2_x0_5", tv("shufflenet_v2_x0_5"), image(112), B, B1, "torchvision ShuffleNetV2 0.5, 3x112x112", True),
    ("efficientnet_b0", tv("efficientnet_b0"), image(112), B, B1, "torchvision EfficientNet-B0, 3x112x112", True),
    ("densenet121", tv("densenet121"), image(96), B, B1, "torchvision DenseNet-121, 3x96x96", True),
    ("regnet_y_400mf", tv("regnet_y_400mf"), image(112), B, B1, "torchvision RegNetY-400MF, 3x112x112", True),
    ("mnasnet0_5", tv("mnasnet0_5"), image(112), B, B1, "torchvision MNASNet 0.5, 3x112x112", True),
    ("googlenet", tv("googlenet", aux_logits=False, init_weights=True), image(112), B, B1,
     "torchvision GoogLeNet, 3x112x112", True),
    ("alexnet", tv("alexnet"), image(224), B, B1, "torchvision AlexNet, 3x224x224", True),
    ("lraspp_mobilenet_v3_large",
     lambda: OutOnly(torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)),
     image(128), B, B1, "torchvision LR-ASPP MobileNetV3-L, 3x128x128", True),
    ("fcn_resnet50",
     lambda: OutOnly(torchvision.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None)),
     image(64), B, B1, "torchvision FCN ResNet-50, 3x64x64", True),
    ("r3d_18", lambda: torchvision.models.video.r3d_18(weights=None),
     lambda: {"x": torch.randn(1, 3, 4, 32, 32)}, B, B1, "torchvision R3D-18, 3x4x32x32 clip", True),
    ("encoder_block", EncoderBlock, lambda: {"x": torch.randn(1, 32, 128)},
     {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, "--dim batch=1..8 --dim seq=1..64",
     "encoder block d128 h4 ff512, seq 32", False),
    ("gpt_block", MiniGPT, lambda: {"tokens": torch.randint(0, 512, (1, 32))},
     {"tokens": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, "--dim batch=1..8 --dim seq=1..64",
     "GPT block (causal) d128 h4 vocab 512, seq 32", False),
    ("lstm_classifier", LSTMClassifier, lambda: {"tokens": torch.randint(0, 1000, (1, 32))},
     {"tokens": {0: "batch", 1: "seq"}, "y": {0: "batch"}}, "--dim batch=1..8 --dim seq=1..64",
     "embedding + 2-layer LSTM 128, seq 32", False),
    ("gru_tagger", GRUTagger, lambda: {"x": torch.randn(1, 50, 40)},
     {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, "--dim batch=1..8 --dim seq=1..128",
     "bidirectional GRU 64, 50 frames x 40", False),
    ("audio_cnn", AudioCNN, lambda: {"x": torch.randn(1, 1, 8000)},
     {"x": {0: "batch", 2: "time"}, "y": {0: "batch"}}, "--dim batch=1..8 --dim time=4000..16000",
     "1-D audio CNN (M5-like), 8000 samples", False),
    ("unet_small", SmallUNet, image(64), B, B1, "small UNet 16-128, bilinear up, 3x64x64", False),
]


def export_dims(axes, dims):
    """dynamic_shapes for torch.export: each named axis as a torch.export.Dim bounded by its --dim range."""
    ranges = {name: (int(low), int(high)) for name, low, high in re.findall(r"--dim (\w+)=(\d+)\.\.(\d+)", dims)}
    bound = {name: torch.export.Dim(name, min=low, max=high) for name, (low, high) in ranges.items()}
    return {name: {axis: bound[dim] for axis, dim in named.items()} for name, named in axes.items() if name != "y"}


def export(out, name, build, make_inputs, axes, dims, description, dynamo=False):
    torch.manual_seed(SEED)
    model = build().eval()
    inputs = make_inputs()
    names = list(inputs)
    args = tuple(inputs[n] for n in names)
    with torch.no_grad():
        expected = model(*args)
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "model.onnx")
    if dynamo:
        traced = tuple(torch.cat([a, a], 0) for a in args)  # batch 2: a size-1 example axis would be specialized
        torch.onnx.export(model, traced, path, dynamo=True, opset_version=DYNAMO_OPSET, input_names=names,
                          output_names=["y"], dynamic_shapes=export_dims(axes, dims), external_data=False,
                          verbose=False)
    else:
        torch.onnx.export(model, args, path, dynamo=False, opset_version=OPSET, input_names=names,
                          output_names=["y"], dynamic_axes=axes, do_constant_folding=True)
    for n in names:
        np.save(os.path.join(directory, n + ".npy"), inputs[n].numpy())
    np.save(os.path.join(directory, "expected.npy"), expected.numpy())
    return "|".join([name, dims, " ".join(names), description])


def first_line(error):
    """The line of an export error that says what went wrong: torch.export's 'Exception summary', else the first."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(error).splitlines()]
    lines = [line for line in lines if line]
    if "## Exception summary" in lines[:-1]:  # "<class 'X'>: message", the message often on the lines after
        start = lines.index("## Exception summary") + 1
        return " ".join(lines[start:start + 3])
    return lines[0] if lines else ""


def main():
    argv = sys.argv[1:]
    dynamo = "--dynamo" in argv
    argv = [a for a in argv if a != "--dynamo"]
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: models.py [--dynamo] OUT_DIR [NAME...]")
    out, only = argv[0], set(argv[1:])
    os.makedirs(out, exist_ok=True)
    lines = []
    for name, build, make_inputs, axes, dims, description, needs_tv in ZOO:
        if only and name not in only:
            continue
        if needs_tv and torchvision is None:
            print(f"models.py: {name}: skipped, torchvision does not import ({TORCHVISION_MISSING})", file=sys.stderr)
            continue
        start = time.time()
        try:
            lines.append(export(out, name, build, make_inputs, axes, dims, description, dynamo))
            print(f"models.py: {name}: exported in {time.time() - start:.1f} s", file=sys.stderr)
        except Exception as error:  # report and go on: the zoo is broad on purpose
            print(f"models.py: {name}: export failed: {type(error).__name__}: {first_line(error)}", file=sys.stderr)
    with open(os.path.join(out, "manifest.txt"), "w") as manifest:
        manifest.write("\n".join(lines) + ("\n" if lines else ""))


if __name__ == "__main__":
    main()
