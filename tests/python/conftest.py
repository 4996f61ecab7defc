"""Fixtures of the Python package's tests: the package from the build tree
(meson sets PYTHONPATH), the kiln command it was built with, the source tree,
the seed's Scale module and a small MLP with weights."""
import os
import subprocess

import pytest

torch = pytest.importorskip("torch")
import numpy  # noqa: E402

import kiln  # noqa: E402

SOURCE_ROOT = os.environ.get("KILN_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))


class Scale(torch.nn.Module):
    """The seed's module: y = 2x + 1."""

    def forward(self, x):
        return 2 * x + 1


class MLP(torch.nn.Module):
    """8 -> 16 -> ReLU -> 4, its weights drawn from `seed`: the suite's small program with weights."""

    def __init__(self, seed=0):
        super().__init__()
        self.hidden = torch.nn.Linear(8, 16)
        self.out = torch.nn.Linear(16, 4)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for parameter in self.parameters():
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


def mlp_batch():
    return kiln.Dim("batch", min=1, max=16)


def mlp_example(batch=3):
    """An input of the MLP: the same values every time."""
    return torch.randn(batch, 8, generator=torch.Generator().manual_seed(1))


def export_mlp(seed=0, **options):
    """The MLP of `seed`, exported with a dynamic batch 1..16 at an example of batch 3."""
    return kiln.export(MLP(seed), (mlp_example(),), dynamic_shapes={"x": {0: mlp_batch()}}, **options)


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
def mlp_artifact():
    return export_mlp()


@pytest.fixture
def mlp_path(tmp_path, mlp_artifact):
    path = tmp_path / "mlp.kiln"
    mlp_artifact.save(path)
    return path


@pytest.fixture
def kiln_binary():
    """The kiln command: KILN_BINARY (meson sets it), else the one the package was built with."""
    from kiln.__main__ import kiln_binary as package_binary
    binary = package_binary()
    if not os.path.exists(binary):
        pytest.skip("the kiln command is not at '%s' (set KILN_BINARY)" % binary)
    return binary


@pytest.fixture
def run_kiln(kiln_binary):
    """run_kiln(VERB, ARGS...): the finished `kiln` process, its output as text."""
    def run(*args):
        return subprocess.run([kiln_binary] + [os.fspath(a) for a in args], capture_output=True, text=True)
    return run


@pytest.fixture
def source_root():
    return SOURCE_ROOT


__all__ = ["MLP", "Scale", "export_mlp", "mlp_batch", "mlp_example", "numpy"]
