"""Replaying an artifact's known-input cases and generation cases on this runtime: what `kiln verify`,
Program.replay_evidence, Program.replay_generation and kiln.export's own check of the cases it seals
share. It takes a loaded Program and knows nothing
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


def generation_cases(program):
    """The artifact's generation cases: [{name, prefill_method, decode_method, prompt, tokens, margin}]."""
    return generation_cases_of(program._open_handle())


def generation_cases_of(handle):
    """generation_cases of a program handle (any method of the artifact)."""
    kiln, cases = _lib.kiln, []
    for index in range(kiln.kiln_program_generation_count(handle)):
        case = _lib.GenerationCase()
        kiln.kiln_program_generation(handle, index, ctypes.byref(case))
        cases.append({"name": case.name.decode(), "prefill_method": case.prefill_method.decode(),
                      "decode_method": case.decode_method.decode(),
                      "prompt": [case.prompt[i] for i in range(case.prompt_length)],
                      "tokens": [case.tokens[i] for i in range(case.token_count)], "margin": case.margin})
    return cases


def replay_generation_case(program, index):
    """Replay generation case `index`: {passed, matched, and where it failed expected, chosen,
    expected_logit, chosen_logit}; raises the kiln.Error that kept it from running."""
    kiln, handle = _lib.kiln, program._open_handle()
    result, error = _lib.GenerationResult(), _lib.Error()
    raise_for(kiln.kiln_program_replay_generation(handle, index, ctypes.byref(result), ctypes.byref(error)), error)
    out = {"passed": result.passed, "matched": result.matched}
    if not result.passed:
        out.update(expected=result.expected, chosen=result.chosen, expected_logit=result.expected_logit,
                   chosen_logit=result.chosen_logit)
    return out


def replay_generation_all(program):
    """Replay every generation case; [(case name, result)], or kiln.EvidenceError naming the first
    that fails or cannot run."""
    out = []
    for index, case in enumerate(generation_cases(program)):
        name = case["name"]
        try:
            result = replay_generation_case(program, index)
        except Exception as exc:
            raise EvidenceError("generation case '%s' could not run: %s" % (name, exc), 23, case=name) from exc
        if not result["passed"]:
            raise EvidenceError(
                "generation case '%s' fails on this runtime: token %d of %d: the recorded %d has logit %.9g, more "
                "than the margin %g below token %d's %.9g" % (
                    name, result["matched"], len(case["tokens"]), result["expected"], result["expected_logit"],
                    case["margin"], result["chosen"], result["chosen_logit"]), 23, case=name, results=result)
        out.append((name, result))
    return out
