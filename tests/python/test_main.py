"""`python -m kiln ARGS` (python/kiln/__main__.py, also the `kiln` console
script of the wheel) is the kiln command the package finds: its output and
its exit statuses pass through, and a missing command is named, with the
status a shell gives a command it cannot find. tests/api/pip_install.sh
runs the same from a pip-installed wheel."""
import os
import subprocess
import sys

import kiln


def python_m_kiln(*args, env=None):
    return subprocess.run([sys.executable, "-m", "kiln"] + [os.fspath(a) for a in args],
                          capture_output=True, text=True, env=env)


def test_version_is_the_command_s(kiln_binary):
    done = python_m_kiln("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "kiln " + kiln.__version__


def test_inspect_and_its_exit_statuses(kiln_binary, scale_path, tmp_path):
    done = python_m_kiln("inspect", scale_path)
    assert done.returncode == 0, done.stderr
    assert "batch" in done.stdout and "2..4" in done.stdout
    assert python_m_kiln("inspect", tmp_path / "missing.kiln").returncode == 1   # the input was rejected
    usage = python_m_kiln("no-such-verb")
    assert usage.returncode == 2 and "kiln: error:" in usage.stderr


def test_a_missing_command_is_named(tmp_path):
    missing = tmp_path / "no-kiln-here"
    done = python_m_kiln("--version", env=dict(os.environ, KILN_BINARY=os.fspath(missing)))
    assert done.returncode == 127
    assert done.stderr == "kiln: error: the kiln command is not at '%s' (set KILN_BINARY)\n" % missing
