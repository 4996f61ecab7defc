#!/usr/bin/env python3
"""check_op_versions.py — the importer's mapping table against onnx.defs.

Usage: check_op_versions.py [--max-opset N] DUMP_OP_TABLE

DUMP_OP_TABLE (tests/onnx/dump_op_table.c) prints KILN_ONNX_MAX_OPSET and
each row of onnx/mappings/onnx_op_table.c with the schema versions its mapping
implements. For every row this checks, with the onnx package's schemas:

- the versions the row lists up to KILN_ONNX_MAX_OPSET are exactly the
  since_versions ONNX defines for the op from the row's first opset up to
  min(the row's last opset, KILN_ONNX_MAX_OPSET): a schema change the row
  does not list (the next opset's Cast-19 'saturate', say) fails here,
  instead of the importer computing the older version's meaning under
  the newer one; a version listed above KILN_ONNX_MAX_OPSET (a mapping
  that already reads a later form) must be one ONNX defines;
- in particular, the newest version at or below KILN_ONNX_MAX_OPSET is
  listed (the check the brief of opset 18 asked for, kept apart in the
  message because it is the one a raise of the opset trips);
- a row that says ONNX added the op at opset v > 1 (FROM(v)) is right:
  ONNX defines no version of it below v.

It also prints, for information, the default-domain ops ONNX defines at
or below KILN_ONNX_MAX_OPSET that the table neither maps nor names a
reason for (those are refused as "unsupported op X").

--max-opset N checks the table as if KILN_ONNX_MAX_OPSET were N: what a
raise to N needs, row by row, before making it.

Exit 0 when every row agrees, 1 otherwise, 77 (skipped) when the onnx
package cannot be imported (its version must know KILN_ONNX_MAX_OPSET).
"""
import subprocess
import sys


def main():
    try:
        import onnx.defs
    except ImportError as e:
        print(f"onnx cannot be imported ({e}); skipping")
        return 77
    args = sys.argv[1:]
    pretend = None
    if len(args) == 3 and args[0] == "--max-opset":
        pretend, args = int(args[1]), args[2:]
    if len(args) != 1:
        print(__doc__)
        return 2
    defined = {}  # op -> sorted since_versions of the default domain
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            defined.setdefault(schema.name, set()).add(schema.since_version)
    names = "\n".join(sorted(defined)) + "\n"
    out = subprocess.run([args[0]], input=names, capture_output=True, text=True, check=True).stdout
    max_opset, rows, gaps = None, [], set()
    for line in out.splitlines():
        fields = line.split()
        if fields[0] == "max_opset":
            max_opset = pretend if pretend is not None else int(fields[1])
        elif fields[0] == "row":
            versions = [int(v) for v in fields[5].split(",")] if len(fields) > 5 else []
            rows.append((fields[1], int(fields[2]), int(fields[3]), int(fields[4]), versions))
        elif fields[0] == "gap":
            gaps.add(fields[1])
    if onnx.defs.onnx_opset_version() < max_opset:
        print(f"onnx {onnx.__version__} knows opsets up to {onnx.defs.onnx_opset_version()}, "
              f"below KILN_ONNX_MAX_OPSET {max_opset}; skipping")
        return 77

    problems = []
    for op, first, last, since, versions in rows:
        known = sorted(defined.get(op, ()))
        if not known:
            problems.append(f"{op}: ONNX defines no op of that name")
            continue
        upto = min(last, max_opset)
        # The versions in force over first..upto: the one at `first` and every later change.
        expected = sorted({max(v for v in known if v <= o) for o in range(first, upto + 1) if known[0] <= o})
        listed = [v for v in versions if v <= max_opset]
        if versions != sorted(set(versions)):
            problems.append(f"{op}: versions {versions} are not ascending and distinct")
        newest = expected[-1] if expected else None
        if newest is not None and newest not in listed:
            problems.append(f"{op}: the newest ONNX version at or below opset {max_opset} is {op}-{newest}, "
                            f"and the row knows only {listed}: implement it (onnx/mappings/onnx_op_table.c, "
                            f"spec/onnx-import.md section 4) and list it")
        for v in expected:
            if v != newest and v not in listed:
                problems.append(f"{op}: ONNX defines {op}-{v} within the row's opsets {first}..{upto}, "
                                f"the row does not list it ({listed})")
        for v in listed:
            if v not in expected:
                problems.append(f"{op}: the row lists version {v}, which ONNX does not define within "
                                f"opsets {first}..{upto} (it defines {known})")
        for v in versions:
            if v > max_opset and v not in known:
                problems.append(f"{op}: the row lists version {v}, which ONNX does not define ({known})")
        if since > 1 and known[0] != since:
            problems.append(f"{op}: the row says ONNX adds it at opset {since}; onnx.defs says {known[0]}")
        if since > 1 and first < since:
            problems.append(f"{op}: the row maps opsets from {first}, before ONNX adds the op at {since}")

    mapped = {op for op, *_ in rows}
    def live(op):
        try:
            return not onnx.defs.get_schema(op, max_opset).deprecated
        except onnx.defs.SchemaError:
            return False

    unmapped = sorted(op for op, vs in defined.items()
                      if min(vs) <= max_opset and op not in mapped and op not in gaps and live(op))
    print(f"onnx {onnx.__version__}; KILN_ONNX_MAX_OPSET {max_opset}; {len(rows)} rows checked")
    print(f"default-domain ops at or below opset {max_opset} the table does not map "
          f"({len(unmapped)}, refused as unsupported): {' '.join(unmapped)}")
    for p in problems:
        print("problem:", p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
