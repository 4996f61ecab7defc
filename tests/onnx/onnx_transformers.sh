#!/bin/sh
# onnx_transformers.sh — Hugging Face transformers models as kiln.export
# exports them (torch.export, then torch.onnx.export with dynamo at opset
# 18), tiny and with random weights: BERT, GPT-2, Llama, T5's encoder,
# ViT, Whisper's encoder, wav2vec 2.0 (tests/onnx-transformers, written by
# tests/bench/transformers/export.py --tiny). Each case imports over the
# ranges of its dims file (torch's symbols: s27 the batch, s11 the
# sequence, ...), matches eager PyTorch on both data sets (one with a
# padded attention mask) and runs at every corner of its domain (kiln probe).
# Exit 77 (skipped) when this kiln has no ONNX importer.
#
# Usage: onnx_transformers.sh KILN_BINARY CASES_DIR
set -u
kiln=$1
cases=$2
if ! "$kiln" onnx-test --help >/dev/null 2>&1; then
    echo "kiln was built without the ONNX importer; skipping"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for case in "$cases"/*/; do
    name=$(basename "$case")
    dims=$(cat "$case/dims")
    # shellcheck disable=SC2086 # the dims file holds several --dim flags
    out=$("$kiln" onnx-test "$case" $dims 2>&1)
    echo "$out"
    echo "$out" | tail -n 1 | grep -qx '1 passed, 0 failed, 0 skipped' || { echo "$name: onnx-test failed"; status=1; }
    # shellcheck disable=SC2086
    if "$kiln" import-onnx "$case/model.onnx" -o "$tmp/$name.kiln" $dims >/dev/null; then
        probe=$("$kiln" probe "$tmp/$name.kiln" 2>&1)
        echo "$name: $(echo "$probe" | tail -n 1)"
        echo "$probe" | tail -n 1 | grep -q ', 0 failed, 0 skipped$' || { echo "$probe"; status=1; }
    else
        echo "$name: import-onnx failed"
        status=1
    fi
done
exit $status
