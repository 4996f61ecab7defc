"""Verifying an artifact as `kiln verify` does: integrity, authenticity, compatibility, evidence."""
from ._replay import replay_all, replay_generation_all
from .program import load


def verify(path, trust=(), require_signature=False, limits=None):
    """Verify the artifact at `path` as `kiln verify` does: load it under full verification with
    the trusted keys, then replay every evidence case of every method and every generation case.
    Returns {"file", "signature", "problems" (warnings), "evidence": [(case, results)] (a further
    method's cases named "METHOD/CASE"), "generation": [(case, result)]}; raises the kiln.Error of
    the first failure (IntegrityError, AuthenticityError, CompatibilityError, EvidenceError, ...)."""
    program = load(path, verify="full", trusted_keys=trust, require_signature=require_signature, limits=limits)
    try:
        state, key_id = program.signature
        evidence = []
        for index, (name, method) in enumerate(program.methods.items()):
            prefix = "" if index == 0 else name + "/"
            evidence += [(prefix + case, results) for case, results in replay_all(method)]
        return {"file": program.origin, "signature": {"state": state, "key_id": key_id},
                "problems": [p._asdict() for p in program.warnings], "evidence": evidence,
                "generation": replay_generation_all(program)}
    finally:
        program.close()
