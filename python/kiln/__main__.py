"""`python -m kiln ARGS` and the `kiln` console script of a pip-installed kiln
(pyproject.toml, [project.scripts]): the kiln command of this package run with
ARGS: KILN_BINARY if set, else the one meson built or installed with the
package (in a wheel, kiln/_native/kiln).

The process becomes the command (os.execv), so its exit status, its signals
and its standard streams are the command's own: 0 success, 1 a check or run
failed, 2 a usage error (README, "The command line").
"""
import os
import sys

from . import _paths

# What a shell answers for a command it cannot find: no status of the kiln
# command itself means this.
COMMAND_NOT_FOUND = 127


def kiln_binary():
    """The kiln command of this package: KILN_BINARY if set, else the one meson built or installed with it."""
    return os.environ.get("KILN_BINARY") or _paths.KILN_BINARY


def main(argv=None):
    """Replace this process by `kiln ARGV...` (default: sys.argv[1:]); return 127 if there is no kiln command."""
    args = sys.argv[1:] if argv is None else list(argv)
    binary = kiln_binary()
    if not os.access(binary, os.X_OK):
        sys.stderr.write("kiln: error: the kiln command is not at '%s' (set KILN_BINARY)\n" % binary)
        return COMMAND_NOT_FOUND
    # Whatever Python buffered would be lost with its process.
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(binary, ["kiln"] + args)


if __name__ == "__main__":
    sys.exit(main())
