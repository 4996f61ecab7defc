"""Fixtures of the Python package's tests: the package from the build tree
(meson sets PYTHONPATH), the kiln command it was built with, the source tree,
and the seed's Scale module."""
import os

import pytest

torch = pytest.importorskip("torch")
import numpy  # noqa: E402

import kiln  # noqa: E402

SOURCE_ROOT = os.environ.get("KILN_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))


class Scale(torch.nn.Module):
    """The seed's module: y = 2x + 1."""

    def forward(self, x):
        return 2 * x + 1


@pytest.fixture
def scale_artifact():
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
    return os.environ.get("KILN_BINARY") or kiln.inspect.__globals__["kiln_binary"]() \
        if False else os.environ.get("KILN_BINARY", "kiln")


@pytest.fixture
def source_root():
    return SOURCE_ROOT


__all__ = ["Scale", "numpy"]
