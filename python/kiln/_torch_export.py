"""kiln.export's front door for PyTorch 2: a torch.export ExportedProgram and its contract.

The route (spec/python-export.md says why): torch.export.export traces the
module (or the user hands in the ExportedProgram; _torch_dims checks the
declarations first); its range_constraints are the contract (_torch_contract):
each root symbol becomes a kiln dim with the same bounds, named after the
user's Dim, and each derived size (`batch + 1`, `2*batch`) stays that
expression over it. torch.onnx.export translates the program's core ATen
graph to ONNX opset 18 (_torch_onnx); its dim_params are renamed to the
dims' names, and kiln's importer re-proves every shape rule over the whole
domain. Nothing torch suggests is applied (_torch_refusals): a declared dim
that torch specialized or narrowed is refused with the dim, the rule and a
counterexample. This module traces, names the inputs and outputs, and hands
the sealing pipeline (export.py) a Traced.
"""
import contextlib
import io
import re
import sys

import numpy

from ._torch_contract import contract, example_point, sizer
from ._torch_dims import check_example_sizes, parameter_names, torch_dynamic_shapes
from ._torch_onnx import rename, to_onnx
from ._torch_quiet import quiet_torch
from ._torch_refusals import trace_error
from .errors import ArgumentError, ProgramError


class Traced:
    """What a front door hands to the sealing pipeline: the ONNX model, the dims it is declared
    over, the inputs and outputs by name, the example, and the eager program for evidence."""

    def __init__(self, model, dims, names, output_names, examples, axes, example_point, eager):
        self.model = model                # ONNX ModelProto bytes, dim_params named after `dims`
        self.dims = dims                  # {name: kiln.Dim}: the root dims, as torch bounded them
        self.names = names                # input names, in the program's order
        self.output_names = output_names
        self.examples = examples          # [numpy array] per input
        self.axes = axes                  # {input: {axis: size(point)}}: the dynamic axes' sizes at a point
        self.example_point = example_point
        self.eager = eager                # {input name: array} -> [output arrays]


def _torch():
    import torch
    import torch.export  # noqa: F401 - torch 1.x has no torch.export: the TorchScript route is the fallback
    return torch


class Inputs:
    """The program's inputs: the example (args, kwargs) as a tree, its tensor leaves by name."""

    def __init__(self, args, kwargs, names, torch):
        from torch.utils import _pytree as pytree
        self.pytree = pytree
        leaves, self.spec = pytree.tree_flatten((args, kwargs))
        self.leaves = leaves
        self.tensor_positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        if len(self.tensor_positions) != len(names):
            raise ProgramError("the exported program has %d tensor inputs but the example holds %d tensors" % (
                len(names), len(self.tensor_positions)), 16)
        self.names = names
        self.torch = torch

    def examples(self):
        return [self.leaves[i].detach().cpu().numpy() for i in self.tensor_positions]

    def call(self, function, arrays):
        """function(*args, **kwargs) with the example's tree, its tensors replaced by `arrays` (by name)."""
        leaves = list(self.leaves)
        for name, position in zip(self.names, self.tensor_positions):
            leaves[position] = self.torch.from_numpy(numpy.array(arrays[name], copy=True))
        args, kwargs = self.pytree.tree_unflatten(leaves, self.spec)
        return function(*args, **kwargs)


def distinct_examples(args, kwargs, torch):
    """The example inputs with every tensor passed twice (one zeros tensor for past_k and past_v, or
    for every layer's cache) given as a copy: torch.export traces one tensor object passed for two
    inputs as one input, so the program read past_v where it should read past_k."""
    seen = set()

    def copy(value):
        if isinstance(value, torch.Tensor):
            if id(value) in seen:
                return value.clone()
            seen.add(id(value))
            return value
        if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
            return type(value)(copy(v) for v in value)
        if isinstance(value, dict):
            return {k: copy(v) for k, v in value.items()}
        return value

    return tuple(copy(a) for a in args), {k: copy(v) for k, v in kwargs.items()}


def trace(module, args, kwargs, dynamic_shapes, strict, torch):
    """torch.export.export(module, ...), its failures as kiln errors. Returns (ep, declared axes)."""
    parameters = parameter_names(module, args, kwargs)
    shapes, declared = torch_dynamic_shapes(dynamic_shapes, parameters, torch)
    check_example_sizes(declared, parameters, args, kwargs)
    # On a failed trace torch prints the partial graph to stderr before raising; kiln's error
    # says what failed, so that text is dropped (what the module prints itself while traced
    # successfully is passed on).
    printed = io.StringIO()
    with quiet_torch(), contextlib.redirect_stderr(printed):
        try:
            ep = torch.export.export(module, tuple(args), kwargs or None, dynamic_shapes=shapes, strict=strict)
        except Exception as exc:  # torch raises many kinds; each becomes the kiln error that says what to fix
            raise trace_error(exc, declared, torch) from exc
    sys.stderr.write(printed.getvalue())
    return ep, declared


def output_names(result, given, input_names, torch):
    """The outputs' names: `given`; else the keys of a dict or ModelOutput result; else y (y0, y1, ...)."""
    from torch.utils import _pytree as pytree
    paths = [(path, leaf) for path, leaf in pytree.tree_flatten_with_path(result)[0] if isinstance(leaf, torch.Tensor)]
    if given is not None:
        names = list(given)
        if len(names) != len(paths):
            raise ArgumentError("%d output name%s for %d outputs" % (len(names), "" if len(names) == 1 else "s",
                                                                     len(paths)), 1)
    else:
        keys = [path[0].key if len(path) == 1 and hasattr(path[0], "key") else
                path[0].name if len(path) == 1 and hasattr(path[0], "name") else None for path, _ in paths]
        if len(paths) > 1 and all(isinstance(k, str) and re.fullmatch(r"[A-Za-z_]\w*", k) for k in keys) \
                and len(set(keys)) == len(keys):
            names = keys
        else:
            base = "y"
            while True:
                names = [base] if len(paths) == 1 else ["%s%d" % (base, i) for i in range(len(paths))]
                if not set(names) & set(input_names):
                    break
                base = "output" if base == "y" else base + "_"
    clash = sorted(set(names) & set(input_names))
    if clash:
        raise ArgumentError("output name%s %s also an input's: give outputs other names" % (
            "" if len(clash) == 1 else "s", ", ".join("'%s'" % n for n in clash)), 1)
    return names


def tensor_leaves(result, torch):
    from torch.utils import _pytree as pytree
    return [t.detach().cpu().numpy() for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]


def from_module_or_program(target, args, kwargs, dynamic_shapes, strict, given_output_names):
    """Trace `target` (a module) or take it (an ExportedProgram) and translate it: a Traced."""
    torch = _torch()
    if isinstance(target, torch.export.ExportedProgram):
        ep = target
        example_args, example_kwargs = ep.example_inputs if ep.example_inputs is not None else (args, kwargs)
        if args is not None and len(args):
            example_args, example_kwargs = tuple(args), dict(kwargs or {})
        user_inputs = list(ep.graph_signature.user_inputs)
        _, declared = torch_dynamic_shapes(dynamic_shapes, user_inputs, torch) if dynamic_shapes else (None, {})
        eager_module = ep.module()
    else:
        example_args, example_kwargs = distinct_examples(tuple(args), dict(kwargs or {}), torch)
        ep, declared = trace(target, example_args, example_kwargs, dynamic_shapes, strict, torch)
        user_inputs = list(ep.graph_signature.user_inputs)
        eager_module = target
    inputs = Inputs(example_args, example_kwargs, user_inputs, torch)
    dims_by_symbol, scales, axes, sympy = contract(ep, declared, user_inputs)

    def eager(arrays):
        # Gradients stay as they were while tracing (enabled): a module such as
        # nn.TransformerEncoderLayer takes fused paths under no_grad that the export did not trace.
        with torch.enable_grad():
            return tensor_leaves(inputs.call(eager_module, arrays), torch)

    examples = inputs.examples()
    first = eager(dict(zip(user_inputs, examples)))
    with torch.enable_grad():
        names_out = output_names(inputs.call(eager_module, dict(zip(user_inputs, examples))), given_output_names,
                                 user_inputs, torch)
    if len(names_out) != len(first):
        raise ProgramError("the module gives %d tensors but %d output names" % (len(first), len(names_out)), 16)
    model = to_onnx(ep, torch)
    if len(model.graph.output) != len(first):
        raise ProgramError("the ONNX translation has %d outputs, the eager module %d tensors" % (
            len(model.graph.output), len(first)), 16)
    model = rename(model, {str(symbol): (dim.name, scales.get(symbol, 1)) for symbol, dim in dims_by_symbol.items()},
                   names_out)
    dims = {dim.name: dim for dim in dims_by_symbol.values()}
    # A root symbol at a point of the kiln dims: the dim's size (over multiple_of for a kiln.Dim's root).
    roots = {symbol: (dim.name, scales.get(symbol, 1)) for symbol, dim in dims_by_symbol.items()}
    sizers = {name: {axis: sizer(expr, roots, sympy) for axis, expr in by_axis.items()}
              for name, by_axis in axes.items()}
    point = example_point(axes, examples, user_inputs, roots, sympy)
    traced = Traced(model.SerializeToString(), dims, user_inputs, names_out, examples, sizers, point, eager)
    traced.first_outputs = first
    traced.program_name = type(target).__name__ if eager_module is target else _module_class_name(ep)
    return traced


def _module_class_name(ep):
    """The class name of the module an ExportedProgram was traced from (its root's entry in
    the nodes' nn_module_stack), or "program"."""
    for node in ep.graph.nodes:
        for path, kind in (node.meta.get("nn_module_stack") or {}).values():
            if path == "":
                return str(kind).rsplit(".", 1)[-1]
    return "program"
