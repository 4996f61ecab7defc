"""Inputs are read where they are: a C-contiguous aligned array of a kiln
dtype is handed to the session as it is (its buffer, not a copy), anything
else is converted once; outputs are new arrays the caller owns."""
import numpy
import pytest

import kiln
from kiln import _lib, _tensors

KILN_DTYPES = ["f4", "f8", "f2", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "?"]


def wrapped_address(session, index=0):
    """Where the session's input `index` points: the data of its kiln tensor wrapper."""
    return _lib.kiln.kiln_tensor_const_data(session._wrappers[index])


@pytest.mark.parametrize("dtype", KILN_DTYPES)
def test_an_array_of_a_kiln_dtype_is_passed_as_it_is(dtype):
    array = numpy.zeros((3, 5), dtype=dtype)
    passed, code = _tensors.as_input(array)
    assert passed is array
    assert _tensors.numpy_dtype(code) == array.dtype


@pytest.mark.parametrize("make", [
    lambda a: a[:, ::2],                                   # a strided view
    lambda a: numpy.asfortranarray(a),                     # column-major
    lambda a: a.astype(a.dtype.newbyteorder(">")),         # big-endian
    lambda a: numpy.frombuffer(b"\0" + a.tobytes(), dtype=a.dtype, offset=1).reshape(a.shape),  # misaligned
], ids=["strided", "fortran", "big-endian", "misaligned"])
def test_other_layouts_are_converted_once(make):
    original = numpy.arange(24, dtype=numpy.float64).reshape(4, 6)
    value = make(original)
    passed, code = _tensors.as_input(value)
    assert passed is not value
    assert passed.flags.c_contiguous and passed.flags.aligned and passed.flags.owndata  # one copy, not a view of one
    assert passed.dtype == numpy.dtype("<f8") and code == 2
    assert not numpy.shares_memory(passed, value)
    numpy.testing.assert_array_equal(passed, value)


def test_the_session_reads_the_callers_buffer(scale_path):
    session = kiln.load(scale_path).session()
    x = numpy.ones((3, 2))
    first = session.run(x=x)["y"]
    assert wrapped_address(session) == x.ctypes.data
    x[1, 1] = 10.0  # in place: the same array object, the same buffer
    second = session.run(x=x)["y"]
    assert wrapped_address(session) == x.ctypes.data
    assert first.tolist() == [[3.0, 3.0], [3.0, 3.0], [3.0, 3.0]]
    assert second.tolist() == [[3.0, 3.0], [3.0, 21.0], [3.0, 3.0]]


def test_a_strided_input_is_read_from_its_one_copy(scale_path):
    session = kiln.load(scale_path).session()
    wide = numpy.arange(12, dtype=numpy.float64).reshape(3, 4)
    view = wide[:, ::2]
    y = session.run(x=view)["y"]
    numpy.testing.assert_array_equal(y, 2 * view + 1)
    copy = session._arrays[0]
    assert copy is not view and not numpy.shares_memory(copy, wide)
    assert wrapped_address(session) == copy.ctypes.data


def test_another_array_rewraps_the_same_wrapper(scale_path):
    session = kiln.load(scale_path).session()
    a, b = numpy.zeros((2, 2)), numpy.full((4, 2), 2.0)
    session.run(x=a)
    wrapper = session._wrappers[0]
    assert session.run(x=b)["y"].tolist() == [[5.0, 5.0]] * 4
    assert session._wrappers[0] is wrapper and wrapped_address(session) == b.ctypes.data
    assert session.run(x=a)["y"].tolist() == [[1.0, 1.0]] * 2


def test_outputs_belong_to_the_caller(scale_path):
    program = kiln.load(scale_path)
    x = numpy.ones((2, 2))
    first = program.run(x=x)["y"]
    assert first.flags.owndata and first.flags.writeable
    first[:] = -1.0
    second = program.run(x=x)["y"]
    assert second.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert first.tolist() == [[-1.0, -1.0], [-1.0, -1.0]]  # the next run did not write into it
    assert second is not first and not numpy.shares_memory(first, second)
    third = program.run(x=x)["y"]
    assert not numpy.shares_memory(second, third)


def test_a_dtype_kiln_lacks_is_refused_not_converted():
    with pytest.raises(kiln.ContractError, match="complex64"):
        _tensors.as_input(numpy.zeros(3, numpy.complex64))


def test_a_misaligned_input_runs(scale_path):
    data = numpy.arange(4, dtype=numpy.float64)
    misaligned = numpy.frombuffer(b"\0" + data.tobytes(), dtype=numpy.float64, offset=1).reshape(2, 2)
    assert not misaligned.flags.aligned
    assert kiln.load(scale_path).run(x=misaligned)["y"].tolist() == [[1.0, 3.0], [5.0, 7.0]]
