#!/usr/bin/python3
"""check_whitespace.py — the whitespace rules of .editorconfig, over the tree.

Usage: check_whitespace.py SOURCE_ROOT

Every tracked text file: LF line ends, a final newline, no trailing spaces
(Markdown aside, where two of them break a line); C, Python and meson files
indent with spaces, never tabs. Only files git tracks are read, so what a
user keeps untracked in the checkout cannot fail the test (a checkout without
git is walked, its build and venv folders skipped). Prints every problem;
exit 1 if any.
"""
import os
import subprocess
import sys

TEXT = ('.c', '.h', '.py', '.sh', '.md', '.ktxt', '.toml', '.txt', '.in', '.1', '.proto')
NAMED = ('meson.build', 'meson_options.txt', '.clang-format', '.editorconfig', '.gitignore')
NO_TABS = ('.c', '.h', '.py', 'meson.build', 'meson_options.txt')
SKIPPED_FOLDERS = ('build', '.venv', 'v', '.git', '__pycache__')


def tracked_files(root):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z'], check=True, capture_output=True).stdout
        return [name for name in out.decode('utf-8').split('\0') if name]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [s for s in subfolders if not s.startswith(SKIPPED_FOLDERS)]
            found += [os.path.relpath(os.path.join(folder, n), root) for n in names]
        return found


def problems_of(rel, data):
    problems = []
    if b'\r' in data:
        problems.append('%s: has CR line ends (use LF)' % rel)
    if data and not data.endswith(b'\n'):
        problems.append('%s: does not end with a newline' % rel)
    base = os.path.basename(rel)
    check_trailing = not rel.endswith('.md')
    check_tabs = rel.endswith(NO_TABS) or base in NO_TABS
    for number, line in enumerate(data.split(b'\n'), 1):
        if check_trailing and line.rstrip(b' \t\r') != line.rstrip(b'\r'):
            problems.append('%s:%d: trailing whitespace' % (rel, number))
        if check_tabs and line[:len(line) - len(line.lstrip(b' \t'))].count(b'\t'):
            problems.append('%s:%d: indented with a tab (4 spaces; .editorconfig)' % (rel, number))
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    problems, checked = [], 0
    for rel in sorted(tracked_files(root)):
        if not (rel.endswith(TEXT) or os.path.basename(rel) in NAMED):
            continue
        if rel.startswith(('tests/golden/', 'tests/golden-', 'tests/fuzz/corpus/', 'tests/fuzz/crashers/')):
            continue  # kept byte for byte: golden files as released, fuzz inputs as found
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue  # deleted in the work tree, not yet committed
        with open(path, 'rb') as handle:
            problems += problems_of(rel, handle.read())
        checked += 1
    for p in problems:
        print('check_whitespace: ' + p)
    print('check_whitespace: %d files, %d problems' % (checked, len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
