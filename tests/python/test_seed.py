"""The seed example from Python: saved, loaded and run as the seed says, the
boundaries of its domain, and every refusal with the C library's message."""
import numpy
import pytest

import kiln


def test_seed_example(scale_path):
    program = kiln.load(scale_path)
    out = program.run(x=numpy.ones((3, 2)))
    assert tuple(out["y"].shape) == (3, 2)
    assert out["y"][0].tolist() == [3.0, 3.0]
    with pytest.raises(kiln.ContractError) as refused:
        program.run(x=numpy.ones((5, 2)))
    assert str(refused.value) == "input 'x' axis 0 (batch): 5 is outside 2..4"
    assert refused.value.status_name == "KILN_ERR_SHAPE_GUARD"


@pytest.mark.parametrize("batch", [2, 4])
def test_boundaries_are_accepted(scale_path, batch):
    program = kiln.load(scale_path)
    (y,) = program(numpy.full((batch, 2), 0.5))
    assert y.shape == (batch, 2)
    assert (y == 2.0).all()


@pytest.mark.parametrize("shape, message", [
    ((1, 2), "input 'x' axis 0 (batch): 1 is outside 2..4"),
    ((5, 2), "input 'x' axis 0 (batch): 5 is outside 2..4"),
    ((3, 3), "input 'x' axis 1: 3 is not the declared size 2"),
])
def test_sizes_outside_the_contract_are_refused(scale_path, shape, message):
    with pytest.raises(kiln.ContractError, match="^%s$" % message.replace("(", r"\(").replace(")", r"\)")):
        kiln.load(scale_path).run(x=numpy.ones(shape))


def test_float32_is_refused_not_converted(scale_path):
    with pytest.raises(kiln.ContractError) as refused:
        kiln.load(scale_path).run(x=numpy.ones((3, 2), dtype=numpy.float32))
    assert str(refused.value) == "input 'x': dtype f32 does not match the declared f64"


def test_semantic_checks_travel_with_the_artifact(scale_path):
    program = kiln.load(scale_path)
    assert program.checks == {"x": kiln.Check(range=(-1e6, 1e6), finite=True)}
    with pytest.raises(kiln.InputCheckError) as refused:
        program.run(x=numpy.array([[1.0, numpy.nan], [0.0, 0.0]]))
    assert "input 'x' element [0, 1]: nan is not finite" in str(refused.value)
    assert isinstance(refused.value, kiln.ContractError)
