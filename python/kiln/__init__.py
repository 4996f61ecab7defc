"""kiln: sealed, checksummed tensor programs with a shape contract, from Python.

    import kiln, numpy, torch
    batch = torch.export.Dim("batch", min=2, max=4)
    ep = torch.export.export(Scale(), (torch.ones(3, 2, dtype=torch.float64),),
                             dynamic_shapes={"x": {0: batch}}, strict=True)
    artifact = kiln.export(ep, checks={"x": kiln.Check(range=(-1e6, 1e6), finite=True)})
    artifact.save("scale.kiln")
    program = kiln.load("scale.kiln")
    program.run(x=numpy.ones((3, 2)))["y"]        # 3.0 everywhere
    program.run(x=numpy.ones((5, 2)))             # kiln.ContractError: input 'x' axis 0 (batch): 5 is outside 2..4

The package is ctypes over libkiln (and libkiln-onnx for export); see
README.md, "Python", spec/python-export.md for how kiln.export takes a
torch.export program, and spec/contract.md for what the contract means.
"""
from . import _lib
from ._describe import describe_path
from .contract import Check, Dim
from .errors import (ArgumentError, AuthenticityError, CompatibilityError, ContractError, Error, EvidenceError,
                     FileError, InputCheckError, IntegrityError, LimitError, OutOfMemory, ProgramError, RunError,
                     UnsupportedError)
from .export import Artifact, export, export_methods
from .keys import PublicKey, SecretKey, keygen, sign
from .program import Io, Program, Session, State, load
from .verify import verify

__version__ = _lib.kiln.kiln_version().decode()

__all__ = [
    "Artifact", "Check", "Dim", "Io", "Program", "PublicKey", "SecretKey", "Session", "export", "export_methods",
    "keygen", "load",
    "sign", "verify", "inspect", "format_bytes",
    "Error", "ArgumentError", "AuthenticityError", "CompatibilityError", "ContractError", "EvidenceError",
    "FileError", "InputCheckError", "IntegrityError", "LimitError", "OutOfMemory", "ProgramError", "RunError",
    "UnsupportedError",
]


def inspect(path, method=None):
    """The data of `kiln inspect --json PATH [--method METHOD]` (spec/inspect-json.md), read through
    the library, also for a file that cannot be read (missing, damaged: "readable" false and a "message")."""
    return describe_path(path, method)


def format_bytes(count):
    """A byte count as kiln prints it: "512 bytes", "8.1 GiB"."""
    return _lib.format_bytes(count)
