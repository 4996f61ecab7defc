#!/usr/bin/python3
"""coverage_report.py — executed lines per layer folder, from gcc's gcov.

Usage: coverage_report.py BUILD_DIR

Reads every object's notes (.gcno) under BUILD_DIR with `gcov
--json-format --stdout`, with its counters (.gcda) where the tests wrote
them (a file no test reached counts as not executed), and prints, per folder of kiln's C code, the lines the tests executed out of
the executable ones (in .c files; a line compiled into several objects
counts once, as executed if any object ran it). The text layer comes first.
"""
import json
import os
import subprocess
import sys

# Reported in this order: the text layer first, then the library bottom up.
FOLDERS = ['lib/text', 'lib/base', 'format', 'lib/core', 'lib/contract', 'lib/ops', 'lib/model', 'lib/plan',
           'lib/program', 'lib/runtime', 'lib/artifact', 'onnx', 'tools']


def folder_of(rel):
    best = None
    for folder in FOLDERS:
        if rel.startswith(folder + '/') and (best is None or len(folder) > len(best)):
            best = folder
    return best


def main():
    build = os.path.abspath(sys.argv[1])
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    lines = {}  # (source file, line) -> executed
    for folder, _, names in os.walk(build):
        for name in names:
            if not name.endswith('.gcno'):
                continue
            out = subprocess.run(['gcov', '--json-format', '--stdout', os.path.join(folder, name)], cwd=build,
                                 capture_output=True, check=False).stdout  # stderr: 'assuming not executed'
            for document in out.decode('utf-8', 'replace').splitlines():
                if not document.strip():
                    continue
                for entry in json.loads(document).get('files', []):
                    path = os.path.normpath(os.path.join(build, entry['file']))
                    rel = os.path.relpath(path, root)
                    if not rel.endswith('.c') or folder_of(rel) is None:
                        continue
                    for line in entry['lines']:
                        key = (rel, line['line_number'])
                        lines[key] = lines.get(key, False) or line['count'] > 0
    if not lines:
        print('coverage: no counters under %s (build with -Db_coverage=true and run the tests)' % build)
        return 1
    print('%-14s %9s %9s %7s' % ('folder', 'executed', 'lines', 'cover'))
    total_run = total = 0
    for folder in FOLDERS:
        keys = [k for k in lines if folder_of(k[0]) == folder]
        run = sum(1 for k in keys if lines[k])
        total_run, total = total_run + run, total + len(keys)
        if keys:
            print('%-14s %9d %9d %6.1f%%' % (folder, run, len(keys), 100.0 * run / len(keys)))
    print('%-14s %9d %9d %6.1f%%' % ('all', total_run, total, 100.0 * total_run / total))
    return 0


if __name__ == '__main__':
    sys.exit(main())
