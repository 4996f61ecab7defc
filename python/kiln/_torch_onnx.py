"""An ExportedProgram in ONNX for kiln's importer: torch.onnx.export (dynamo) at opset 18, every
ATen op it cannot translate listed at once, and the model's dim_params and outputs renamed to
the kiln dims and the outputs' names."""
import re

from ._torch_dims import TORCH_SYMBOL
from ._torch_quiet import quiet_torch
from ._torch_refusals import user_frame
from .errors import UnsupportedError

OPSET = 18


def _unsupported_ops(ep):
    """Every ATen op of the program that torch's ONNX exporter has no translation for, with where
    the user's code calls it (the exporter itself stops at the first)."""
    try:
        from torch.onnx._internal.exporter import _decomp, _fx_passes, _registration
        registry = _registration.ONNXRegistry.from_torchlib()
        table = _decomp.create_onnx_friendly_decomposition_table(_decomp.get_onnx_implemented_overloads(registry))
        program = ep.run_decompositions(table)
        # The exporter drops assertions (_assert_tensor_metadata, _assert_scalar, ...) before it
        # translates: they have no translation and need none.
        _fx_passes.remove_assertion_nodes(program.graph_module)
    except Exception:  # a private API of torch's: when it moves, the exporter's own message stands
        return []
    found = {}
    for node in program.graph.nodes:
        if node.op == "call_function" and hasattr(node.target, "_schema") and not registry.is_registered(node.target):
            found.setdefault(str(node.target), user_frame(node.meta.get("stack_trace") or ""))
    return ["%s%s" % (op, where) for op, where in sorted(found.items())]


def to_onnx(ep, torch):
    """torch.onnx.export of the ExportedProgram at opset 18 (a ModelProto); every ATen op it cannot
    translate is listed at once."""
    # Without gradients, as torch.onnx's own examples run it: with them on, its graph
    # simplification can fail on a view it would otherwise translate (T5's attention reshape).
    with quiet_torch(), torch.no_grad():
        try:
            return torch.onnx.export(ep, dynamo=True, opset_version=OPSET, verbose=False).model_proto
        except Exception as exc:  # ConversionError and its causes
            text = str(exc)
            ops = _unsupported_ops(ep) if "No ONNX function found" in text else []
            if ops:
                raise UnsupportedError("%d op%s of the exported program cannot be translated to ONNX opset %d:\n  %s"
                                       % (len(ops), "" if len(ops) == 1 else "s", OPSET, "\n  ".join(ops)),
                                       15, ops) from exc
            summary = text.split("## Exception summary")[-1].strip().splitlines()
            raise UnsupportedError("torch.onnx.export cannot translate the exported program: %s" % (
                next((line for line in summary if line.strip()), text)), 15, [text]) from exc


def rename(model, symbol_names, output_names):
    """Name the model's dim_params after the dims, `symbol_names` {symbol: (dim name, scale)}
    (torch's s6 -> batch, `s6 + 1` -> `batch + 1`; for the root r of a multiple_of-4 dim n,
    `4*r` -> n and r -> `(n / 4)`)
    and its outputs `output_names`: the value is renamed where it is made and used, or, where
    that cannot be done (the output is an input or another output, or a subgraph may use it),
    copied by an Identity node."""
    def renamed(text):
        for symbol, (name, scale) in symbol_names.items():
            if scale > 1:  # the root of a kiln.Dim with multiple_of: scale*root is the dim itself
                text = re.sub(r"\b%d\*%s\b" % (scale, symbol), name, text)
        return TORCH_SYMBOL.sub(lambda match: kiln_size(match.group(1)), text)

    def kiln_size(symbol):
        if symbol not in symbol_names:
            return symbol
        name, scale = symbol_names[symbol]
        return name if scale == 1 else "(%s / %d)" % (name, scale)

    graph = model.graph
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param"):
                dim.dim_param = renamed(dim.dim_param)
    has_subgraphs = any(attribute.HasField("g") or len(attribute.graphs)
                        for node in graph.node for attribute in node.attribute)
    taken = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    produced = [o.name for o in graph.output]

    def rename_value(old, new):
        for node in graph.node:
            node.input[:] = [new if v == old else v for v in node.input]
            node.output[:] = [new if v == old else v for v in node.output]
        for value in graph.value_info:
            if value.name == old:
                value.name = new

    for output, name in zip(graph.output, output_names):
        old = output.name
        if old == name:
            continue
        used = {v for node in graph.node for v in list(node.input) + list(node.output)}
        if name in used and name not in produced:  # an inner value has the name: it takes another
            fresh = name + "_inner"
            while fresh in used or fresh in taken:
                fresh += "_"
            rename_value(name, fresh)
        if has_subgraphs or old in taken or produced.count(old) > 1:
            node = graph.node.add()
            node.op_type, node.name = "Identity", "kiln_output_%s" % name
            node.input.append(old)
            node.output.append(name)
        else:
            rename_value(old, name)
        output.name = name
    return model
