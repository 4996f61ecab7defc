"""ONNX Runtime as an oracle for the ONNX cases of tests/onnx-torch,
tests/onnx-legacy and tests/onnx-transformers.

tests/onnx/onnx_torch.sh and onnx_legacy.sh compare kiln with the outputs
stored beside each case (test_data_set_N/output_K.pb), which only speak for
the stored inputs, at the stored sizes. Here each case is imported with
`kiln import-onnx` (the dims onnx_torch.sh declares), loaded with kiln.load
and run beside onnxruntime (CPU, graph optimisations off, one thread) on

- every stored data set's inputs, and
- for a case with dynamic dims, random inputs at one more size inside the
  declared domain that no data set has (SIZES below): what stored outputs
  cannot check.

Outputs must have ORT's shapes and dtypes and its values within TOLERANCES
(per dtype: |kiln - ort| <= atol + rtol * |ort|, exact for integers and
bool; on the f32 torch cases the largest error measured was 0.03 of that
allowance, encoder256's 7e-7). ONNX Runtime only guarantees opsets >= 7: a
legacy case it refuses at its own opset is upgraded by
onnx.version_converter to opset 7 and ORT runs that, so the oracle of those
cases is ONNX's adapters plus ORT (a failure message says "converted to
opset 7"). A case neither runs (today 24 of the 85 legacy cases: broadcast
with `axis`, which the converter cannot upgrade, and ops it has no adapter
for), and the four cases kiln refuses by design (onnx_legacy.sh checks
their reasons), are skipped with the reason.
"""
import glob
import json
import os
import subprocess

import numpy
import pytest

import kiln
from conftest import SOURCE_ROOT

try:  # any failure, not only a missing module: a wheel built for another platform raises ImportError or OSError
    import onnxruntime as ort
    import onnx
    from onnx import numpy_helper, version_converter
except Exception as missing:
    pytest.skip("no ORT oracle: onnxruntime or onnx is not importable (%s: %s)" % (type(missing).__name__, missing),
                allow_module_level=True)

TORCH_CASES = os.path.join(SOURCE_ROOT, "tests", "onnx-torch")
LEGACY_CASES = os.path.join(SOURCE_ROOT, "tests", "onnx-legacy")

# Each tests/onnx-torch case: the --dim declarations of tests/onnx/onnx_torch.sh
# (encoder256: narrower than encoder_real_sizes.sh's batch 1..64, seq 1..2048,
# whose 8.1 GiB arena a default session refuses), and the input shape of the
# extra run, which no stored data set has (test_sizes_are_new checks that).
SIZES = {
    "mlp": (["batch=1..64"], {"x": (3, 16)}),
    "cnn": (["batch=1..64"], {"x": (4, 3, 16, 16)}),
    "encoder": (["batch=1..64", "seq=1..128"], {"x": (2, 40, 32)}),
    "encoder256": (["batch=1..4", "seq=1..32"], {"x": (3, 9, 256)}),
    "slice_flip": (["batch=1..4", "seq=1..16"], {"x": (3, 11, 3)}),
    "dropout_mask": (["batch=1..4", "seq=1..16"], {"x": (2, 13, 8)}),
    "unet": (["batch=1..2", "h=16..32:8", "w=16..32:8"], {"x": (2, 1, 32, 24)}),
    "channel_shuffle": (["batch=1..3", "h=1..12", "w=1..12"], {"x": (1, 4, 9, 4)}),
    "class_token": (["batch=1..4", "seq=1..8"], {"x": (2, 6, 4)}),
    "segmentation_head": (["batch=1..2", "h=1..16", "w=1..16"], {"x": (2, 3, 11, 7)}),
    "causal_mask": (["batch=1..4", "seq=1..16"], {"x": (2, 12, 4)}),
    "recurrent_state": (["batch=1..4", "seq=1..16"], {"x": (2, 13, 4)}),
}

# Legacy cases kiln refuses on purpose (tests/onnx/onnx_legacy.sh checks each reason).
KILN_REFUSES = {"batch_norm_training_opset6", "dropout_training_opset6", "prelu_opset6", "upsample_opset1"}

# (atol, rtol) per output dtype; None = exact.
TOLERANCES = {
    numpy.dtype("float32"): (1e-5, 1e-4),
    numpy.dtype("float64"): (1e-12, 1e-10),
    numpy.dtype("float16"): (1e-3, 1e-3),
}


def case_dirs(root):
    return sorted(os.path.dirname(path) for path in glob.glob(os.path.join(root, "*", "model.onnx")))


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def data_sets(case):
    """[(name, [input arrays in order])] of the case's stored data sets."""
    sets = []
    for directory in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
        count = len(glob.glob(os.path.join(directory, "input_*.pb")))
        sets.append((os.path.basename(directory),
                     [read_tensor(os.path.join(directory, "input_%d.pb" % k)) for k in range(count)]))
    return sets


def ort_session(model):
    """An ORT CPU session of `model` (a path or bytes): no graph rewrites, one thread, quiet."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def ort_oracle(case):
    """(session, how): ORT on the case's model, else on its upgrade to opset 7; skips when neither loads."""
    path = os.path.join(case, "model.onnx")
    try:
        return ort_session(path), "as is"
    except Exception as refusal:  # ORT raises its own exception types (NotImplemented, InvalidGraph, ...)
        reason = str(refusal).splitlines()[0]
    try:
        upgraded = version_converter.convert_version(onnx.load(path), 7)
        return ort_session(upgraded.SerializeToString()), "converted to opset 7"
    except Exception as refusal:
        pytest.skip("ORT refuses the model (%s) and onnx.version_converter cannot upgrade it to opset 7 (%s)"
                    % (reason, str(refusal).splitlines()[0]))


def import_case(case, dims, out, kiln_binary):
    command = [kiln_binary, "import-onnx", "-q", os.path.join(case, "model.onnx"), "-o", os.fspath(out)]
    for dim in dims:
        command += ["--dim", dim]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, "kiln import-onnx %s: %s" % (case, done.stderr)
    return kiln.load(out, threads=1)


def assert_matches(got, want, what):
    """kiln's outputs `got` ({name: array}, in output order) against ORT's `want` (a list)."""
    assert len(got) == len(want), "%s: kiln has %d outputs, ORT %d" % (what, len(got), len(want))
    for (name, k), o in zip(got.items(), want):
        o = numpy.asarray(o)
        label = "%s: output %s" % (what, name)
        assert k.shape == o.shape, "%s: kiln shape %s, ORT %s" % (label, k.shape, o.shape)
        assert k.dtype == o.dtype, "%s: kiln dtype %s, ORT %s" % (label, k.dtype, o.dtype)
        tolerance = TOLERANCES.get(o.dtype)
        if tolerance is None:
            mismatched = numpy.flatnonzero(k.reshape(-1) != o.reshape(-1))
            assert mismatched.size == 0, "%s: %d of %d values differ (first at flat index %d: kiln %s, ORT %s)" % (
                label, mismatched.size, o.size, mismatched[0], k.reshape(-1)[mismatched[0]].item(),
                o.reshape(-1)[mismatched[0]].item())
            continue
        atol, rtol = tolerance
        k64, o64 = k.astype(numpy.float64), o.astype(numpy.float64)
        assert numpy.array_equal(numpy.isnan(k64), numpy.isnan(o64)), "%s: NaNs in different places" % label
        error = numpy.abs(numpy.where(numpy.isnan(o64), 0.0, k64 - o64))
        error = numpy.where(numpy.isinf(o64) & (k64 == o64), 0.0, error)
        allowed = atol + rtol * numpy.abs(numpy.where(numpy.isfinite(o64), o64, 0.0))
        worst = int(numpy.argmax(error - allowed)) if error.size else 0
        assert error.size == 0 or numpy.all(error <= allowed), (
            "%s: |kiln - ORT| %.3g at flat index %d (kiln %.9g, ORT %.9g) exceeds %g + %g * |ORT| (%s)"
            % (label, error.reshape(-1)[worst], worst, k64.reshape(-1)[worst], o64.reshape(-1)[worst],
               atol, rtol, o.dtype))


def run_both(program, session, inputs, what):
    feeds = {i.name: value for i, value in zip(session.get_inputs(), inputs)}
    assert len(feeds) == len(inputs), "%s: ORT wants %d inputs, the data set has %d" % (
        what, len(session.get_inputs()), len(inputs))
    assert_matches(program.run(*inputs), session.run(None, feeds), what)


@pytest.mark.parametrize("case", case_dirs(TORCH_CASES), ids=os.path.basename)
def test_torch_case_matches_ort(case, tmp_path, kiln_binary):
    name = os.path.basename(case)
    assert name in SIZES, "tests/onnx-torch/%s has no entry in SIZES: give its dims and a new size" % name
    dims, new_size = SIZES[name]
    program = import_case(case, dims, tmp_path / (name + ".kiln"), kiln_binary)
    session, _ = ort_oracle(case)
    for data_set, inputs in data_sets(case):
        run_both(program, session, inputs, "%s %s" % (name, data_set))
    rng = numpy.random.default_rng(20261206)
    inputs = [rng.standard_normal(new_size[i.name]).astype(numpy.float32) for i in session.get_inputs()]
    run_both(program, session, inputs, "%s at %s" % (name, ", ".join(map(str, new_size.values()))))


@pytest.mark.parametrize("case", sorted(SIZES))
def test_sizes_are_new(case):
    """The extra size of each case is one no stored data set has (else it would check nothing new)."""
    stored = [tuple(inputs[0].shape) for _, inputs in data_sets(os.path.join(TORCH_CASES, case))]
    assert stored, "tests/onnx-torch/%s has no data set" % case
    (shape,) = SIZES[case][1].values()
    assert tuple(shape) not in stored


@pytest.mark.parametrize("case", case_dirs(LEGACY_CASES), ids=os.path.basename)
def test_legacy_case_matches_ort(case, tmp_path, kiln_binary):
    name = os.path.basename(case)
    if name in KILN_REFUSES:
        pytest.skip("kiln refuses this case by design (tests/onnx/onnx_legacy.sh checks the reason)")
    session, how = ort_oracle(case)
    program = import_case(case, [], tmp_path / (name + ".kiln"), kiln_binary)
    for data_set, inputs in data_sets(case):
        run_both(program, session, inputs, "%s %s (ORT on the model %s)" % (name, data_set, how))


TRANSFORMERS_CASES = os.path.join(SOURCE_ROOT, "tests", "onnx-transformers")


def size_at(dim, point):
    """An ONNX dim (a number, or a dim_param such as 's27' or '10*s3') at `point` {symbol: size}."""
    if isinstance(dim, int):
        return dim
    return int(eval(dim, {"__builtins__": {}}, dict(point)))  # dim_params of our own cases: products and sums


@pytest.mark.parametrize("case", case_dirs(TRANSFORMERS_CASES), ids=os.path.basename)
def test_transformers_case_matches_ort(case, tmp_path, kiln_binary):
    """The transformers cases (torch.export + torch.onnx dynamo, opset 18; tests/bench/transformers)
    on their stored data sets and at the domain's upper corner, which no data set has, with token
    ids inside the vocabulary and the first sequence's mask padded."""
    with open(os.path.join(case, "meta.json")) as f:
        meta = json.load(f)
    name = os.path.basename(case)
    program = import_case(case, ["%s=%d..%d" % (s, lo, hi) for s, (lo, hi) in meta["dims"].items()],
                          tmp_path / (name + ".kiln"), kiln_binary)
    session, _ = ort_oracle(case)
    for data_set, inputs in data_sets(case):
        run_both(program, session, inputs, "%s %s" % (name, data_set))
    point = {symbol: hi for symbol, (lo, hi) in meta["dims"].items()}
    rng = numpy.random.default_rng(20261207)
    inputs = []
    for i in session.get_inputs():
        shape = [size_at(d, point) for d in i.shape]
        if i.name == "attention_mask":
            mask = numpy.ones(shape, numpy.int64)
            mask[0, shape[1] // 2:] = 0
            inputs.append(mask)
        elif i.type == "tensor(int64)":
            inputs.append(rng.integers(0, 64, shape, dtype=numpy.int64))  # --tiny's vocabulary: 64 tokens
        else:
            inputs.append(rng.standard_normal(shape).astype(numpy.float32))
    stored = {tuple(inputs_[0].shape) for _, inputs_ in data_sets(case)}
    assert tuple(inputs[0].shape) not in stored
    run_both(program, session, inputs, "%s at %s" % (name, point))
