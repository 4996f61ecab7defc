"""NumPy arrays in and out of the C library without copies.

An input array is handed to a session as it is (kiln_tensor_wrap over the
array's own buffer) when it is C-contiguous, aligned, native-endian and of a
kiln dtype; only otherwise is it copied once into such an array. An output
is copied once, from the session's arena (reused by the next run) into a
new array the caller owns.
"""
import ctypes

import numpy

from . import _lib
from .errors import ContractError, raise_for

# kiln_dtype codes (include/kiln/kiln.h) and the NumPy dtypes that hold them.
DTYPES = {
    1: numpy.dtype("<f4"), 2: numpy.dtype("<f8"), 3: numpy.dtype("<f2"), 5: numpy.dtype("i1"),
    6: numpy.dtype("<i2"), 7: numpy.dtype("<i4"), 8: numpy.dtype("<i8"), 9: numpy.dtype("u1"),
    10: numpy.dtype("<u2"), 11: numpy.dtype("<u4"), 12: numpy.dtype("<u8"), 13: numpy.dtype("?"),
}
BF16 = 4
NAMES = {1: "f32", 2: "f64", 3: "f16", 4: "bf16", 5: "i8", 6: "i16", 7: "i32", 8: "i64", 9: "u8", 10: "u16",
         11: "u32", 12: "u64", 13: "bool"}
CODES = {dtype.str: code for code, dtype in DTYPES.items()}
CODES["|b1"] = 13
CODES["|i1"] = 5
CODES["|u1"] = 9


def numpy_dtype(code):
    """The NumPy dtype of kiln dtype `code` (bf16, which NumPy lacks, as 2-byte void)."""
    if code == BF16:
        return numpy.dtype("V2")
    return DTYPES[code]


def kiln_dtype(array):
    """The kiln dtype code of `array` whatever its byte order (as_input converts big-endian
    arrays), or None when kiln has no such dtype."""
    return CODES.get(array.dtype.newbyteorder("<").str)


def as_input(value):
    """`value` as an array the C library can read in place: (array, dtype code).

    Arrays of a kiln dtype that are C-contiguous and aligned pass through
    untouched (the session reads their buffer); anything else is converted
    once. A value of a dtype kiln lacks keeps its dtype, so that the
    contract refuses it by name rather than the binding converting it."""
    array = value if isinstance(value, numpy.ndarray) else numpy.asarray(value)
    code = kiln_dtype(array)
    if code is None:
        raise_unsupported(array)
    if not (array.flags.c_contiguous and array.flags.aligned) or array.dtype.byteorder == ">":
        # A copy, not ascontiguousarray: that returns a misaligned C-contiguous array as it is.
        array = numpy.array(array, dtype=array.dtype.newbyteorder("<"), order="C", copy=True)
    return array, code


def raise_unsupported(array):
    raise ContractError("an array of dtype %s: kiln takes f32, f64, f16, i8..i64, u8..u64 and bool" % array.dtype, 17)


class Shape:
    """A reusable int64[MAX_RANK] for passing shapes without allocating."""

    __slots__ = ("buffer",)

    def __init__(self):
        self.buffer = (ctypes.c_int64 * _lib.MAX_RANK)()


def output_array(tensor):
    """A new array holding the kiln tensor `tensor` (a copy of the session's arena)."""
    kiln = _lib.kiln
    code = kiln.kiln_tensor_dtype(tensor)
    rank = kiln.kiln_tensor_rank(tensor)
    shape_pointer = kiln.kiln_tensor_shape(tensor)
    shape = tuple(shape_pointer[a] for a in range(rank))
    size = kiln.kiln_tensor_byte_size(tensor)
    out = numpy.empty(shape, dtype=numpy_dtype(code))
    if size:
        ctypes.memmove(out.ctypes.data, kiln.kiln_tensor_const_data(tensor), size)
    return out


def wrap(value):
    """A kiln tensor over `value`'s buffer (converted once by as_input if it must be):
    (handle, array). The caller keeps `array` alive while the tensor is used and frees
    the handle with kiln_tensor_free (the buffer stays the array's)."""
    array, code = as_input(value)
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    handle, error = ctypes.c_void_p(), _lib.Error()
    raise_for(_lib.kiln.kiln_tensor_wrap(code, array.ndim, shape, array.ctypes.data, array.nbytes,
                                         ctypes.byref(handle), ctypes.byref(error)), error)
    return handle, array
