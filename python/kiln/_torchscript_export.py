"""kiln.export's TorchScript route (exporter="torchscript"): torch.onnx.export's tracer at opset 14.

The route of PyTorch 1.13, which has no torch.export, kept for it and for
modules torch.export cannot trace: the module is traced at the example, so
torch infers no contract. The dims are the user's kiln.Dims, passed to the
exporter as dynamic_axes, and kiln's importer proves the traced graph's
shape rules over their whole domain.
"""
import inspect as _inspect
import io

from ._torch_export import Traced
from ._torch_quiet import quiet_torch
from .contract import Dim
from .errors import ArgumentError, UnsupportedError

OPSET = 14


def _input_names(module, args, input_names):
    if input_names is not None:
        names = list(input_names)
    else:
        forward = getattr(module, "forward", module)
        parameters = [p for p in _inspect.signature(forward).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in parameters[:len(args)]]
    if len(names) != len(args):
        raise ArgumentError("%d example input%s but %d input name%s" % (
            len(args), "" if len(args) == 1 else "s", len(names), "" if len(names) == 1 else "s"), 1)
    return names


def _dims_of(dynamic_shapes, names, args):
    """{input name: {axis: Dim}} and the Dims by name, from dynamic_shapes (by name or by position)."""
    axes_of, dims = {}, {}
    if dynamic_shapes is None:
        return axes_of, dims
    if isinstance(dynamic_shapes, (list, tuple)):
        dynamic_shapes = {names[i]: spec for i, spec in enumerate(dynamic_shapes) if spec}
    for input_name, spec in dynamic_shapes.items():
        if input_name not in names:
            raise ArgumentError("dynamic_shapes names '%s', which is not an input (inputs: %s)" % (
                input_name, ", ".join(names)), 21)
        if spec is None:
            continue
        if isinstance(spec, (list, tuple)):
            spec = {axis: d for axis, d in enumerate(spec) if d is not None}
        rank = args[names.index(input_name)].dim()
        axes = {}
        for axis, value in spec.items():
            if not -rank <= axis < rank:
                raise ArgumentError("dynamic_shapes['%s']: axis %d of a rank-%d input" % (input_name, axis, rank), 1)
            dim = Dim.of(value)
            known = dims.get(dim.name)
            if known is not None and known != dim:
                raise ArgumentError("two dims are called '%s' with different bounds: %r and %r" % (
                    dim.name, known, dim), 1)
            dims[dim.name] = dim
            axes[axis % rank] = dim
        axes_of[input_name] = axes
    return axes_of, dims


def _check_example(names, args, axes_of):
    """The example's own sizes are a point of the domain, else nothing proven about it would hold."""
    point = {}
    for name, example in zip(names, args):
        for axis, dim in axes_of.get(name, {}).items():
            size = int(example.shape[axis])
            if size < dim.min or size > dim.max or size % dim.multiple_of:
                raise ArgumentError("the example input '%s' has %d on axis %d, outside %r: give an example "
                                    "inside the declared domain" % (name, size, axis, dim), 19)
            if point.setdefault(dim.name, size) != size:
                raise ArgumentError("dim '%s' is %d and %d in the example inputs" % (
                    dim.name, point[dim.name], size), 19)
    return point


def _output_names(given, count, input_names):
    """The outputs' names: `given`, else "y" (or y0, y1, ...), else "output" when an input is called so.
    An output may not share an input's name: torch.onnx.export would rename the input ("y" becomes
    "y.1") and its dynamic axes would go to the output, leaving the input's dims undeclared."""
    if given is not None:
        clash = sorted(set(given) & set(input_names))
        if clash:
            raise ArgumentError("output name%s %s %s also an input's: give outputs other names" % (
                "" if len(clash) == 1 else "s", ", ".join("'%s'" % n for n in clash),
                "is" if len(clash) == 1 else "are"), 1)
        return list(given)
    base = "y"
    while True:
        names = [base] if count == 1 else ["%s%d" % (base, i) for i in range(count)]
        if not set(names) & set(input_names):
            return names
        base = "output" if base == "y" else base + "_"


def _eager(module, names, inputs, torch):
    tensors = [torch.from_numpy(inputs[name].copy()) for name in names]
    # Gradients stay enabled, as during the export: without them some modules
    # (nn.TransformerEncoderLayer in eval mode) take fused paths the export did not trace.
    with torch.enable_grad():
        result = module(*tensors)
    if isinstance(result, (list, tuple)):
        return [r.detach().cpu().numpy() for r in result]
    return [result.detach().cpu().numpy()]


def from_module(module, args, dynamic_shapes, input_names, given_output_names, opset):
    """Trace `module` at `args` with torch.onnx.export's TorchScript tracer: a Traced."""
    import torch
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    if not all(isinstance(a, torch.Tensor) for a in args):
        raise ArgumentError("kiln.export takes the example inputs as a tuple of tensors", 1)
    names = _input_names(module, args, input_names)
    axes_of, dims = _dims_of(dynamic_shapes, names, args)
    example_point = _check_example(names, args, axes_of)
    examples = [a.detach().cpu().numpy() for a in args]
    first_outputs = _eager(module, names, dict(zip(names, examples)), torch)
    output_names = _output_names(given_output_names, len(first_outputs), names)
    dynamic_axes = {n: {axis: d.name for axis, d in axes.items()} for n, axes in axes_of.items()}
    buffer = io.BytesIO()
    with quiet_torch():  # the tracer's warnings speak of torch internals
        try:
            torch.onnx.export(module, args, buffer, input_names=names, output_names=list(output_names), dynamo=False,
                              dynamic_axes=dynamic_axes, opset_version=opset or OPSET, do_constant_folding=True)
        except torch.onnx.errors.UnsupportedOperatorError as exc:
            raise UnsupportedError("PyTorch cannot export this module to ONNX opset %d: %s" % (opset or OPSET, exc),
                                   15, [str(exc)]) from exc
    sizers = {n: {axis: (lambda point, d=d: point[d.name]) for axis, d in axes.items()} for n, axes in axes_of.items()}
    traced = Traced(buffer.getvalue(), dims, names, output_names, examples, sizers, example_point,
                    lambda inputs: _eager(module, names, inputs, torch))
    traced.first_outputs = first_outputs
    return traced
