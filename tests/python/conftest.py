"""Fixtures of the Python package's tests: the package from the build tree
(meson sets PYTHONPATH), the kiln command it was built with, the source tree,
and the seed's Scale module.

In a sanitizer build (KILN_SANITIZED=1) the instrumented library runs in an
uninstrumented interpreter with the ASan runtime preloaded. PyTorch's JIT
tracer aborts under that runtime, so there kiln.export skips the test that
calls it, and the seed artifact is assembled from text by the kiln command
instead: every test that needs no export (loading, running, sessions,
errors, keys, zero copy, threads) still runs the library under ASan+UBSan.
"""
import os
import subprocess

import pytest

torch = pytest.importorskip("torch")
import numpy  # noqa: E402

import kiln  # noqa: E402

SOURCE_ROOT = os.environ.get("KILN_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
SANITIZED = os.environ.get("KILN_SANITIZED") == "1"

# The seed program with its check, as text: what kiln.export makes of Scale, bar the evidence.
SCALE_TEXT = """kiln 1.0
program "Scale"
dim batch in 2..4
input x: f64[batch, 2]
check x: range -1000000.0..1000000.0, finite
const two: f64[] = 2
const one: f64[] = 1
%0 = mul(x, two)
%1 = add(%0, one)
output y = %1
"""

if SANITIZED:
    def _export_skips(*args, **kwargs):
        pytest.skip("kiln.export runs PyTorch's JIT tracer, which aborts under the preloaded ASan runtime; "
                    "the plain build runs this test")

    kiln.export = _export_skips


class Scale(torch.nn.Module):
    """The seed's module: y = 2x + 1."""

    def forward(self, x):
        return 2 * x + 1


@pytest.fixture
def scale_artifact(tmp_path):
    if SANITIZED:
        text = tmp_path / "scale.ktxt"
        text.write_text(SCALE_TEXT)
        subprocess.run([os.environ["KILN_BINARY"], "asm", str(text), "-o", str(tmp_path / "asm.kiln")], check=True,
                       capture_output=True)
        return kiln.Artifact((tmp_path / "asm.kiln").read_bytes(), [])
    batch = kiln.Dim("batch", min=2, max=4)
    return kiln.export(Scale(), (torch.ones(2, 2, dtype=torch.float64),), dynamic_shapes={"x": {0: batch}},
                       checks={"x": kiln.Check(range=(-1e6, 1e6), finite=True)})


@pytest.fixture
def scale_path(tmp_path, scale_artifact):
    path = tmp_path / "scale.kiln"
    scale_artifact.save(path)
    return path


@pytest.fixture
def kiln_binary():
    return os.environ.get("KILN_BINARY", "kiln")


@pytest.fixture
def source_root():
    return SOURCE_ROOT


__all__ = ["Scale", "numpy"]
