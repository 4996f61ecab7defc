#!/usr/bin/env python3
"""Write the ONNX backend node cases of the ops ONNX changed or added at
opset 18, as opset-18 models, for kiln onnx-test (tests/onnx/onnx_opset18.sh).

Not run by CI: it needs onnx (1.23; the cases are its own generators',
onnx.backend.test.case.node) and numpy, and onnxruntime for the cross-check
below (the Python environment of requirements.txt has them):

    python3 tests/onnx-opset18/generate.py tests/onnx-opset18

The layout is the backend-test one kiln onnx-test reads:

    OUT/NAME/model.onnx
    OUT/NAME/test_data_set_0/input_K.pb, output_K.pb

Which cases. An op "changed at 18" is one whose schema at opset 18 has
since_version 18 (onnx.defs): the nine reductions that took axes as an
input, Split, Pad, Resize, ScatterElements, ScatterND, LpPool, Mish, the
new BitwiseAnd/Or/Xor/Not, CenterCropPad, Col2Im, GroupNormalization, and
OptionalGetElement/HasElement. The cases taken:

- every case the generator stamps opset 18 that has a node of such an op
  (the cases of those ops, and function expansions written at opset 18:
  LayerNormalization's, SoftmaxCrossEntropyLoss's, ... over ReduceMean-18);
- a case of such an op (the op its generator tests; an expansion counts
  as its op's) stamped later (onnx writes each case at its op's newest
  version: Resize 19, LpPool and Mish 22, ReduceMax and ReduceMin 20, ...)
  is stamped opset 18 when every op of its graph means the same there:
  between 18 and the case's opset its schemas may differ only in the
  element types they allow (checked below by onnx.checker at opset 18,
  full_check, which refuses a type opset 18 does not allow) or in an
  attribute value the case does not use (Resize-19's
  coordinate_transformation_mode half_pixel_symmetric, Pad-19's mode
  wrap: VALUE_ADDED). Any other difference leaves the case out.

GroupNormalization has no opset-18 case in onnx 1.23 (its cases are
version 21's, whose scale and bias are per channel; version 18's are per
group), so two are written from the generator's own reference helper
(_group_normalization) with each group's scale and bias repeated over its
channels, which is version 18's definition.

onnx 1.23 has Resize antialias cases only for downscaling, which kiln
refuses; two upscaling ones (linear and cubic, where the antialias filter
is the plain one: spec/onnx-import.md section 4) are written with outputs
from onnx's own reference implementation (onnx.reference).

Every case written is also run by onnxruntime at opset 18 and compared
with its expected outputs (rtol 1e-3, atol 1e-5): a case ORT cannot run or
disagrees with is printed, so a wrong restamp shows. The random inputs are
seeded, so a rerun writes the same files; cases over SIZE_LIMIT bytes are
left out (the directory is committed).
"""
import argparse
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnx.defs
import onnx.helper as h
from onnx import numpy_helper

OPSET = 18
IR_VERSION = 8  # the IR version of opset 18 (onnx.helper.VERSION_TABLE)
SIZE_LIMIT = 100 * 1024  # test_mish is 80 KB; test_lppool_3d_default, 750 KB, is left out

# Attribute values a schema later than 18 added: a case using one cannot be restamped.
VALUE_ADDED = {
    ("Resize", 19): ("coordinate_transformation_mode", b"half_pixel_symmetric"),
    ("Pad", 19): ("mode", b"wrap"),
}
# Attributes a schema later than 18 added whose default keeps the older
# meaning on the types opset 18 has: a case that does not set one can be
# restamped (Cast-19's saturate only concerns the float8 types of 19).
ATTRIBUTE_ADDED = {
    ("Cast", 19): "saturate",
    ("CastLike", 19): "saturate",
}


def changed_at_18():
    ops = set()
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in ("", "ai.onnx") and s.since_version == OPSET:
            ops.add(s.name)
    return ops


def signature(schema):
    """What a schema says besides its types: attributes (with defaults), inputs, outputs."""
    attributes = {k: (a.type, a.default_value.SerializeToString(), a.required) for k, a in schema.attributes.items()}
    inputs = [(i.name, int(i.option)) for i in schema.inputs]
    outputs = [(o.name, int(o.option)) for o in schema.outputs]
    return attributes, inputs, outputs


def restamp_reason(model, opset):
    """None if every node of `model` (at `opset`) means the same at opset 18, else why not."""
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            return f"node {node.op_type} of domain {node.domain}"
        try:
            at_18 = onnx.defs.get_schema(node.op_type, OPSET)
        except onnx.defs.SchemaError:
            return f"{node.op_type} does not exist at opset 18"
        later = onnx.defs.get_schema(node.op_type, opset)
        if later.since_version == at_18.since_version:
            continue
        versions = sorted({onnx.defs.get_schema(node.op_type, v).since_version for v in range(OPSET + 1, opset + 1)})
        for v in versions:
            later_signature = signature(onnx.defs.get_schema(node.op_type, v))
            for (op, since), name in ATTRIBUTE_ADDED.items():
                if op == node.op_type and since <= v:
                    if any(a.name == name for a in node.attribute):
                        return f"{node.op_type} sets {name}, added at opset {since}"
                    later_signature[0].pop(name, None)
            if later_signature != signature(at_18):
                return f"{node.op_type}-{v} differs from {node.op_type}-{at_18.since_version} beyond its types"
            added = VALUE_ADDED.get((node.op_type, v))
            if added:
                for a in node.attribute:
                    if a.name == added[0] and a.s == added[1]:
                        return f"{node.op_type} uses {added[0]} {added[1].decode()}, added at opset {v}"
    return None


def opset_of(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def group_norm_18_cases():
    """GroupNormalization-18 (scale and bias per group) from the generator's reference helper."""
    from onnx.backend.test.case.node.groupnormalization import _group_normalization

    cases = []
    for name, epsilon in (("test_group_normalization_example_opset18", None),
                          ("test_group_normalization_epsilon_opset18", 1e-2)):
        c, groups = 4, 2
        x = np.random.randn(3, c, 2, 2).astype(np.float32)
        scale = np.random.randn(groups).astype(np.float32)
        bias = np.random.randn(groups).astype(np.float32)
        per_channel = lambda v: np.repeat(v, c // groups)  # noqa: E731
        kwargs = {} if epsilon is None else {"epsilon": epsilon}
        y = _group_normalization(x, groups, per_channel(scale), per_channel(bias), **kwargs).astype(np.float32)
        node = h.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=groups, **kwargs)
        graph = h.make_graph([node], name,
                             [h.make_tensor_value_info(n, onnx.TensorProto.FLOAT, a.shape)
                              for n, a in (("x", x), ("scale", scale), ("bias", bias))],
                             [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, y.shape)])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="backend-test")
        cases.append((name, model, [x, scale, bias], [y]))
    return cases


def resize_antialias_upscale_cases():
    """Resize-18 with antialias = 1 that only upscales, outputs from onnx.reference."""
    from onnx.reference import ReferenceEvaluator

    cases = []
    for mode in ("linear", "cubic"):
        name = f"test_resize_upsample_sizes_{mode}_antialias_opset18"
        x = np.random.randn(1, 2, 4, 4).astype(np.float32)
        sizes = np.array([1, 2, 7, 9], dtype=np.int64)
        node = h.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode=mode, antialias=1)
        graph = h.make_graph([node], name,
                             [h.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape),
                              h.make_tensor_value_info("sizes", onnx.TensorProto.INT64, sizes.shape)],
                             [h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [1, 2, 7, 9])])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="backend-test")
        y = ReferenceEvaluator(model).run(None, {"X": x, "sizes": sizes})[0]
        cases.append((name, model, [x, sizes], [y]))
    return cases


def value_file(value, info):
    """A data file as onnx's backend-test writer makes it (onnx/backend/test/cmd_tools.py)."""
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    if info.type.HasField("sequence_type"):
        return numpy_helper.from_list(value, info.name).SerializeToString()
    if info.type.HasField("optional_type"):
        return numpy_helper.from_optional(value, info.name).SerializeToString()
    return numpy_helper.from_array(np.asarray(value), info.name).SerializeToString()


def all_tensors(model):
    return all(v.type.HasField("tensor_type") for v in list(model.graph.input) + list(model.graph.output))


def write_case(out_dir, name, model, inputs, outputs):
    files = {"model.onnx": model.SerializeToString()}
    for j, value in enumerate(inputs):
        files[f"test_data_set_0/input_{j}.pb"] = value_file(value, model.graph.input[j])
    for j, value in enumerate(outputs):
        files[f"test_data_set_0/output_{j}.pb"] = value_file(value, model.graph.output[j])
    size = sum(len(b) for b in files.values())
    if size > SIZE_LIMIT:
        return f"{size} bytes, over {SIZE_LIMIT}"
    case_dir = os.path.join(out_dir, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(os.path.join(case_dir, "test_data_set_0"))
    for path, data in files.items():
        with open(os.path.join(case_dir, path), "wb") as f:
            f.write(data)
    return None


def ort_check(model, inputs, outputs):
    """None if onnxruntime reproduces the expected outputs, else what it said."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        feeds = {model.graph.input[j].name: (numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto)
                                              else np.asarray(v))
                 for j, v in enumerate(inputs)}
        got = session.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - ORT's errors have many types
        return "onnxruntime: " + str(e).splitlines()[0][:160]
    for j, (g, e) in enumerate(zip(got, outputs)):
        e = numpy_helper.to_array(e) if isinstance(e, onnx.TensorProto) else np.asarray(e)
        if g.shape != e.shape or not np.allclose(g, e, rtol=1e-3, atol=1e-5, equal_nan=True):
            return f"onnxruntime's output {j} differs from the expected one"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the directory to write the cases into (tests/onnx-opset18)")
    args = parser.parse_args()
    np.random.seed(20260518)
    warnings.filterwarnings("ignore")
    from onnx.backend.test.case.node import collect_testcases

    wanted = changed_at_18()
    taken, left_out, ort_notes = [], [], []
    candidates = []
    cases = [c for c in collect_testcases() if c.model]
    # The op a case tests: its one node's; an expansion (NAME_expanded, NAME_expanded_verN) tests NAME's.
    tested = {c.name: c.model.graph.node[0].op_type for c in cases if len(c.model.graph.node) == 1}
    for case in cases:
        model = case.model
        if not any(n.op_type in wanted for n in model.graph.node):
            continue
        opset = opset_of(model)
        if opset is None or opset < OPSET:
            continue
        if opset > OPSET and tested.get(case.name.split("_expanded")[0]) not in wanted:
            continue
        if opset > OPSET:
            reason = restamp_reason(model, opset)
            if reason:
                left_out.append((case.name, reason))
                continue
        inputs, outputs = case.data_sets[0]
        candidates.append((case.name, model, inputs, outputs))
    candidates.extend(group_norm_18_cases())
    candidates.extend(resize_antialias_upscale_cases())

    for name, model, inputs, outputs in candidates:
        model = onnx.ModelProto.FromString(model.SerializeToString())
        del model.opset_import[:]
        model.opset_import.append(h.make_opsetid("", OPSET))
        model.ir_version = IR_VERSION
        if not any(n.op_type in wanted and onnx.defs.get_schema(n.op_type, OPSET).since_version == OPSET
                   for n in model.graph.node):
            continue
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as e:  # noqa: BLE001 - checker and inference errors
            # GroupNormalization-18 is deprecated (onnx 1.23's checker refuses it outright), yet an
            # opset-18 model may hold it: those cases are checked by onnxruntime below alone.
            if not str(e).startswith("Op registered for GroupNormalization is deprecated"):
                left_out.append((name, "not a valid opset-18 model: " + str(e).splitlines()[0][:160]))
                continue
        reason = write_case(args.out, name, model, inputs, outputs)
        if reason:
            left_out.append((name, reason))
            continue
        taken.append(name)
        note = ort_check(model, inputs, outputs) if all_tensors(model) else None
        if note:
            ort_notes.append((name, note))

    print(f"{len(taken)} cases written to {args.out}")
    for name, reason in left_out:
        print(f"left out {name}: {reason}")
    for name, note in ort_notes:
        print(f"ort {name}: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
