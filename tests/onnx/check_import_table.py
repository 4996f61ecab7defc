#!/usr/bin/env python3
"""check_import_table.py — spec/onnx-import.md's mapping table against the importer's.

Usage: check_import_table.py DUMP_OP_TABLE SPEC_ONNX_IMPORT_MD

DUMP_OP_TABLE (tests/onnx/dump_op_table.c) prints the importer's mapping
table, one "row OP ..." line per ONNX op it maps, wherever in onnx/ the
table lives. The spec's table (the one headed "| ONNX | kiln |") names the
ONNX ops in its first column: every word there that starts with a capital
letter, outside parentheses ("Mish (opset 18+)", "Mul(x, Sigmoid(x))"
name Mish and Mul). The two sets must be equal: an op the importer maps
that the spec does not describe, or one the spec describes that the
importer does not map, fails, named. A row that names the kiln op it maps
to ("target OP KILN_OP") must name an op of the registry ("kiln_op NAME"),
or the importer would write nodes no kiln runtime runs. Exit 0 when all
holds, 1 otherwise.
"""
import re
import subprocess
import sys


def dump_lines(dump):
    out = subprocess.run([dump], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def importer_ops(lines):
    return {line.split()[1] for line in lines if line.startswith("row ")}


def unregistered_targets(lines):
    registered = {line.split()[1] for line in lines if line.startswith("kiln_op ")}
    if not registered:
        return ["dump_op_table listed no op of the registry"]
    return ["the importer maps %s to %s, which is no op of kiln's registry" % tuple(line.split()[1:3])
            for line in lines if line.startswith("target ") and line.split()[2] not in registered]


def without_parentheses(text):
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


def spec_ops(path):
    text = open(path, encoding="utf-8").read()
    header = "| ONNX | kiln |"
    if header not in text:
        sys.exit("%s has no table headed %r: this check must follow the spec" % (path, header))
    lines = text[text.index(header):].splitlines()[2:]  # past the header and its |---|---| line
    names = set()
    for line in lines:
        if not line.startswith("|"):
            break
        names |= set(re.findall(r"\b[A-Z][A-Za-z0-9]*\b", without_parentheses(line.split("|")[1])))
    return names


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    lines = dump_lines(sys.argv[1])
    mapped, described = importer_ops(lines), spec_ops(sys.argv[2])
    problems = unregistered_targets(lines)
    problems += ["the importer maps %s, which the table of %s does not name" % (op, sys.argv[2])
                for op in sorted(mapped - described)]
    problems += ["the table of %s names %s, which the importer does not map" % (sys.argv[2], op)
                 for op in sorted(described - mapped)]
    for problem in problems:
        print(problem)
    if not mapped:
        print("the importer's table is empty")
        return 1
    print("%d ONNX ops: the importer's table and the spec's name the same ones" % len(mapped) if not problems
          else "%d difference(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
