"""Exceptions: one class per kind of kiln_status, each carrying the C message.

    Error                      every kiln failure: .status, .status_name, .message
    ├── ArgumentError          (also ValueError) a bad argument from the caller
    ├── FileError              (also OSError) a file could not be read or written
    ├── IntegrityError         the artifact is damaged: checksums, digest, structure
    │   └── AuthenticityError  a signature is missing, untrusted or does not verify
    ├── CompatibilityError     this runtime cannot run it: version, op, dtype, mode
    ├── LimitError             a size or a count is over a limit (a session's arena among them)
    ├── ProgramError           the program breaks a validity rule (the contract checker's refusals)
    ├── ContractError          inputs outside the declared contract: dtype, rank, a size outside its dim
    │   └── InputCheckError    an input value breaks a semantic check (range, finite, categories)
    ├── EvidenceError          a known-input case does not hold on this runtime
    ├── UnsupportedError       an ONNX model uses what kiln cannot express (every construct listed)
    └── RunError               a kernel failed on the given data
"""

_NAMES = {
    1: "KILN_ERR_INVALID_ARGUMENT", 2: "KILN_ERR_OUT_OF_MEMORY", 3: "KILN_ERR_IO", 4: "KILN_ERR_TRUNCATED",
    5: "KILN_ERR_BAD_MAGIC", 6: "KILN_ERR_UNSUPPORTED_VERSION", 7: "KILN_ERR_HEADER_CRC", 8: "KILN_ERR_TABLE_CRC",
    9: "KILN_ERR_SECTION_CRC", 10: "KILN_ERR_TRAILER", 11: "KILN_ERR_DIGEST_MISMATCH", 12: "KILN_ERR_MALFORMED",
    13: "KILN_ERR_LIMIT", 14: "KILN_ERR_UNKNOWN_CRITICAL", 15: "KILN_ERR_UNSUPPORTED_OP",
    16: "KILN_ERR_INVALID_PROGRAM", 17: "KILN_ERR_DTYPE_MISMATCH", 18: "KILN_ERR_RANK_MISMATCH",
    19: "KILN_ERR_SHAPE_GUARD", 20: "KILN_ERR_MISSING_INPUT", 21: "KILN_ERR_UNKNOWN_INPUT", 22: "KILN_ERR_NPY",
    23: "KILN_ERR_RUNTIME", 24: "KILN_ERR_UNSUPPORTED_DTYPE", 25: "KILN_ERR_UNSUPPORTED_MODE",
    26: "KILN_ERR_SECTION_HASH", 27: "KILN_ERR_UNSIGNED", 28: "KILN_ERR_UNTRUSTED_KEY", 29: "KILN_ERR_BAD_SIGNATURE",
    30: "KILN_ERR_INPUT_CHECK",
}


class Error(Exception):
    """A kiln failure: `status` is the kiln_status code, `message` the C library's message."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.message = message
        self.status = status

    @property
    def status_name(self):
        return _NAMES.get(self.status, "KILN_OK" if self.status == 0 else "unknown")


class ArgumentError(Error, ValueError):
    pass


class FileError(Error, OSError):
    pass


class IntegrityError(Error):
    pass


class AuthenticityError(IntegrityError):
    pass


class CompatibilityError(Error):
    pass


class LimitError(Error):
    pass


class ProgramError(Error):
    pass


class ContractError(Error):
    pass


class InputCheckError(ContractError):
    pass


class EvidenceError(Error):
    """A known-input case failed: `case` names it, `results` holds per output the error figures."""

    def __init__(self, message, status=23, case=None, results=None):
        super().__init__(message, status)
        self.case = case
        self.results = results or []


class UnsupportedError(Error):
    """An ONNX model kiln cannot import: `constructs` lists every node and reason."""

    def __init__(self, message, status=15, constructs=None):
        super().__init__(message, status)
        self.constructs = constructs or []


class RunError(Error):
    pass


class OutOfMemory(Error, MemoryError):
    pass


_CLASSES = {
    1: ArgumentError, 2: OutOfMemory, 3: FileError, 4: IntegrityError, 5: IntegrityError,
    6: CompatibilityError, 7: IntegrityError, 8: IntegrityError, 9: IntegrityError, 10: IntegrityError,
    11: IntegrityError, 12: IntegrityError, 13: LimitError, 14: CompatibilityError, 15: CompatibilityError,
    16: ProgramError, 17: ContractError, 18: ContractError, 19: ContractError, 20: ContractError,
    21: ContractError, 22: FileError, 23: RunError, 24: CompatibilityError, 25: CompatibilityError,
    26: IntegrityError, 27: AuthenticityError, 28: AuthenticityError, 29: AuthenticityError, 30: InputCheckError,
}


def from_status(status, message):
    """The exception for a failing kiln_status and its message."""
    return _CLASSES.get(status, Error)(message, status)


def raise_for(status, error):
    """Raise the exception for `status` with the message of the kiln_error `error` (a no-op for KILN_OK)."""
    if status != 0:
        raise from_status(status, error.message.decode("utf-8", "replace"))
