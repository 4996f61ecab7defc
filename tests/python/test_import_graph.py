"""The modules of the kiln package import each other without a cycle: parsed with ast, every
import inside the package counts, at module level and inside functions alike (an import moved into
a function to get around a cycle is still the cycle). A cycle fails the test, printed as
`kiln.a -> kiln.b -> kiln.a`."""
import ast
import os

import pytest

from conftest import SOURCE_ROOT

PACKAGE = "kiln"
PACKAGE_DIR = os.path.join(SOURCE_ROOT, "python", PACKAGE)


def module_files(package_dir):
    """{module name: path} of the package's .py files ("kiln" for __init__.py), and of the .py.in
    files meson writes modules from (_paths.py)."""
    out = {}
    for name in sorted(os.listdir(package_dir)):
        for suffix in (".py", ".py.in"):
            if name.endswith(suffix):
                stem = name[:-len(suffix)]
                out[PACKAGE if stem == "__init__" else "%s.%s" % (PACKAGE, stem)] = os.path.join(package_dir, name)
    return out


def imported_modules(module, path, modules):
    """The package's modules that `module` imports anywhere in its file. `from . import x` names
    module x when there is one, else the package itself; importing a submodule does run the
    package's __init__ first, but that edge is Python's, not the module's, and is left out."""
    package = module if module == PACKAGE else module.rsplit(".", 1)[0]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = "%s.%s" % (source, alias.name)
                found.add(submodule if submodule in modules else source)
    return {name for name in found if name in modules and name != module}


def import_graph(package_dir):
    modules = module_files(package_dir)
    return {module: imported_modules(module, path, modules) for module, path in modules.items()}


def find_cycle(graph):
    """One cycle of `graph` as [a, b, ..., a], or None."""
    state = {}  # absent: not seen; 1: on the current path; 2: done

    def visit(node, path):
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target, path)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def test_the_package_has_no_import_cycle():
    graph = import_graph(PACKAGE_DIR)
    assert len(graph) > 10 and graph[PACKAGE], "the package's modules were not found in %s" % PACKAGE_DIR
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_module_shadows_the_standard_library():
    """`kiln.inspect` once was a module: `import inspect` inside the package, or a tool that puts
    the package directory on sys.path, would get it instead of the standard library's."""
    import sys
    shadowing = [m for m in module_files(PACKAGE_DIR) if m.split(".")[-1] in sys.stdlib_module_names]
    assert not shadowing
    assert "inspect" in sys.stdlib_module_names  # what the check above compares with


@pytest.mark.parametrize("files, cycle", [
    ({"__init__.py": "from .a import f\n", "a.py": "def f():\n    from . import b\n", "b.py": "from .a import f\n"},
     ["kiln.a", "kiln.b", "kiln.a"]),
    ({"__init__.py": "", "a.py": "import kiln.b\n", "b.py": "from kiln import c\n", "c.py": "from . import a\n"},
     ["kiln.a", "kiln.b", "kiln.c", "kiln.a"]),
    ({"__init__.py": "from . import a\n", "a.py": "from . import b\n", "b.py": "import os\n"}, None),
])
def test_the_check_finds_a_cycle_hidden_in_a_function(tmp_path, files, cycle):
    """The checker itself, on made-up packages: a cycle through a function-level import is found."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert find_cycle(import_graph(tmp_path)) == cycle
