"""Verifying an artifact as `kiln verify` does: integrity, authenticity, compatibility, evidence."""
from ._replay import replay_all
from .program import load


def verify(path, trust=(), require_signature=False, limits=None):
    """Verify the artifact at `path` as `kiln verify` does: load it under full verification with
    the trusted keys, then replay every evidence case. Returns {"file", "signature", "problems"
    (warnings), "evidence": [(case, results)]}; raises the kiln.Error of the first failure
    (IntegrityError, AuthenticityError, CompatibilityError, EvidenceError, ...)."""
    program = load(path, verify="full", trusted_keys=trust, require_signature=require_signature, limits=limits)
    try:
        state, key_id = program.signature
        return {"file": program.origin, "signature": {"state": state, "key_id": key_id},
                "problems": [p._asdict() for p in program.warnings], "evidence": replay_all(program)}
    finally:
        program.close()
