"""The exception hierarchy: each failure raises the class of its
kiln_status, its str() is the C library's message and .status_name names
the status; the checker's refusals carry the node, the claim and a
counterexample, and an unsupported ONNX construct is listed by name."""
import ctypes

import numpy
import pytest
import torch

import kiln
from kiln import _lib
from kiln.errors import from_status

MAJOR_VERSION_BYTES = range(8, 10)  # spec/format.md §3: the major is read before any checksum


def assert_kiln_error(error, cls, status_name):
    """`error` is `cls`, the class its status maps to, with the C message as its text."""
    assert isinstance(error, cls)
    assert error.status_name == status_name
    assert type(error) is type(from_status(error.status, ""))
    assert str(error) == error.message and error.message
    assert _lib.strerror(error.status) != "unknown error"


def test_every_flipped_byte_is_an_integrity_error(scale_path):
    data = scale_path.read_bytes()
    for offset in range(len(data)):
        damaged = bytearray(data)
        damaged[offset] ^= 0x01
        expected = kiln.CompatibilityError if offset in MAJOR_VERSION_BYTES else kiln.IntegrityError
        with pytest.raises(kiln.Error) as refused:
            kiln.load(bytes(damaged))
        assert isinstance(refused.value, expected), (offset, refused.value)
        assert not isinstance(refused.value, kiln.AuthenticityError), offset
        assert type(refused.value) is type(from_status(refused.value.status, ""))


def test_a_damaged_weight_on_disk(mlp_path):
    data = bytearray(mlp_path.read_bytes())
    sections = kiln.inspect(mlp_path)["sections"]
    index, weights = next((i, s) for i, s in enumerate(sections) if s["type"] == "WDAT")
    data[weights["offset"] + weights["stored_size"] // 2] ^= 0x40
    mlp_path.write_bytes(bytes(data))
    with pytest.raises(kiln.IntegrityError) as refused:
        kiln.load(mlp_path)
    assert_kiln_error(refused.value, kiln.IntegrityError, "KILN_ERR_SECTION_CRC")
    assert str(refused.value) == "section %d (WDAT): checksum mismatch (section is damaged)" % index
    # kiln.inspect gives the command's data for it: unreadable, with the same message.
    described = kiln.inspect(mlp_path)
    assert (described["readable"], described["message"]) == (False, str(refused.value))
    # Lazy verification checks the weights when they are first needed.
    program = kiln.load(mlp_path, verify="lazy")
    with pytest.raises(kiln.IntegrityError, match="WDAT"):
        program.run(x=numpy.ones((2, 8), numpy.float32))


def test_a_truncated_file(scale_path):
    data = scale_path.read_bytes()
    with pytest.raises(kiln.IntegrityError) as refused:
        kiln.load(data[:-10])
    assert_kiln_error(refused.value, kiln.IntegrityError, "KILN_ERR_TRUNCATED")
    assert str(refused.value) == "file is truncated: header declares %d bytes, %d present" % (
        len(data), len(data) - 10)


def test_a_missing_file_is_a_file_error(tmp_path):
    with pytest.raises(kiln.FileError) as refused:
        kiln.load(tmp_path / "nothing.kiln")
    assert_kiln_error(refused.value, kiln.FileError, "KILN_ERR_IO")
    assert "nothing.kiln" in str(refused.value)


def test_a_signature_by_an_untrusted_key(tmp_path, scale_path):
    kiln.keygen(tmp_path / "signer")
    kiln.keygen(tmp_path / "other")
    kiln.sign(scale_path, tmp_path / "signer.key")
    with pytest.raises(kiln.AuthenticityError) as refused:
        kiln.load(scale_path, trusted_keys=[tmp_path / "other.pub"])
    assert_kiln_error(refused.value, kiln.AuthenticityError, "KILN_ERR_UNTRUSTED_KEY")
    assert isinstance(refused.value, kiln.IntegrityError)
    assert kiln.PublicKey.parse(tmp_path / "signer.pub").key_id in str(refused.value)
    assert kiln.load(scale_path, trusted_keys=[tmp_path / "signer.pub"]).signature[0] == "verified"


def test_an_unsigned_artifact_when_a_signature_is_required(tmp_path, scale_path):
    public, _ = kiln.keygen(tmp_path / "key")
    with pytest.raises(kiln.AuthenticityError) as refused:
        kiln.load(scale_path, trusted_keys=[public], require_signature=True)
    assert_kiln_error(refused.value, kiln.AuthenticityError, "KILN_ERR_UNSIGNED")


def c_session_message(program, call):
    """The status and message the C library gives for `call(session handle, error)` on a new session."""
    session = program.session()
    error = _lib.Error()
    status = call(session._handle, ctypes.byref(error))
    session.close()
    return status, error.message.decode()


def test_an_unknown_input_is_refused_as_the_c_library_refuses_it(scale_path):
    program = kiln.load(scale_path)
    with pytest.raises(kiln.ContractError) as refused:
        program.run(z=numpy.ones((2, 2)))
    assert_kiln_error(refused.value, kiln.ContractError, "KILN_ERR_UNKNOWN_INPUT")
    tensor = ctypes.c_void_p()
    array = numpy.ones((2, 2))
    shape = (ctypes.c_int64 * 2)(2, 2)
    assert _lib.kiln.kiln_tensor_wrap(2, 2, shape, array.ctypes.data, array.nbytes, ctypes.byref(tensor), None) == 0
    try:
        status, message = c_session_message(
            program, lambda session, error: _lib.kiln.kiln_session_set_input(session, b"z", tensor, error))
    finally:
        _lib.kiln.kiln_tensor_free(tensor)
    assert (status, message) == (refused.value.status, str(refused.value))


def test_a_missing_input_is_refused_as_the_c_library_refuses_it(scale_path):
    program = kiln.load(scale_path)
    with pytest.raises(kiln.ContractError) as refused:
        program.run()
    assert_kiln_error(refused.value, kiln.ContractError, "KILN_ERR_MISSING_INPUT")
    status, message = c_session_message(program, _lib.kiln.kiln_session_run)
    assert (status, message) == (refused.value.status, str(refused.value))


def test_an_input_of_a_dtype_kiln_lacks(scale_path):
    with pytest.raises(kiln.ContractError, match="complex128"):
        kiln.load(scale_path).run(x=numpy.ones((2, 2), numpy.complex128))


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def test_torch_export_equating_two_declared_dims_is_refused_with_both():
    dims = {"x": {0: kiln.Dim("batch", 1, 8)}, "y": {0: kiln.Dim("n", 1, 8)}}
    with pytest.raises(kiln.ProgramError) as refused:
        kiln.export(Add(), (torch.ones(2, 4), torch.ones(2, 4)), dynamic_shapes=dims)
    error = refused.value
    assert_kiln_error(error, kiln.ProgramError, "KILN_ERR_INVALID_PROGRAM")
    assert error.dim == "n"
    assert "dim 'n' (input 'y' axis 0, declared 1..8) equals dim 'batch' (input 'x' axis 0, declared 1..8)" in error.claim
    # A point of the declared domain where the sizes differ and neither broadcasts.
    point = dict(item.split("=") for item in error.counterexample.split(", "))
    assert point["n"] != point["batch"] and min(int(point["n"]), int(point["batch"])) >= 2
    assert "declare the smaller domain yourself" in str(error)  # what to do; kiln applies no fix


def test_the_checker_refuses_sizes_it_cannot_prove_equal(tmp_path, run_kiln):
    # The TorchScript route infers no contract: kiln's own checker is what refuses.
    dims = {"x": {0: kiln.Dim("batch", 1, 8)}, "y": {0: kiln.Dim("n", 1, 8)}}
    with pytest.raises(kiln.ProgramError) as refused:
        kiln.export(Add(), (torch.ones(2, 4), torch.ones(2, 4)), dynamic_shapes=dims, exporter="torchscript")
    error = refused.value
    assert_kiln_error(error, kiln.ProgramError, "KILN_ERR_INVALID_PROGRAM")
    assert error.node == "node 0 '/Add' (Add)"
    assert error.claim.startswith("node 0 (add): output axis 0: cannot prove that batch and n broadcast")
    assert error.counterexample == "batch=3, n=2"
    assert error.node in str(error) and error.counterexample in str(error)
    # The counterexample is a point of the domain where the two sizes differ and neither is 1.
    point = dict(item.split("=") for item in error.counterexample.split(", "))
    assert 1 < int(point["batch"]) <= 8 and 1 < int(point["n"]) <= 8 and point["batch"] != point["n"]
    # The same program written as text is refused by the same claim.
    text = tmp_path / "add.ktxt"
    text.write_text('kiln 1.0\nprogram "Add"\nmode inference\ndim batch in 1..8\ndim n in 1..8\n'
                    'input x: f32[batch, 4]\ninput y: f32[n, 4]\n%0 = add(x, y)\noutput out = %0\n')
    done = run_kiln("asm", text, "-o", tmp_path / "add.kiln")
    assert done.returncode == 1
    assert error.claim in done.stderr


def test_one_dim_on_both_sides_is_proven():
    batch = kiln.Dim("batch", 1, 8)
    artifact = kiln.export(Add(), (torch.ones(2, 4), torch.ones(2, 4)),
                           dynamic_shapes={"x": {0: batch}, "y": {0: batch}})
    program = artifact.load()
    assert [o.name for o in program.outputs] == ["output"]  # "y" is an input's name
    assert (program(numpy.ones((8, 4), numpy.float32), numpy.ones((8, 4), numpy.float32))[0] == 2).all()


class NonZero(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x).float()


def test_a_data_dependent_size_is_refused_naming_the_op_and_the_line():
    with pytest.raises(kiln.UnsupportedError) as refused:
        kiln.export(NonZero(), (torch.ones(2, 4),))
    error = refused.value
    assert error.status_name == "KILN_ERR_UNSUPPORTED_OP"
    assert error.constructs == ["aten.nonzero.default"]
    assert "test_errors.py:%d" % (NonZero.forward.__code__.co_firstlineno + 1) in str(error)
    assert "depends on tensor values" in str(error)


def test_an_unsupported_onnx_construct_is_listed():
    with pytest.raises(kiln.UnsupportedError) as refused:
        kiln.export(NonZero(), (torch.ones(2, 4),), exporter="torchscript")
    error = refused.value
    assert error.status_name == "KILN_ERR_UNSUPPORTED_OP"
    assert len(error.constructs) == 1 and "unsupported op NonZero" in error.constructs[0]
    assert error.constructs[0] in str(error)
    assert not isinstance(error, kiln.ProgramError)


def test_an_example_outside_its_dim_is_an_argument_error():
    with pytest.raises(kiln.ArgumentError) as refused:
        kiln.export(Add(), (torch.ones(9, 4), torch.ones(9, 4)),
                    dynamic_shapes={"x": {0: kiln.Dim("batch", 1, 8)}, "y": {0: kiln.Dim("batch", 1, 8)}})
    assert isinstance(refused.value, ValueError)
    assert "the example input 'x' has 9 on axis 0" in str(refused.value)
