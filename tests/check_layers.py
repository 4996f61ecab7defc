#!/usr/bin/python3
"""check_layers.py — the include rules of lib/README.md and onnx/README.md, checked over the tree.

Usage: check_layers.py SOURCE_ROOT

Each folder of the library is a layer, and so is each folder of the ONNX
importer; a file may include public headers (include/kiln/), its own
layer's headers and those of the layers below it in its own stack (the
library's or the importer's), nothing else. The build enforces most of
this already (a layer compiles with only its own and lower folders on the
include path); this check also refuses what the include path cannot: a
path that reaches around the rule ("lib/...", "../..."), a header name
used by two layers, a folder of sources no layer names, a header of the
importer's state the mappings include (they see it through onnx_node.h
alone), and include circles between modules (a module is a .c file with
its .h), inside a layer as well as across layers. Prints every problem;
exit 1 if any.
"""
import os
import re
import sys

# Lowest first. Layers of one rank are siblings and may not include each other.
LAYERS = [
    ('lib/base', 0), ('format', 1), ('lib/core', 2), ('lib/contract', 3),
    ('lib/ops/record', 4), ('lib/ops/common', 5), ('lib/ops/onednn', 6), ('lib/ops', 7),
    ('lib/model', 8), ('lib/plan', 9), ('lib/program', 10), ('lib/runtime', 11),
    ('lib/artifact', 12), ('lib/text', 12),
]
# The ONNX importer (onnx/README.md), a stack of its own over the public
# headers, lowest first; onnx/ itself holds the public entry points.
ONNX_LAYERS = [
    ('onnx/reading', 0), ('onnx/translation', 1), ('onnx/mappings', 2), ('onnx/walk', 3), ('onnx', 4),
]
# A layer that sees only some headers of a lower one: the mappings reach
# the state of an import through the node services alone.
NARROW = {('onnx/mappings', 'onnx/translation'): {'onnx_node.h'}}
# Generated at build time, included by name by the importer's layers.
ONNX_GENERATED = {'onnx.pb-c.h'}
# Above the library: public headers and their own folder only.
CLIENTS = ['tools', 'tools/onnx', 'examples', 'python']
# Every folder under these with .c or .h files must be a layer above.
STACK_ROOTS = ['format', 'lib', 'onnx']
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    # folder -> (stack, rank): a layer sees lower ranks of its own stack only.
    layer_of = {f: ('lib', r) for f, r in LAYERS}
    layer_of.update({f: ('onnx', r) for f, r in ONNX_LAYERS})

    def stack_of(folder):
        return layer_of[folder][0] if folder in layer_of else None

    problems = []
    for top in STACK_ROOTS:
        for path, _, names in sorted(os.walk(os.path.join(root, top))):
            folder = os.path.relpath(path, root)
            if folder not in layer_of and any(n.endswith(('.c', '.h')) for n in names):
                problems.append('%s holds sources but is no layer (tests/check_layers.py LAYERS, ONNX_LAYERS)'
                                % folder)
    files = {}  # relative path -> folder
    for folder in list(layer_of) + CLIENTS + ['include/kiln']:
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith(('.c', '.h')):
                files[folder + '/' + name] = folder
    # Bare header names resolve across the layers, so each must be unique:
    # across both stacks, since tests/fuzz/run.sh compiles the importer with
    # every folder of lib/ and onnx/ on one include path.
    layer_headers = {}
    for rel, folder in files.items():
        if folder in layer_of and folder != 'format' and rel.endswith('.h'):
            base = os.path.basename(rel)
            if base in layer_headers:
                problems.append('header name %s is used by %s and %s' % (base, layer_headers[base], rel))
            layer_headers[base] = rel

    def resolve(source, folder, bracket, target):
        if bracket == '<':
            return 'include/' + target if target.startswith('kiln/') else None
        if target.startswith('format/'):
            return target
        if '/' in target:
            return '?' + target
        own = folder + '/' + target
        if own in files:
            return own
        return layer_headers.get(target, '?' + target)

    edges = {}
    for rel, folder in sorted(files.items()):
        with open(os.path.join(root, rel), encoding='utf-8') as handle:
            text = handle.read()
        for bracket, target in INCLUDE_RE.findall(text):
            dest = resolve(rel, folder, bracket, target)
            if dest is None:
                continue  # a system header
            if dest.startswith('?'):
                generated = target in ONNX_GENERATED and stack_of(folder) == 'onnx'
                if (folder in layer_of and not generated) or folder == 'include/kiln':
                    problems.append('%s includes "%s", which is no header of its layer or a lower one'
                                    % (rel, target))
                continue
            dest_folder = files.get(dest)
            if dest_folder is None:
                continue
            if not allowed(folder, dest_folder, layer_of):
                rule = 'onnx/README.md' if stack_of(folder) == 'onnx' else 'lib/README.md'
                problems.append('%s includes %s: %s may not include %s (%s)'
                                % (rel, dest, folder, dest_folder, rule))
            narrow = NARROW.get((folder, dest_folder))
            if narrow is not None and os.path.basename(dest) not in narrow:
                problems.append('%s includes %s: %s sees only %s of %s (onnx/README.md)'
                                % (rel, dest, folder, ', '.join(sorted(narrow)), dest_folder))
            edges.setdefault(module(rel), set()).add(module(dest))
    for circle in circles(edges):
        problems.append('include circle: ' + ' -> '.join(circle + [circle[0]]))
    for p in problems:
        print('check_layers: ' + p)
    print('check_layers: %d files, %d problems' % (len(files), len(problems)))
    return 1 if problems else 0


def allowed(folder, dest_folder, layer_of):
    if dest_folder == 'include/kiln' or dest_folder == folder:
        return True
    if folder in layer_of:
        if dest_folder not in layer_of:
            return False
        (stack, rank), (dest_stack, dest_rank) = layer_of[folder], layer_of[dest_folder]
        return stack == dest_stack and dest_rank < rank
    if folder == 'include/kiln':
        return False
    return folder == 'tools' and dest_folder == 'tools/onnx'


def module(rel):
    return rel[:-2]


def circles(edges):
    """Strongly connected components of more than one module (Tarjan), each as a path."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


if __name__ == '__main__':
    sys.exit(main())
