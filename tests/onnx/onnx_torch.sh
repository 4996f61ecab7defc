#!/bin/sh
# onnx_torch.sh — kiln onnx-test over the PyTorch exports of tests/onnx-torch
# (written by tests/onnx-torch/export.py: dynamic batch, and sequence length
# for the encoder and the issue #17 cases). Every case must pass at every data set: a skip (an op or
# a symbolic shape the importer no longer takes) fails the test too.
# Exit 77 (skipped) when this kiln has no ONNX importer.
#
# Usage: onnx_torch.sh KILN_BINARY CASES_DIR
set -u
kiln=$1
cases=$2
if ! "$kiln" onnx-test --help >/dev/null 2>&1; then
    echo "kiln was built without the ONNX importer; skipping"
    exit 77
fi
status=0
check() {
    out=$("$kiln" onnx-test "$@" 2>&1)
    echo "$out"
    echo "$out" | tail -n 1 | grep -q ' 0 failed, 0 skipped$' || status=1
}
check "$cases/mlp" "$cases/cnn" --dim batch=1..64
check "$cases/encoder" --dim batch=1..64 --dim seq=1..128
# Issue #17: the dynamic-axis patterns of real exports, one case each.
check "$cases/slice_flip" "$cases/dropout_mask" --dim batch=1..4 --dim seq=1..16
check "$cases/unet" --dim batch=1..2 --dim h=16..32:8 --dim w=16..32:8
check "$cases/channel_shuffle" --dim batch=1..3 --dim h=1..12 --dim w=1..12
check "$cases/class_token" --dim batch=1..4 --dim seq=1..8
check "$cases/segmentation_head" --dim batch=1..2 --dim h=1..16 --dim w=1..16
check "$cases/causal_mask" "$cases/recurrent_state" --dim batch=1..4 --dim seq=1..16
# Without multiple_of the UNet is refused (h = 20 breaks a skip connection),
# and import-onnx names the --dim flags under which it imports.
hint=$("$kiln" import-onnx "$cases/unet/model.onnx" -o /dev/null --dim batch=1..2 --dim h=16..32 --dim w=16..32 2>&1)
echo "$hint"
echo "$hint" | grep -q 'hint: the model imports with --dim h=16..32:8 --dim w=16..32:8' || status=1
exit $status
