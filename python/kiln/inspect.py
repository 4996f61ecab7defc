"""`kiln inspect --json` from Python: the same data, through the same code (the kiln command)."""
import json
import os
import subprocess
import tempfile

from . import _paths
from .errors import Error, FileError


def kiln_binary():
    """The kiln command of this package: KILN_BINARY if set, else the one meson built or installed with it."""
    return os.environ.get("KILN_BINARY") or _paths.KILN_BINARY


def inspect_path(path):
    """The parsed output of `kiln inspect --json PATH` (spec/inspect-json.md), also for a file that
    cannot be read (missing, damaged: the command exits 1 with "readable" false and a "message")."""
    binary = kiln_binary()
    if not os.path.exists(binary):
        raise FileError("the kiln command is not at '%s' (set KILN_BINARY)" % binary, 3)
    done = subprocess.run([binary, "inspect", "--json", os.fspath(path)], capture_output=True, text=True)
    if done.returncode in (0, 1) and done.stdout.strip():
        return json.loads(done.stdout)
    raise Error(done.stderr.strip() or "kiln inspect exited %d" % done.returncode, 0)


def inspect_program(program):
    """inspect_path for a loaded program: its file, or its bytes written to a temporary file first."""
    if program.origin != "<memory>":
        return inspect_path(program.origin)
    data = getattr(program, "_bytes", None)
    if data is None:
        raise Error("this program was loaded from memory without keeping its bytes: inspect the artifact", 0)
    with tempfile.TemporaryDirectory(prefix="kiln-inspect-") as directory:
        path = os.path.join(directory, "program.kiln")
        with open(path, "wb") as f:
            f.write(data)
        result = inspect_path(path)
        result["file"] = "<memory>"
        return result
