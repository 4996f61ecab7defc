#!/usr/bin/env python3
"""Export PyTorch models with dynamic axes to ONNX test cases for kiln onnx-test.

Not run by CI: it needs PyTorch and onnx (the checkout's .venv, from
requirements.txt), and torchvision for --large. It writes one case
directory per model, in the ONNX backend-test layout kiln onnx-test reads:

    OUT/NAME/model.onnx
    OUT/NAME/test_data_set_N/input_0.pb, output_0.pb

Each data set is PyTorch's own output for a random input, at a different
batch size (and sequence length for the encoder), so one imported
contract is checked at several points of its domain. Weights are random
(fixed seed); batch-norm statistics are random too, so that the
normalisation is not an identity.

    .venv/bin/python tests/onnx-torch/export.py tests/onnx-torch            # mlp, cnn, encoder, encoder256
    .venv/bin/python tests/onnx-torch/export.py /tmp/onnx-torch --large     # resnet18, mobilenet_v2

The committed cases were written by PyTorch 1.13. PyTorch 2.13's
TorchScript exporter writes the encoder's sequence length into its
attention reshapes as the example's constant, and kiln refuses that model
at import with a counterexample (seq=1); the dynamo exporter (opset 18,
the route of kiln.export) keeps it symbolic.

Then, for example:

    kiln onnx-test tests/onnx-torch/mlp tests/onnx-torch/cnn --dim batch=1..64
    kiln onnx-test tests/onnx-torch/encoder --dim batch=1..64 --dim seq=1..128
"""
import argparse
import copy
import inspect
import os
import shutil

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 14


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 10))

    def forward(self, x):
        return self.net(x)


class Cnn(nn.Module):
    """Conv, batch norm (after the activation, so the exporter does not fold
    it into the convolution), max and average pooling, and x.view(batch, -1):
    a Shape -> Gather -> Unsqueeze -> Concat -> Reshape subgraph."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, stride=2)
        self.bn2 = nn.BatchNorm2d(16)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(self.bn1(torch.relu(self.conv1(x))))
        x = self.bn2(torch.relu(self.conv2(x)))
        x = self.gap(x)
        return self.fc(x.view(x.size(0), -1))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                                batch_first=True)

    def forward(self, x):
        return self.layer(x)


class Encoder256(nn.Module):
    """nn.TransformerEncoderLayer(256, 4, 1024): the size of an ordinary
    encoder block, whose attention scores at batch 64 and sequence length
    2048 need gigabytes (spec/contract.md section 9: sessions at real sizes)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class SliceFlip(nn.Module):
    """Issue #17 pattern 8: x[:, :-1] (Slice to the end -1 of the symbolic
    seq), torch.flip on seq (Slice from -1 to -INT64_MAX, step -1) and
    x[:, ::2] (a whole-axis step 2), with batch and seq dynamic."""

    def forward(self, x):
        return x[:, :-1] * 2.0, torch.flip(x, [1]) + 1.0, x[:, ::2] - 1.0


class DropoutMask(nn.Module):
    """Issue #17 pattern 4: F.dropout(x, 0.0, training=True), as Swin-T's
    attention calls it, exports a Dropout (training_mode, ratio 0) whose
    mask output nothing reads, over the symbolic batch and seq."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return self.linear(F.dropout(x, 0.0, training=True))


class UNet(nn.Module):
    """Issue #17 pattern 6: three 2x downsamplings undone by transposed
    convolutions, each concatenated with its skip connection; h and w
    dynamic. The concatenations hold only when h and w are multiples of 8
    (h = 20 pools to 10, 5, 2 and comes back as 4, 8, 16): imported with
    --dim h=16..32:8 --dim w=16..32:8."""

    def __init__(self):
        super().__init__()
        self.down = nn.ModuleList([nn.Conv2d(c, 2, 3, padding=1) for c in (1, 2, 2)])
        self.bottom = nn.Conv2d(2, 2, 3, padding=1)
        self.up = nn.ModuleList([nn.ConvTranspose2d(2, 2, 2, stride=2) for _ in range(3)])
        self.merge = nn.ModuleList([nn.Conv2d(4, 2, 3, padding=1) for _ in range(3)])
        self.out = nn.Conv2d(2, 1, 1)

    def forward(self, x):
        skips = []
        for conv in self.down:
            x = torch.relu(conv(x))
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = torch.relu(self.bottom(x))
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = torch.relu(merge(torch.cat([up(x), skip], 1)))
        return self.out(x)


class ChannelShuffle(nn.Module):
    """Issue #17 pattern 5: ShuffleNetV2's channel shuffle between grouped
    convolutions, x.view(batch, groups, c // groups, h, w).transpose(1, 2)
    .contiguous().view(batch, -1, h, w), with batch, h and w dynamic."""

    def __init__(self):
        super().__init__()
        self.first = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.second = nn.Conv2d(6, 6, 1, groups=3)

    def forward(self, x):
        x = torch.relu(self.first(x))
        batch, channels, h, w = x.size()
        x = x.view(batch, 3, channels // 3, h, w).transpose(1, 2).contiguous().view(batch, -1, h, w)
        return self.second(x)


class ClassToken(nn.Module):
    """Issue #17 pattern 3: ViT's class token, cls_token.expand(batch, -1,
    -1) concatenated before the tokens. torch 1.13 exports the target
    through Shape, Gather, Unsqueeze, Concat, Reshape, Equal with -1 and
    Where before the Expand; batch and seq dynamic."""

    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.randn(1, 1, 4))
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        tokens = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), self.linear(x)], 1)
        return tokens * 2.0


class SegmentationHead(nn.Module):
    """Issue #17 pattern 2: the head of FCN, DeepLabV3 and LR-ASPP, a
    feature map at a quarter of the input size resized back by
    F.interpolate(y, size=x.shape[-2:], mode="bilinear",
    align_corners=False): the Resize sizes are [batch, classes, h, w],
    computed from the input's; batch, h and w dynamic."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.down2 = nn.Conv2d(4, 2, 3, stride=2, padding=1)

    def forward(self, x):
        size = x.shape[-2:]
        y = self.down2(torch.relu(self.down(x)))
        return F.interpolate(y, size=size, mode="bilinear", align_corners=False)


class CausalMask(nn.Module):
    """Issue #17 pattern 1: a GPT-style causal mask built from the
    sequence length, torch.triu(torch.ones(seq, seq), diagonal=1)
    (ConstantOfShape over [seq, seq], then Trilu), masking the attention
    scores before a softmax; batch and seq dynamic."""

    def forward(self, x):
        seq = x.shape[1]
        mask = torch.triu(torch.ones(seq, seq), diagonal=1)
        scores = x @ x.transpose(1, 2)
        return scores.masked_fill(mask.bool(), float("-inf")).softmax(-1)


class RecurrentState(nn.Module):
    """Issue #17 pattern 1: the zero initial states nn.LSTM and nn.GRU
    export, ConstantOfShape over [layers*directions, batch, hidden]; a
    two-layer LSTM into a bidirectional GRU, batch and seq dynamic."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 3, num_layers=2, batch_first=True)
        self.gru = nn.GRU(3, 2, bidirectional=True, batch_first=True)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        return z


def randomize_batch_norm(model, generator):
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=generator) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=generator) + 0.5)
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=generator) + 0.5)
            m.bias.data.copy_(torch.randn(m.bias.shape, generator=generator) * 0.1)


def write_tensor(path, array):
    with open(path, "wb") as f:
        f.write(onnx.numpy_helper.from_array(np.ascontiguousarray(array)).SerializeToString())


def export_case(out_dir, name, model, example_shapes, dynamic_axes, weight_step=None, output_axes=None):
    """Export `model` at the first shape, then run it at every shape into test_data_set_N.

    With `weight_step`, every parameter is rounded to a multiple of it first:
    the raw floats of a large model then compress well in git, and the
    program stays a real one (PyTorch's outputs are computed after rounding).
    `output_axes` lists the dynamic axes of each output (default: one output
    y with a dynamic batch); a model with several outputs returns a tuple."""
    if output_axes is None:
        output_axes = [{0: "batch"}]
    output_names = ["y"] if len(output_axes) == 1 else ["y%d" % i for i in range(len(output_axes))]
    torch.manual_seed(1234)
    generator = torch.Generator().manual_seed(4321)
    randomize_batch_norm(model, generator)
    if weight_step:
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.round(p / weight_step) * weight_step)
    model.eval()
    case = os.path.join(out_dir, name)
    shutil.rmtree(case, ignore_errors=True)
    os.makedirs(case)
    example = torch.randn(example_shapes[0], generator=generator)
    # Gradients stay enabled (export and reference runs alike): in eval mode
    # without them, nn.TransformerEncoderLayer takes a fused fast path that
    # has no ONNX export.
    # The TorchScript exporter at opset 14, which these cases were made with: PyTorch 2.9 and
    # later default to the dynamo exporter (opset 18, kiln.export's route), so ask for it by name.
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, (example,), os.path.join(case, "model.onnx"), opset_version=OPSET,
                      input_names=["x"], output_names=output_names,
                      dynamic_axes=dict({"x": dynamic_axes}, **dict(zip(output_names, output_axes))),
                      do_constant_folding=True, **legacy)
    onnx.checker.check_model(onnx.load(os.path.join(case, "model.onnx")))
    reference = copy.deepcopy(model).double()
    for n, shape in enumerate(example_shapes):
        x = torch.randn(shape, generator=generator)
        ys = model(x)
        ys = [t.detach() for t in (ys if isinstance(ys, tuple) else (ys,))]
        # How far f32 rounding alone moves the outputs: the scale of
        # tolerance a comparison with another f32 runtime needs.
        exacts = reference(x.double())
        exacts = [t.detach() for t in (exacts if isinstance(exacts, tuple) else (exacts,))]
        for y, exact in zip(ys, exacts):
            if exact.numel():
                print("%s data set %d: max |y| %.3g, PyTorch f32 vs f64: max abs difference %.3g" %
                      (name, n, exact.abs().max().item(), (y.double() - exact).abs().max().item()))
        data = os.path.join(case, "test_data_set_%d" % n)
        os.makedirs(data)
        write_tensor(os.path.join(data, "input_0.pb"), x.numpy())
        for k, y in enumerate(ys):
            write_tensor(os.path.join(data, "output_%d.pb" % k), y.numpy())
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(case) for f in fs)
    print("%s: %d bytes" % (case, size))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--large", action="store_true", help="torchvision resnet18 and mobilenet_v2 instead")
    parser.add_argument("--only", help="comma-separated case names to write (default: all)")
    args = parser.parse_args()
    torch.manual_seed(1234)
    if args.only:
        wanted = set(args.only.split(","))
        write = export_case

        def export_case_if_wanted(out_dir, name, *rest, **options):
            if name in wanted:
                write(out_dir, name, *rest, **options)

        globals()["export_case"] = export_case_if_wanted
    if args.large:
        import torchvision

        batch = {0: "batch"}
        export_case(args.out_dir, "resnet18", torchvision.models.resnet18(), [(1, 3, 224, 224), (2, 3, 224, 224)],
                    batch)
        export_case(args.out_dir, "mobilenet_v2", torchvision.models.mobilenet_v2(),
                    [(1, 3, 224, 224), (3, 3, 224, 224)], batch)
        return
    export_case(args.out_dir, "mlp", Mlp(), [(1, 16), (5, 16), (64, 16)], {0: "batch"})
    export_case(args.out_dir, "cnn", Cnn(), [(2, 3, 16, 16), (1, 3, 16, 16), (7, 3, 16, 16)], {0: "batch"})
    export_case(args.out_dir, "encoder", Encoder(), [(2, 5, 32), (1, 1, 32), (3, 17, 32), (4, 128, 32)],
                {0: "batch", 1: "seq"})
    export_case(args.out_dir, "encoder256", Encoder256(), [(2, 5, 256), (1, 17, 256)], {0: "batch", 1: "seq"},
                weight_step=1.0 / 256)
    # Issue #17: dynamic-axis patterns of real exports, at the bounds of
    # the domains onnx_torch.sh declares and inside them.
    export_case(args.out_dir, "slice_flip", SliceFlip(), [(2, 5, 3), (1, 1, 3), (4, 16, 3), (3, 2, 3)],
                {0: "batch", 1: "seq"},
                output_axes=[{0: "batch", 1: "seq_less_1"}, {0: "batch", 1: "seq"}, {0: "batch", 1: "half_seq"}])
    export_case(args.out_dir, "unet", UNet(), [(2, 1, 16, 24), (1, 1, 16, 16), (2, 1, 32, 32), (1, 1, 24, 16)],
                {0: "batch", 2: "h", 3: "w"}, output_axes=[{0: "batch", 2: "h", 3: "w"}])
    export_case(args.out_dir, "channel_shuffle", ChannelShuffle(),
                [(2, 4, 5, 6), (1, 4, 1, 1), (3, 4, 12, 12), (2, 4, 7, 3)], {0: "batch", 2: "h", 3: "w"},
                output_axes=[{0: "batch", 2: "h", 3: "w"}])
    export_case(args.out_dir, "dropout_mask", DropoutMask(), [(2, 5, 8), (1, 1, 8), (4, 16, 8), (3, 7, 8)],
                {0: "batch", 1: "seq"}, output_axes=[{0: "batch", 1: "seq"}])
    export_case(args.out_dir, "class_token", ClassToken(), [(2, 5, 4), (1, 1, 4), (4, 8, 4), (3, 3, 4)],
                {0: "batch", 1: "seq"}, output_axes=[{0: "batch", 1: "seq_plus_1"}])
    export_case(args.out_dir, "segmentation_head", SegmentationHead(),
                [(2, 3, 9, 12), (1, 3, 1, 1), (2, 3, 16, 16), (1, 3, 16, 5)], {0: "batch", 2: "h", 3: "w"},
                output_axes=[{0: "batch", 2: "h", 3: "w"}])
    export_case(args.out_dir, "causal_mask", CausalMask(), [(2, 5, 4), (1, 1, 4), (4, 16, 4), (3, 9, 4)],
                {0: "batch", 1: "seq"}, output_axes=[{0: "batch", 1: "seq", 2: "seq"}])
    export_case(args.out_dir, "recurrent_state", RecurrentState(), [(2, 5, 4), (1, 1, 4), (4, 16, 4), (3, 9, 4)],
                {0: "batch", 1: "seq"}, output_axes=[{0: "batch", 1: "seq"}])


if __name__ == "__main__":
    main()
