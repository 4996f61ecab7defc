"""What an artifact is, as a dict: the data of `kiln inspect --json` (spec/inspect-json.md), read
from the library (kiln_artifact_open or kiln_artifact_open_memory, then the program's getters),
member for member as the command writes it. tests/python/test_describe.py compares the two on
every golden artifact, so a member the command gains or changes and this module does not fails there.

An artifact this runtime cannot run is described as far as its container goes, with the reasons
in "problems"; one that cannot be read at all (missing, damaged, another format major) is
{"readable": False, "message": why}, as the command prints it."""
import ctypes
import math
import os

from . import _lib
from ._replay import generation_cases_of
from .errors import raise_for

SCHEMA = "kiln-inspect/1"
MEMORY_ORIGIN = "<memory>"  # kiln_artifact_path of an artifact opened from memory

# The command lists this many weights, largest first, under "largest".
LARGEST_WEIGHTS = 5

_UINT64_MAX = 2 ** 64 - 1
_SIGNATURE_STATES = {0: "unsigned", 1: "verified", 2: "unverified"}  # kiln_signature_state
_WEIGHT_KINDS = {0: "parameter", 1: "buffer", 2: "constant"}        # kiln_weight_kind
_IDENTITY_PROGRAM, _IDENTITY_STATE = 1, 2                          # kiln_identity
_MODE_INFERENCE = 0
_COMPARE_EXACT = 0
_LIMIT = 13  # KILN_ERR_LIMIT


def describe_path(path, method=None):
    """The inspect data of the artifact at `path`; `method` (a name) as `kiln inspect --method`."""
    origin = os.fsdecode(path)  # "file" is the path as given, as the command prints it
    handle, error = ctypes.c_void_p(), _lib.Error()
    status = _lib.kiln.kiln_artifact_open(os.fsencode(origin), None, ctypes.byref(handle), ctypes.byref(error))
    return _describe_opened(origin, status, handle, error, method)


def describe_bytes(data, method=None):
    """The inspect data of the artifact held in `data` (bytes), its "file" "<memory>"."""
    data = bytes(data)
    handle, error = ctypes.c_void_p(), _lib.Error()
    status = _lib.kiln.kiln_artifact_open_memory(data, len(data), None, ctypes.byref(handle), ctypes.byref(error))
    return _describe_opened(MEMORY_ORIGIN, status, handle, error, method)


def signature_of_path(path):
    """(state, key id hex or None) of the artifact at `path`, opened without verifying its sections
    (the caller has just verified it: kiln.sign)."""
    options = _lib.init(_lib.LoadOptions)
    options.verify = 1  # KILN_VERIFY_NONE
    handle, error = ctypes.c_void_p(), _lib.Error()
    raise_for(_lib.kiln.kiln_artifact_open(os.fsencode(path), ctypes.byref(options), ctypes.byref(handle),
                                           ctypes.byref(error)), error)
    try:
        signature = _signature(handle)
    finally:
        _lib.kiln.kiln_artifact_free(handle)
    return signature["state"], signature.get("key_id")


def _describe_opened(origin, status, handle, error, method=None):
    if status != 0:
        return {"schema": SCHEMA, "file": origin, "readable": False, "runnable": False,
                "message": error.message.decode("utf-8", "replace"), "problems": []}
    try:
        program = _lib.kiln.kiln_artifact_program(handle)
        out = {"schema": SCHEMA, "file": origin, "readable": True, "runnable": bool(program),
               "problems": _problems(_lib.kiln.kiln_artifact_report(handle))}
        out.update(_container(handle, program))
        if program:
            shown = program
            if method is not None:
                found, error = ctypes.c_void_p(), _lib.Error()
                raise_for(_lib.kiln.kiln_program_method(program, str(method).encode(), ctypes.byref(found),
                                                        ctypes.byref(error)), error)
                shown = found.value
            out.update(_program(handle, program, shown))
        return out
    finally:
        _lib.kiln.kiln_artifact_free(handle)


def _number(value):
    """A double as the command's JSON holds it: None where it is not finite."""
    return value if math.isfinite(value) else None


def _bytes_or_none(value):
    """A byte count, None where it overflows 64 bits (UINT64_MAX)."""
    return None if value == _UINT64_MAX else value


def _text(function, *args):
    """The text a kiln_*(..., buffer, size) function writes, whatever its length ("" past a count)."""
    size = 256
    while True:
        buffer = ctypes.create_string_buffer(size)
        needed = function(*(args + (buffer, size)))
        if needed < size:
            return buffer.value.decode()
        size = needed + 1


def _identity_text(digest):
    return "blake2b-256:" + bytes(digest).hex()


def _problems(report):
    severity = {0: "error", 1: "warning"}
    out = []
    for i in range(_lib.kiln.kiln_report_count(report) if report else 0):
        info = _lib.ProblemInfo()
        _lib.kiln.kiln_report_problem(report, i, ctypes.byref(info))
        out.append({"severity": severity.get(info.severity, "warning"), "code": info.code.decode(),
                    "status": info.status, "location": info.location.decode(), "message": info.message.decode()})
    return out


def _signature(handle):
    info = _lib.SignatureInfo()
    _lib.kiln.kiln_artifact_signature(handle, ctypes.byref(info))
    out = {"state": _SIGNATURE_STATES.get(info.state, "unsigned")}
    if info.state != 0:
        out["key_id"] = bytes(info.key_id).hex()
    return out


def _sections(handle):
    out = []
    for i in range(_lib.kiln.kiln_artifact_section_count(handle)):
        s = _lib.SectionInfo()
        _lib.kiln.kiln_artifact_section(handle, i, ctypes.byref(s))
        out.append({"type": s.type.decode(), "critical": s.critical, "compressed": s.compressed,
                    "version": s.version, "offset": s.offset, "stored_size": s.stored_size,
                    "raw_size": s.raw_size, "crc32": "%08x" % s.crc32})
    return out


def _container(handle, program):
    """Format, size, feature bits, identities, signature and sections: what any readable artifact shows."""
    kiln = _lib.kiln
    major, minor = ctypes.c_uint16(), ctypes.c_uint16()
    kiln.kiln_artifact_format_version(handle, ctypes.byref(major), ctypes.byref(minor))
    bits = kiln.kiln_artifact_feature_bits(handle)
    digest = (ctypes.c_uint8 * 32)()
    kiln.kiln_artifact_digest(handle, digest)
    identities = {"artifact": _identity_text(digest)}
    if program:
        for identity, name in ((_IDENTITY_PROGRAM, "program"), (_IDENTITY_STATE, "state")):
            kiln.kiln_program_identity(program, identity, digest)
            identities[name] = _identity_text(digest)
    return {"format": {"major": major.value, "minor": minor.value},
            "file_size": kiln.kiln_artifact_file_size(handle),
            "feature_bits": [bit for bit in range(64) if bits >> bit & 1],
            "identities": identities, "signature": _signature(handle), "sections": _sections(handle)}


def _io(program, outputs):
    kiln = _lib.kiln
    count, describe, shape_text, axis_text = (
        (kiln.kiln_program_output_count, kiln.kiln_program_output, kiln.kiln_program_output_shape_text,
         kiln.kiln_program_output_axis_text) if outputs else
        (kiln.kiln_program_input_count, kiln.kiln_program_input, kiln.kiln_program_input_shape_text,
         kiln.kiln_program_input_axis_text))
    out = []
    for i in range(count(program)):
        info = _lib.IoInfo()
        describe(program, i, ctypes.byref(info))
        out.append({"name": info.name.decode(), "dtype": kiln.kiln_dtype_name(info.dtype).decode(),
                    "rank": info.rank, "shape": _text(shape_text, program, i),
                    "axes": [_text(axis_text, program, i, a) for a in range(info.rank)]})
    return out


def _dim_infos(program):
    """The program's dims, as the library describes them (DimInfo, in kiln_program_dim order)."""
    kiln = _lib.kiln
    infos = []
    for i in range(kiln.kiln_program_dim_count(program)):
        d = _lib.DimInfo()
        kiln.kiln_program_dim(program, i, ctypes.byref(d))
        infos.append(d)
    return infos


def _dims(program):
    kiln = _lib.kiln
    dims = [{"name": d.name.decode(), "min": d.min, "max": d.max, "multiple_of": d.multiple_of}
            for d in _dim_infos(program)]
    derived = []
    for i in range(kiln.kiln_program_derived_dim_count(program)):
        name = ctypes.c_char_p()
        expression = _text(kiln.kiln_program_derived_dim, program, i, ctypes.byref(name))
        derived.append({"name": name.value.decode(), "expression": expression})
    return dims, derived


def _semantic_checks(program):
    kiln = _lib.kiln
    out = []
    for i in range(kiln.kiln_program_input_count(program)):
        check = _lib.init(_lib.InputCheck)
        if not kiln.kiln_program_input_check(program, i, ctypes.byref(check)):
            continue
        info = _lib.IoInfo()
        kiln.kiln_program_input(program, i, ctypes.byref(info))
        out.append({"input": info.name.decode(),
                    "range": {"min": _number(check.min), "max": _number(check.max)} if check.has_range else None,
                    "finite_only": check.finite_only,
                    "categories": [check.categories[k] for k in range(check.category_count)],
                    "unit": check.unit.decode() if check.unit else "",
                    "description": check.description.decode() if check.description else ""})
    return out


def _runtime_guards(program):
    kiln = _lib.kiln
    out = []
    for i in range(kiln.kiln_program_runtime_guard_count(program)):
        node = ctypes.c_uint32()
        claim = kiln.kiln_program_runtime_guard(program, i, ctypes.byref(node))
        info = _lib.NodeInfo()
        kiln.kiln_program_node(program, node.value, ctypes.byref(info))
        name = kiln.kiln_program_node_name(program, node.value)
        out.append({"node": node.value, "op": info.op.decode(), "node_name": name.decode() if name else None,
                    "claim": claim.decode()})
    return out


def _ops(program):
    out = []
    for i in range(_lib.kiln.kiln_program_op_use_count(program)):
        use = _lib.OpUse()
        _lib.kiln.kiln_program_op_use(program, i, ctypes.byref(use))
        out.append({"name": use.name.decode(), "version": use.version, "nodes": use.nodes})
    return out


def _weights(handle, program):
    kiln = _lib.kiln
    tensors = []
    for i in range(kiln.kiln_program_weight_count(program)):
        w = _lib.WeightInfo()
        kiln.kiln_program_weight(program, i, ctypes.byref(w))
        tensors.append({"name": w.name.decode(), "kind": _WEIGHT_KINDS.get(w.kind, "parameter"),
                        "dtype": kiln.kiln_dtype_name(w.dtype).decode(), "shape": [w.shape[a] for a in range(w.rank)],
                        "bytes": w.byte_size})
    stored, raw, compressed = 0, 0, False
    index = kiln.kiln_artifact_find_section(handle, b"WDAT")
    if index >= 0:
        s = _lib.SectionInfo()
        kiln.kiln_artifact_section(handle, index, ctypes.byref(s))
        stored, raw, compressed = s.stored_size, s.raw_size, s.compressed
    # Largest first; ties in table order, so the order is deterministic.
    largest = sorted(range(len(tensors)), key=lambda i: (-tensors[i]["bytes"], i))[:LARGEST_WEIGHTS]
    ratio = float(raw) / float(stored) if stored else 1.0  # in doubles, as the command divides
    return {"count": len(tensors), "bytes": sum(t["bytes"] for t in tensors), "stored_bytes": stored,
            "raw_bytes": raw, "compressed": compressed, "compression_ratio": ratio,
            "largest": [dict(tensors[i]) for i in largest], "tensors": tensors}


def _c_quotient(a, b):
    """a / b as C divides integers: rounded toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_remainder(a, b):
    """a % b as C computes it: the sign of a."""
    return a - b * _c_quotient(a, b)


def _dim_first(d):
    """The smallest size of dim `d` that is a multiple of its multiple_of."""
    r = _c_remainder(d.min, d.multiple_of)
    return d.min if r == 0 else d.min + (d.multiple_of - r)


def _dim_last(d):
    return d.max - _c_remainder(d.max, d.multiple_of)


def _arena_at(program, name, size):
    """The arena of a session with dim `name` at `size` (the others over their range), however large:
    (ok, bytes), bytes UINT64_MAX when a size overflows."""
    options = _lib.init(_lib.SessionOptions)
    bound = (_lib.DimBound * 1)(_lib.DimBound(name, size, size))
    options.dims = ctypes.cast(bound, ctypes.POINTER(_lib.DimBound))
    options.dim_count = 1
    options.max_arena_bytes = _UINT64_MAX
    value, error = ctypes.c_uint64(), _lib.Error()
    status = _lib.kiln.kiln_program_session_arena(program, ctypes.byref(options), ctypes.byref(value),
                                                  ctypes.byref(error))
    return status in (0, _LIMIT), value.value


def _growth(program, d):
    """How the arena grows with dim `d` (the others at their largest): at its first, middle and last
    size, and the degree of the growth between the last two; None where a session cannot be planned."""
    first, last = _dim_first(d), _dim_last(d)
    middle = first + _c_quotient(last - first, 2)
    middle = max(middle - _c_remainder(middle, d.multiple_of), first)  # the largest multiple at most it
    at = (first, middle, last)
    sizes = []
    for size in at:
        ok, value = _arena_at(program, d.name, size)
        if not ok:
            return None
        sizes.append(value)
    degree = None
    if at[1] > 0 and at[2] > at[1] and sizes[1] > 0 and sizes[2] != _UINT64_MAX:
        # In doubles, as the command computes it: int / int would round differently past 2^53.
        ratio = float(sizes[2]) / float(sizes[1])
        degree = math.log(ratio) / math.log(float(at[2]) / float(at[1])) if ratio > 0 else None
        degree = float("%.2f" % degree) if degree is not None and math.isfinite(degree) else None
    out = {"dim": d.name.decode()}
    for key, size, value in zip(("min", "mid", "max"), at, sizes):
        out[key] = size
        out["arena_at_%s_bytes" % key] = _bytes_or_none(value)
    out["degree"] = degree
    return out


def _memory_plan(program):
    kiln = _lib.kiln
    dims = _dim_infos(program)
    value, error = ctypes.c_uint64(), _lib.Error()
    fits = kiln.kiln_program_session_arena(program, None, ctypes.byref(value), ctypes.byref(error)) == 0
    out = {"stored": kiln.kiln_program_memory_plan_stored(program),
           "arena_bytes": _bytes_or_none(kiln.kiln_program_arena_bytes(program)),
           "intermediate_bytes": _bytes_or_none(kiln.kiln_program_intermediate_bytes(program)),
           "intermediate_count": kiln.kiln_program_node_count(program),
           "upper_bound": {d.name.decode(): _dim_last(d) for d in dims},
           "default_limit_bytes": _lib.init(_lib.Limits).max_arena_bytes,
           "fits_default_limit": fits}
    if not fits:
        out["narrowing_needed"] = error.message.decode("utf-8", "replace")
    growth = []
    for d in dims:
        entry = _growth(program, d)
        if entry is None:  # the command stops the list there too
            break
        growth.append(entry)
    out["growth"] = growth
    return out


def _evidence(program):
    kiln = _lib.kiln
    out = []
    for c in range(kiln.kiln_program_evidence_count(program)):
        outputs = []
        for o in range(kiln.kiln_program_evidence_output_count(program, c)):
            name, rule = ctypes.c_char_p(), _lib.CompareRule()
            kiln.kiln_program_evidence_output(program, c, o, ctypes.byref(name), ctypes.byref(rule))
            outputs.append({"name": name.value.decode(),
                            "rule": {"kind": "exact" if rule.kind == _COMPARE_EXACT else "tolerance",
                                     "atol": _number(rule.atol), "rtol": _number(rule.rtol),
                                     "nan_equal": rule.nan_equal}})
        out.append({"name": kiln.kiln_program_evidence_name(program, c).decode(), "outputs": outputs})
    return out


def _relations(program):
    """A method's relations across its dims, as text ("past + seq <= 2048")."""
    kiln, out = _lib.kiln, []
    for i in range(kiln.kiln_program_relation_count(program)):
        text, error = ctypes.create_string_buffer(1024), _lib.Error()
        if kiln.kiln_program_relation(program, i, text, len(text), ctypes.byref(error)) == 0:
            out.append(text.value.decode())
    return out


def _states(program):
    """The program's state tensors: name, dtype, capacity shape, growing axis, length dim."""
    kiln, out = _lib.kiln, []
    for i in range(kiln.kiln_program_state_count(program)):
        name, length_dim = ctypes.c_char_p(), ctypes.c_char_p()
        dtype, rank, axis = ctypes.c_int(), ctypes.c_uint32(), ctypes.c_uint32()
        shape, error = ctypes.POINTER(ctypes.c_int64)(), _lib.Error()
        if kiln.kiln_program_state_at(program, i, ctypes.byref(name), ctypes.byref(dtype), ctypes.byref(rank),
                                      ctypes.byref(shape), ctypes.byref(axis), ctypes.byref(length_dim),
                                      ctypes.byref(error)) != 0:
            continue
        out.append({"name": name.value.decode(), "dtype": kiln.kiln_dtype_name(dtype.value).decode(),
                    "shape": [shape[a] for a in range(rank.value)], "axis": axis.value,
                    "length_dim": length_dim.value.decode()})
    return out


def _program(handle, root, program):
    """Everything a program this runtime loaded shows: the artifact's name, mode and metadata (of
    `root`), method `program`'s own members, the methods' names."""
    kiln = _lib.kiln
    metadata = {}
    for i in range(kiln.kiln_program_metadata_count(program)):
        key, value = ctypes.c_char_p(), ctypes.c_char_p()
        kiln.kiln_program_metadata(program, i, ctypes.byref(key), ctypes.byref(value))
        metadata[key.value.decode()] = value.value.decode()
    dims, derived = _dims(program)
    nodes = kiln.kiln_program_node_count(program)
    return {"name": kiln.kiln_program_name(program).decode(),
            "mode": "inference" if kiln.kiln_program_mode(program) == _MODE_INFERENCE else "training",
            "metadata": metadata, "inputs": _io(program, False), "outputs": _io(program, True),
            "dims": dims, "derived_dims": derived, "relations": _relations(program),
            "semantic_checks": _semantic_checks(program),
            "strict": kiln.kiln_program_is_strict(program), "runtime_guards": _runtime_guards(program),
            "node_count": nodes,
            "named_node_count": sum(kiln.kiln_program_node_name(program, n) is not None for n in range(nodes)),
            "ops": _ops(program), "weights": _weights(handle, program), "memory_plan": _memory_plan(program),
            "evidence": _evidence(program), "states": _states(root), "generation": generation_cases_of(root),
            "method": kiln.kiln_program_method_name(program).decode(),
            "methods": [kiln.kiln_program_method_name(kiln.kiln_program_method_at(root, m)).decode()
                        for m in range(kiln.kiln_program_method_count(root))]}
