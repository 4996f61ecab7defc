#!/usr/bin/python3
"""check_layers.py — the include rule of lib/README.md, checked over the tree.

Usage: check_layers.py SOURCE_ROOT

Each folder of the library is a layer; a file may include public headers
(include/kiln/), its own layer's headers and those of the layers below it,
nothing else. The build enforces most of this already (a layer compiles
with only its own and lower folders on the include path); this check also
refuses what the include path cannot: a path that reaches around the rule
("lib/...", "../..."), a header name used by two layers, and include
circles between modules (a module is a .c file with its .h), inside a
layer as well as across layers. Prints every problem; exit 1 if any.
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
# Above the library: public headers and their own folder only.
CLIENTS = ['onnx', 'tools', 'tools/onnx', 'examples', 'python']
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    layer_of = dict(LAYERS)
    files = {}  # relative path -> folder
    for folder in [f for f, _ in LAYERS] + CLIENTS + ['include/kiln']:
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith(('.c', '.h')):
                files[folder + '/' + name] = folder
    problems = []
    # Bare header names resolve across the library's layers, so each must be unique.
    lib_headers = {}
    for rel, folder in files.items():
        if folder in layer_of and folder != 'format' and rel.endswith('.h'):
            base = os.path.basename(rel)
            if base in lib_headers:
                problems.append('header name %s is used by %s and %s' % (base, lib_headers[base], rel))
            lib_headers[base] = rel

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
        return lib_headers.get(target, '?' + target)

    edges = {}
    for rel, folder in sorted(files.items()):
        with open(os.path.join(root, rel), encoding='utf-8') as handle:
            text = handle.read()
        for bracket, target in INCLUDE_RE.findall(text):
            dest = resolve(rel, folder, bracket, target)
            if dest is None:
                continue  # a system header
            if dest.startswith('?'):
                if folder in layer_of or folder == 'include/kiln':
                    problems.append('%s includes "%s", which is no header of its layer or a lower one'
                                    % (rel, target))
                continue  # clients may include generated headers (onnx.pb-c.h)
            dest_folder = files.get(dest)
            if dest_folder is None:
                continue
            if not allowed(folder, dest_folder, layer_of):
                problems.append('%s includes %s: %s may not include %s (lib/README.md)'
                                % (rel, dest, folder, dest_folder))
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
        return layer_of[dest_folder] < layer_of[folder]
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
