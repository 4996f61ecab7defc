#!/bin/sh
# onnx_opset18.sh — kiln onnx-test over the opset-18 node cases of the ops
# ONNX changed or added at opset 18 (tests/onnx-opset18/generate.py writes
# them from onnx 1.23's own backend generators). Every case passes or is
# skipped for one of the reasons below (spec/onnx-import.md §4); a case
# that fails, a skip for any other reason, or a different count fails.
# Exit 77 (skipped) when this kiln has no ONNX importer.
#
# Usage: onnx_opset18.sh KILN_BINARY CASES_DIR
set -u
kiln=$1
cases=$2
if ! "$kiln" onnx-test --help >/dev/null 2>&1; then
    echo "kiln was built without the ONNX importer; skipping"
    exit 77
fi
out=$("$kiln" onnx-test "$cases"/*/ 2>&1)
echo "$out"
status=0
expected='185 passed, 0 failed, 47 skipped'
echo "$out" | tail -n 1 | grep -qx "$expected" || { echo "expected: $expected"; status=1; }
# The reasons a case may be skipped for, and how many cases each covers.
unexpected=$(echo "$out" | grep '^skip ' |
    grep -v -e 'is not a tensor (sequences, maps and optionals are not supported)' \
        -e 'is not a positive ratio p/q' \
        -e "(Pad): input 1 ('CenterCropPad_.*must be a constant" \
        -e 'coordinate_transformation_mode tf_crop_and_resize (a region of interest) is not supported' \
        -e 'unsupported op Optional[A-Za-z]* (opset 18): optional values are not supported' \
        -e 'unsupported op Bitwise[A-Za-z]* (opset 18): kiln has no bitwise integer ops' \
        -e "antialias = 1 downscales axis 2 .*: kiln's resize has no antialiasing filter" \
        -e "keep_aspect_ratio_policy not_smaller: axis 2 of size 2 scaled by 3/4 is 2 in ONNX")
if [ -n "$unexpected" ]; then
    echo "skipped for a reason this test does not expect:"
    echo "$unexpected"
    status=1
fi
exit $status
