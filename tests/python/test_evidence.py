"""Evidence: the known-input cases an artifact carries fail when its
weights change, whichever way they were changed; what kiln.export seals
(none, the example, the corners, the user's cases) and what it only
compares when the cases are over the size budget."""
import numpy
import pytest
import torch

import kiln
from conftest import MLP, export_mlp, mlp_batch, mlp_example


def eager(module, x):
    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


def first_weights_case():
    """A case whose expected output is MLP(0)'s."""
    x = mlp_example().numpy()
    return {"name": "first weights", "inputs": {"x": x}, "outputs": {"y": eager(MLP(0), x)}}


def test_a_user_case_holds_for_the_weights_it_came_from():
    artifact = export_mlp(seed=0, evidence=[first_weights_case()])
    assert [(c["name"], c["sealed"]) for c in artifact.evidence] == [("first weights", True)]
    assert artifact.evidence[0]["results"][0]["passed"]


def test_other_weights_fail_the_first_modules_evidence():
    with pytest.raises(kiln.EvidenceError) as failed:
        export_mlp(seed=1, evidence=[first_weights_case()])
    error = failed.value
    assert error.case == "first weights"
    assert "evidence 'first weights'" in str(error)
    (result,) = error.results
    assert result["output"] == "y" and not result["passed"]
    assert 0 < result["mismatches"] <= result["elements"] == 3 * 4
    assert result["max_abs_error"] > 1e-2
    assert "%d of %d elements" % (result["mismatches"], result["elements"]) in str(error)
    assert "max abs error" in str(error)


@pytest.fixture
def tampered(tmp_path, mlp_path, run_kiln):
    """The MLP's artifact rebuilt by the CLI with one weight replaced (same shape and dtype)."""
    text_dir = tmp_path / "text"
    assert run_kiln("disasm", mlp_path, "-o", text_dir).returncode == 0
    weight = text_dir / "hidden.weight.npy"
    original = numpy.load(weight)
    numpy.save(weight, (original + 0.25).astype(original.dtype))
    out = tmp_path / "tampered.kiln"
    done = run_kiln("asm", text_dir / "MLP.ktxt", "-o", out)
    assert done.returncode == 0, done.stderr
    return out


def test_a_changed_weight_fails_verify(tampered, mlp_path):
    # The file is a well-formed artifact: only its evidence can tell.
    program = kiln.load(tampered)
    assert program.evidence == kiln.load(mlp_path).evidence
    with pytest.raises(kiln.EvidenceError) as failed:
        kiln.verify(tampered)
    assert failed.value.case in program.evidence
    assert "evidence '%s' fails on this runtime: output 'y'" % failed.value.case in str(failed.value)
    assert any(not r["passed"] and r["max_abs_error"] > 1e-3 for r in failed.value.results)
    with pytest.raises(kiln.EvidenceError):
        program.replay_evidence()
    assert kiln.verify(mlp_path)["evidence"]  # the untouched artifact passes


def test_a_changed_weight_fails_cli_verify(tampered, mlp_path, run_kiln):
    done = run_kiln("verify", tampered)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "fail" in (done.stdout + done.stderr)
    assert run_kiln("verify", mlp_path).returncode == 0


def test_no_evidence():
    artifact = export_mlp(evidence=None)
    assert artifact.evidence == []
    assert artifact.load().evidence == []


def test_the_example_alone():
    artifact = export_mlp(evidence="example")
    assert [(c["name"], c["sealed"]) for c in artifact.evidence] == [("example", True)]
    assert artifact.load().evidence == ["example"]


def test_user_cases_take_their_expected_outputs_from_the_module():
    ones = numpy.ones((2, 8), numpy.float32)
    ramp = numpy.linspace(-2, 2, 16 * 8, dtype=numpy.float32).reshape(16, 8)
    artifact = export_mlp(evidence=[{"name": "ones", "inputs": {"x": ones}}, {"name": "ramp", "inputs": {"x": ramp}}])
    assert [(c["name"], c["sealed"]) for c in artifact.evidence] == [("ones", True), ("ramp", True)]
    program = artifact.load()
    assert sorted(program.evidence) == ["ones", "ramp"]
    assert all(r["passed"] for _, results in program.replay_evidence() for r in results)


def test_cases_over_the_budget_are_compared_not_sealed(tmp_path, run_kiln):
    # example (batch 3) 96 + 48 bytes, corner batch=1 32 + 16, corner batch=16 512 + 256: 200 fits the two small ones.
    artifact = export_mlp(evidence_bytes=200)
    by_name = {c["name"]: c for c in artifact.evidence}
    assert set(by_name) == {"example", "corner batch=1", "corner batch=16"}
    assert by_name["example"]["sealed"] is True and by_name["corner batch=1"]["sealed"] is True
    large = by_name["corner batch=16"]
    assert large["sealed"] is False
    assert large["results"] and large["results"][0]["passed"] and large["results"][0]["elements"] == 16 * 4
    assert sorted(artifact.load().evidence) == ["corner batch=1", "example"]
    path = tmp_path / "budget.kiln"
    artifact.save(path)
    assert run_kiln("verify", path).returncode == 0


def test_cases_over_the_budget_still_fail_export():
    with pytest.raises(kiln.EvidenceError) as failed:
        export_mlp(seed=1, evidence=[first_weights_case()], evidence_bytes=0)
    assert failed.value.case == "first weights"
    assert failed.value.results[0]["mismatches"] > 0


class LogRelu(torch.nn.Module):
    """log(relu(x)): -inf wherever x <= 0."""

    def forward(self, x):
        return torch.log(torch.relu(x))


@pytest.mark.parametrize("budget", [0, 1 << 20], ids=["compared", "sealed"])
def test_infinite_outputs_match_themselves_sealed_or_not(budget):
    x = torch.tensor([[-1.0, 2.0], [0.5, -3.0]])
    artifact = kiln.export(LogRelu(), (x,), dynamic_shapes={"x": {0: kiln.Dim("batch", 1, 4)}},
                           evidence_bytes=budget)
    assert all(c["sealed"] is bool(budget) for c in artifact.evidence)
    assert all(c["results"][0]["passed"] for c in artifact.evidence)
    assert numpy.isneginf(artifact.load().run(x=x.numpy())["y"]).sum() == 2



class Gram(torch.nn.Module):
    """x @ x^T over a sequence: a seq x seq result, 16 GiB at seq = 65536."""

    def forward(self, x):
        return torch.matmul(x, x.transpose(0, 1))


def test_corners_over_the_arena_limit_are_left_out_and_said_so():
    seq = kiln.Dim("seq", min=1, max=65536)
    with pytest.warns(UserWarning, match="evidence case 'corner seq=65536' left out: the arena at seq=65536 needs"):
        artifact = kiln.export(Gram(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: seq}})
    cases = {c["name"]: c for c in artifact.evidence}
    assert cases["example"]["sealed"] and cases["corner seq=1"]["sealed"]
    left_out = cases["corner seq=65536"]
    assert not left_out["sealed"] and left_out["results"] is None
    assert "over the limit of 4.0 GiB" in left_out["skipped"]
    assert sorted(artifact.load().evidence) == ["corner seq=1", "example"]  # sealed smallest first
