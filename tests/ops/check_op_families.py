#!/usr/bin/env python3
"""check_op_families.py — the op families as the sources, the registry and the spec name them.

Usage: check_op_families.py SOURCE_ROOT

An op family is a table `const kiln_op_family kiln_ops_NAME = ...` in a
file of lib/ops/. The registry serves the families listed in
lib/ops/op_registry.c's `families[]`, declared in lib/ops/op_registry.h;
spec/opset.md's "Families" table gives each family's page and source
file. This checks that they agree, naming each difference:

- every family defined in lib/ops/ is in `families[]` once (a table left
  out compiles and links, and its ops are silently not registered) and
  declared extern in op_registry.h, and those name no other;
- the first source file of each row of spec/opset.md's table is a file
  that defines a family, each such file has a row, and each row's page
  exists (or is "this page") and is the page the family's record names
  (`KILN_OP_FAMILY(ops, "spec/ops/PAGE.md")`; test_op_registry checks
  every op is named on that page);
- every page of spec/ops/ is some row's page.

(That lib/meson.build compiles each family's file is checked by the build:
op_registry.c's reference to a table it does not compile does not link.)
Exit 0 when they agree, 1 otherwise.
"""
import glob
import os
import re
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    problems = []

    defined = {}  # symbol -> file defining it, relative to root
    declared_page = {}  # file defining a family -> the family record's spec page
    for path in sorted(glob.glob(os.path.join(root, "lib", "ops", "**", "*.c"), recursive=True)):
        text = open(path, encoding="utf-8").read()
        relative = os.path.relpath(path, root)
        for symbol, page in re.findall(r'^const kiln_op_family (kiln_ops_\w+)\s*=\s*KILN_OP_FAMILY\(\w+,\s*"([^"]*)"\)',
                                       text, re.M):
            defined[symbol] = relative
            declared_page[relative] = page
        for symbol in re.findall(r"^const kiln_op_family (kiln_ops_\w+)\s*=", text, re.M):
            if symbol not in defined:
                problems.append("%s defines %s without KILN_OP_FAMILY(ops, \"spec page\"): this check must follow it"
                                % (relative, symbol))
    if not defined:
        problems.append("no op family is defined in lib/ops/ (const kiln_op_family kiln_ops_NAME = ...)")

    registry_text = open(os.path.join(root, "lib", "ops", "op_registry.c"), encoding="utf-8").read()
    block = re.search(r"families\[\]\s*=\s*\{(.*?)\};", registry_text, re.S)
    listed = re.findall(r"&(kiln_ops_\w+)", block.group(1)) if block else []
    if not block:
        problems.append("lib/ops/op_registry.c has no families[] = {...}: this check must follow it")
    for symbol in sorted(set(listed)):
        if listed.count(symbol) > 1:
            problems.append("op_registry.c's families[] lists %s %d times" % (symbol, listed.count(symbol)))
    for symbol in sorted(set(defined) - set(listed)):
        problems.append("%s defines %s, which op_registry.c's families[] does not list: its ops are not registered"
                        % (defined[symbol], symbol))
    for symbol in sorted(set(listed) - set(defined)):
        problems.append("op_registry.c's families[] lists %s, which no file of lib/ops/ defines" % symbol)

    header = open(os.path.join(root, "lib", "ops", "op_registry.h"), encoding="utf-8").read()
    declared = set(re.findall(r"^extern const kiln_op_family (kiln_ops_\w+);", header, re.M))
    for symbol in sorted(set(defined) - declared):
        problems.append("op_registry.h does not declare %s (defined in %s)" % (symbol, defined[symbol]))
    for symbol in sorted(declared - set(defined)):
        problems.append("op_registry.h declares %s, which no file of lib/ops/ defines" % symbol)

    opset = open(os.path.join(root, "spec", "opset.md"), encoding="utf-8").read()
    table_header = "| family | page | source |"
    rows = []
    if table_header in opset:
        for line in opset[opset.index(table_header):].splitlines()[2:]:
            if not line.startswith("|"):
                break
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) == 3:
                rows.append(cells)
    else:
        problems.append("spec/opset.md has no table headed %r: this check must follow it" % table_header)
    family_files = set(defined.values())
    row_files = []
    pages = set()
    for family, page, source in rows:
        first = source.split(",")[0].strip()
        row_files.append(first)
        if first not in family_files:
            problems.append("spec/opset.md's family %r names %s, which defines no op family" % (family, first))
        if page != "this page":
            pages.add(page)
            if not os.path.isfile(os.path.join(root, page)):
                problems.append("spec/opset.md's family %r names the page %s, which does not exist" % (family, page))
        record_page = declared_page.get(first)
        row_page = "spec/opset.md" if page == "this page" else page
        if record_page is not None and record_page != row_page:
            problems.append("spec/opset.md's family %r has the page %s, but %s's KILN_OP_FAMILY says %s"
                            % (family, row_page, first, record_page))
    for path in sorted(family_files - set(row_files)):
        problems.append("%s defines an op family that spec/opset.md's table of families has no row for" % path)
    for path in sorted(set(row_files)):
        if row_files.count(path) > 1:
            problems.append("spec/opset.md's table of families has %d rows for %s" % (row_files.count(path), path))
    for path in sorted(glob.glob(os.path.join(root, "spec", "ops", "*.md"))):
        page = os.path.relpath(path, root)
        if page not in pages:
            problems.append("%s is the page of no family in spec/opset.md's table" % page)

    for problem in problems:
        print(problem)
    if problems:
        print("%d difference(s)" % len(problems))
        return 1
    print("%d op families: lib/ops/, op_registry.c, op_registry.h and spec/opset.md agree" % len(defined))
    return 0


if __name__ == "__main__":
    sys.exit(main())
