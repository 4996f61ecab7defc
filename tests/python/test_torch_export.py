"""kiln.export's front door for PyTorch 2 (python/kiln/_torch_export.py, spec/python-export.md):
the seed written with torch.export, the ExportedProgram's range constraints as the contract
(derived dims kept), and a refusal, naming what to fix, for every declaration kiln cannot seal
as declared: a specialized, narrowed or equated dim, an unbounded dim, a dim on no input, a
data-dependent size or branch, and ATen ops the ONNX exporter cannot translate."""
import io

import pytest

from conftest import Scale, numpy, torch

import kiln

Dim = pytest.importorskip("torch.export").Dim


def seed_program():
    batch = Dim("batch", min=2, max=4)
    return torch.export.export(Scale(), (torch.ones(3, 2, dtype=torch.float64),),
                               dynamic_shapes={"x": {0: batch}}, strict=True)


@pytest.fixture(scope="module")
def seed():
    artifact = kiln.export(seed_program(), checks={"x": kiln.Check(range=(-1e6, 1e6), finite=True)})
    return artifact, artifact.load()


def test_the_seed_written_with_torch_export_keeps_its_dim(seed):
    artifact, program = seed
    assert program.dims == [kiln.Dim("batch", min=2, max=4)]
    assert [(i.name, i.dtype) for i in program.inputs] == [("x", numpy.float64)]
    # Evidence at the example (batch 3) and the domain's corners, compared with eager and sealed.
    assert [(case["name"], case["sealed"]) for case in artifact.evidence] == [
        ("example", True), ("corner batch=2", True), ("corner batch=4", True)]
    assert all(r["passed"] for case in artifact.evidence for r in case["results"])


@pytest.mark.parametrize("batch", [2, 3, 4])
def test_the_seed_runs_at_every_declared_batch(seed, batch):
    _, program = seed
    x = numpy.arange(batch * 2, dtype=numpy.float64).reshape(batch, 2)
    y = program.run(x=x)["y"]
    assert y.shape == (batch, 2)
    numpy.testing.assert_array_equal(y, 2 * x + 1)
    if batch == 3:
        assert program.run(x=numpy.ones((3, 2)))["y"][0].tolist() == [3.0, 3.0]


@pytest.mark.parametrize("batch", [1, 5])
def test_the_seed_refuses_a_batch_outside_the_domain(seed, batch):
    _, program = seed
    with pytest.raises(kiln.ContractError) as refused:
        program.run(x=numpy.ones((batch, 2)))
    assert str(refused.value) == "input 'x' axis 0 (batch): %d is outside 2..4" % batch


def test_the_seed_refuses_width_3_and_float32(seed):
    _, program = seed
    with pytest.raises(kiln.ContractError, match=r"input 'x' axis 1: 3 is not the declared size 2"):
        program.run(x=numpy.ones((3, 3)))
    with pytest.raises(kiln.ContractError, match=r"input 'x': dtype f32 does not match the declared f64"):
        program.run(x=numpy.ones((3, 2), numpy.float32))


def test_a_module_and_its_dynamic_shapes_give_the_same_artifact_as_its_program():
    by_module = kiln.export(Scale(), (torch.ones(3, 2, dtype=torch.float64),),
                            dynamic_shapes={"x": {0: Dim("batch", min=2, max=4)}}, strict=True)
    assert by_module.bytes == kiln.export(seed_program()).bytes


def test_a_program_loaded_by_torch_export_load_names_its_dims_after_the_input():
    # torch.export.save keeps the range constraints but not the Dims' names.
    saved = io.BytesIO()
    torch.export.save(seed_program(), saved)
    saved.seek(0)
    program = kiln.export(torch.export.load(saved)).load()
    assert program.dims == [kiln.Dim("x_dim0", min=2, max=4)]
    assert program.run(x=numpy.ones((4, 2)))["y"].shape == (4, 2)


class Derived(torch.nn.Module):
    def forward(self, x, z):
        return x * 2, torch.cat([x, x], dim=0), z.sum(1, keepdim=True)


def test_derived_dims_of_the_program_stay_expressions(tmp_path, run_kiln):
    batch = Dim("batch", min=2, max=4)
    ep = torch.export.export(Derived(), (torch.ones(3, 2), torch.ones(4, 3)),
                             dynamic_shapes={"x": {0: batch}, "z": {0: batch + 1}}, strict=True)
    artifact = kiln.export(ep)
    path = tmp_path / "derived.kiln"
    artifact.save(path)
    shown = [line.split() for line in run_kiln("inspect", path).stdout.splitlines()]
    assert ["z", "f32", "[batch", "+", "1,", "3]"] in shown
    assert ["y1", "f32", "[2*batch,", "2]"] in shown
    program = artifact.load()
    assert program.dims == [kiln.Dim("batch", min=2, max=4)]
    out = program.run(x=numpy.ones((4, 2), numpy.float32), z=numpy.ones((5, 3), numpy.float32))
    assert out["y1"].shape == (8, 2) and out["y2"].shape == (5, 1)
    with pytest.raises(kiln.ContractError, match=r"input 'z' axis 0"):
        program.run(x=numpy.ones((4, 2), numpy.float32), z=numpy.ones((4, 3), numpy.float32))
    # The corners of the one root dim, each with z at batch + 1.
    assert [c["name"] for c in artifact.evidence] == ["example", "corner batch=2", "corner batch=4"]


class Specializes(torch.nn.Module):
    def forward(self, x):
        return x.reshape(3, 2) * 2


def test_a_declared_dim_torch_specialized_is_refused_naming_it():
    with pytest.raises(kiln.ProgramError) as refused:
        kiln.export(Specializes(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=4)}},
                    strict=True)
    error = refused.value
    assert error.status_name == "KILN_ERR_INVALID_PROGRAM"
    assert error.dim == "batch"
    assert "specialized dim 'batch' (input 'x' axis 0, declared 2..4) to the constant 3" in str(error)
    assert "test_torch_export.py:%d" % (Specializes.forward.__code__.co_firstlineno + 1) in str(error)
    assert error.counterexample in ("batch=2", "batch=4")


class Branches(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 3:
            return x * 2
        return x + 1


def test_a_dim_torch_guarded_is_refused_with_the_guard_and_a_counterexample():
    with pytest.raises(kiln.ProgramError) as refused:
        kiln.export(Branches(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=4)}})
    error = refused.value
    assert error.dim == "batch" and error.counterexample == "batch=4"
    assert "only where 2 <= x.shape[0] and x.shape[0] <= 3" in error.claim


def test_dim_auto_bounds_torch_narrowed_are_refused():
    # Dim.AUTO lets torch narrow silently (here to 2..3 at the example's branch); kiln does not.
    with pytest.raises(kiln.ProgramError) as refused:
        kiln.export(Branches(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim.AUTO(min=2, max=4)}})
    error = refused.value
    assert "narrowed dim 'x_dim0' (input 'x' axis 0) from the declared 2..4 to 2..3" in str(error)
    assert error.counterexample == "x_dim0=4"


def test_dim_auto_and_static_where_nothing_narrows():
    artifact = kiln.export(Scale(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim.AUTO(min=1, max=8),
                                                                              1: Dim.STATIC}})
    program = artifact.load()
    assert program.dims == [kiln.Dim("x_dim0", min=1, max=8)]
    assert program.run(x=numpy.ones((1, 2), numpy.float32))["y"].shape == (1, 2)


def test_an_unbounded_dim_is_refused_before_tracing():
    with pytest.raises(kiln.ArgumentError) as refused:
        kiln.export(Scale(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim("batch", min=2)}})
    assert "Dim 'batch' has no upper bound" in str(refused.value)
    assert "Dim('batch', min=2, max=...)" in str(refused.value)


def test_a_dim_on_a_nonexistent_input_is_refused_listing_the_inputs():
    with pytest.raises(kiln.ArgumentError) as refused:
        kiln.export(Scale(), (torch.ones(3, 2),), dynamic_shapes={"q": {0: Dim("batch", min=2, max=4)}})
    assert refused.value.status_name == "KILN_ERR_UNKNOWN_INPUT"
    assert str(refused.value) == "dynamic_shapes names 'q', which is not an input (inputs: x)"


class TwoUntranslatable(torch.nn.Module):
    def forward(self, x):
        return torch.cummax(x, 1)[0] + torch.special.i1e(x)


def test_every_untranslatable_aten_op_is_listed_at_once():
    with pytest.raises(kiln.UnsupportedError) as refused:
        kiln.export(TwoUntranslatable(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=4)}})
    error = refused.value
    assert str(error).startswith("2 ops of the exported program cannot be translated to ONNX opset 18")
    line = "test_torch_export.py:%d" % (TwoUntranslatable.forward.__code__.co_firstlineno + 1)
    assert [c.split(" ")[0] for c in error.constructs] == ["aten.cummax.default", "prims.bessel_i1e.default"]
    assert all(line in c for c in error.constructs)


class ValueBranch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_a_branch_on_tensor_values_is_refused(capfd):
    with pytest.raises(kiln.UnsupportedError) as refused:
        kiln.export(ValueBranch(), (torch.ones(3, 2),))
    message = str(refused.value)
    assert "control flow or a size depends on tensor values" in message
    assert "test_torch_export.py:%d" % (ValueBranch.forward.__code__.co_firstlineno + 1) in message
    assert "torch.where, torch.cond" in message
    assert "def forward" not in capfd.readouterr().err  # torch's partial graph is not printed


class ValueSize(torch.nn.Module):
    def forward(self, x):
        return x[x > 0] * 2


def test_a_size_that_depends_on_tensor_values_is_refused():
    with pytest.raises(kiln.UnsupportedError) as refused:
        kiln.export(ValueSize(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=4)}})
    assert "depends on tensor values" in str(refused.value)


class KeywordScale(torch.nn.Module):
    def forward(self, x, *, scale):
        return x * scale


def test_keyword_inputs_are_inputs_by_name():
    b = Dim("b", min=1, max=4)
    artifact = kiln.export(KeywordScale(), (torch.ones(3, 2),), {"scale": torch.full((3, 1), 2.0)},
                           dynamic_shapes={"x": {0: b}, "scale": {0: b}})
    program = artifact.load()
    assert [i.name for i in program.inputs] == ["x", "scale"]
    out = program.run(x=numpy.ones((4, 2), numpy.float32), scale=numpy.full((4, 1), 3.0, numpy.float32))
    numpy.testing.assert_array_equal(out["y"], numpy.full((4, 2), 3.0, numpy.float32))


def test_an_example_outside_a_torch_dim_is_an_argument_error():
    with pytest.raises(kiln.ArgumentError, match=r"the example input 'x' has 5 on axis 0, outside"):
        kiln.export(Scale(), (torch.ones(5, 2),), dynamic_shapes={"x": {0: Dim("batch", min=2, max=4)}})


def test_the_torchscript_route_still_seals_the_seed():
    artifact = kiln.export(Scale(), (torch.ones(2, 2, dtype=torch.float64),),
                           dynamic_shapes={"x": {0: kiln.Dim("batch", 2, 4)}}, exporter="torchscript")
    program = artifact.load()
    assert program.dims == [kiln.Dim("batch", min=2, max=4)]
    assert program.run(x=numpy.ones((3, 2)))["y"][0].tolist() == [3.0, 3.0]
    with pytest.raises(kiln.ContractError, match=r"5 is outside 2..4"):
        program.run(x=numpy.ones((5, 2)))


class _TwoInputs(torch.nn.Module):
    def forward(self, a, b):
        return a - 2 * b


def test_one_tensor_passed_for_two_inputs_is_two_inputs():
    # torch.export traces one tensor object given twice as one input: kiln.export copies it, so
    # the program reads each input, not the first twice (a silent wrong answer otherwise).
    same = torch.zeros(2, 3)
    program = kiln.export(_TwoInputs(), (same, same), evidence=None).load()
    a, b = numpy.ones((2, 3), numpy.float32), numpy.full((2, 3), 5, numpy.float32)
    (got,) = program(a, b)
    numpy.testing.assert_array_equal(got, a - 2 * b)
