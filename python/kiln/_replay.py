"""Replaying an artifact's known-input cases on this runtime: what `kiln verify`, Program.replay_evidence
and kiln.export's own check of the cases it seals share. It takes a loaded Program and knows nothing
of how it was loaded."""
import ctypes

from . import _lib
from .errors import EvidenceError, raise_for


def _rule(rule):
    if rule.kind == 0:
        return {"kind": "exact", "nan_equal": rule.nan_equal}
    return {"kind": "tolerance", "atol": rule.atol, "rtol": rule.rtol, "nan_equal": rule.nan_equal}


def replay_case(program, index):
    """Run stored case `index` on this runtime: [{output, passed, rule, elements, mismatches,
    max_abs_error, max_rel_error}] per expected output."""
    kiln, handle = _lib.kiln, program._open_handle()
    count = kiln.kiln_program_evidence_output_count(handle, index)
    results, error = (_lib.EvidenceResult * max(count, 1))(), _lib.Error()
    raise_for(kiln.kiln_program_replay_evidence(handle, index, results, ctypes.byref(error)), error)
    return [{"output": r.output.decode(), "passed": r.passed, "rule": _rule(r.rule), "elements": r.elements,
             "mismatches": r.mismatches, "max_abs_error": r.max_abs_error, "max_rel_error": r.max_rel_error}
            for r in results[:count]]


def replay_all(program):
    """Replay every case; [(case name, results)], or kiln.EvidenceError naming the first that fails."""
    program._open_handle()  # a closed program is an ArgumentError, not a failing case
    out = []
    for index, name in enumerate(program.evidence):
        try:
            results = replay_case(program, index)
        except Exception as exc:
            raise EvidenceError("evidence '%s' could not run: %s" % (name, exc), 23, case=name) from exc
        failed = [r for r in results if not r["passed"]]
        if failed:
            r = failed[0]
            raise EvidenceError("evidence '%s' fails on this runtime: output '%s': %d of %d elements outside %s "
                                "(max abs error %.3g, max rel error %.3g)" % (
                                    name, r["output"], r["mismatches"], r["elements"], _rule_text(r["rule"]),
                                    r["max_abs_error"], r["max_rel_error"]), 23, case=name, results=results)
        out.append((name, results))
    return out


def _rule_text(rule):
    if rule["kind"] == "exact":
        return "exact equality"
    return "atol %g + rtol %g" % (rule["atol"], rule["rtol"])
