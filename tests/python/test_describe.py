"""kiln.inspect and Program.inspect read the library (kiln_artifact_open, kiln_artifact_open_memory
and the program's getters), not the kiln command, and give exactly the data `kiln inspect --json`
prints: compared here on every golden artifact (signed, with evidence, with semantic checks,
compressed, non-strict with runtime guards, named nodes, newer minors this runtime cannot run,
another major), on a damaged and a missing file and on artifacts exported and signed from Python,
so a field the command gains or changes and the package does not fails here."""
import glob
import json
import os
import subprocess

import pytest

import kiln
from conftest import SOURCE_ROOT

GOLDEN = sorted(glob.glob(os.path.join(SOURCE_ROOT, "tests", "golden*", "**", "*.kiln"), recursive=True))


def cli_inspect(run_kiln, path):
    done = run_kiln("inspect", "--json", path)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def assert_same(python, cli):
    """Equal, member by member first, so that a drift names the member that drifted."""
    assert sorted(python) == sorted(cli)
    for key in cli:
        assert python[key] == cli[key], key


@pytest.fixture(params=[os.path.relpath(p, SOURCE_ROOT) for p in GOLDEN])
def golden(request):
    return os.path.join(SOURCE_ROOT, request.param)


def test_the_golden_artifacts_are_there():
    # Without them the comparison below would compare nothing.
    assert len(GOLDEN) >= 10, GOLDEN


def test_golden_artifact_as_the_command_shows_it(golden, run_kiln):
    assert_same(kiln.inspect(golden), cli_inspect(run_kiln, golden))


def test_the_golden_artifacts_cover_what_inspect_shows(run_kiln):
    """The comparison above sees every kind of member: a drift in any of them would show."""
    shown = [kiln.inspect(path) for path in GOLDEN]
    assert any(s["readable"] and not s["runnable"] for s in shown)        # cannot run here
    assert any(not s["readable"] for s in shown)                           # another major
    assert any(s["readable"] and s["signature"]["state"] != "unsigned" for s in shown)
    runnable = [s for s in shown if s["runnable"]]
    assert any(s["evidence"] for s in runnable)
    assert any(s["runtime_guards"] for s in runnable)
    assert any(s["weights"]["compressed"] for s in runnable)
    assert any(s["named_node_count"] for s in runnable)
    assert any(len(s["methods"]) > 1 for s in runnable)                     # several entry points
    assert any(s["derived_dims"] or any("*" in a for i in s["inputs"] for a in i["axes"]) for s in runnable)
    assert any(any(p["severity"] == "warning" for p in s["problems"]) for s in shown)


def test_exported_signed_and_checked_artifacts(tmp_path, run_kiln, scale_artifact, mlp_artifact):
    """From Python: semantic checks (scale), weights and sealed evidence (mlp), and the mlp signed."""
    paths = []
    for name, artifact in (("scale", scale_artifact), ("mlp", mlp_artifact)):
        path = tmp_path / (name + ".kiln")
        artifact.save(path)
        paths.append(path)
    public, secret = kiln.keygen()
    signed = tmp_path / "mlp-signed.kiln"
    assert kiln.sign(paths[1], secret, out=signed) == public.key_id
    paths.append(signed)
    for path in paths:
        assert_same(kiln.inspect(path), cli_inspect(run_kiln, path))
    scale, mlp, signed_mlp = (kiln.inspect(p) for p in paths)
    assert scale["semantic_checks"] and scale["semantic_checks"][0]["finite_only"] is True
    assert mlp["evidence"] and mlp["weights"]["count"] == 4
    assert signed_mlp["signature"] == {"state": "unverified", "key_id": public.key_id}


def test_damaged_and_missing_files(tmp_path, run_kiln, mlp_path):
    data = bytearray(mlp_path.read_bytes())
    data[len(data) // 2] ^= 0x40
    damaged = tmp_path / "damaged.kiln"
    damaged.write_bytes(bytes(data))
    for path in (damaged, tmp_path / "missing.kiln"):
        python = kiln.inspect(path)
        assert python["readable"] is False and python["message"]
        assert_same(python, cli_inspect(run_kiln, path))


def test_a_program_from_memory_is_described_from_its_bytes(run_kiln, mlp_path, mlp_artifact):
    from_memory = mlp_artifact.load().inspect()
    assert from_memory.pop("file") == "<memory>"
    cli = cli_inspect(run_kiln, mlp_path)
    cli.pop("file")
    assert_same(from_memory, cli)
    with pytest.raises(kiln.Error, match="without keeping its bytes"):
        kiln.load(mlp_artifact.bytes).inspect()


def test_inspect_runs_no_command(monkeypatch, tmp_path, scale_path, run_kiln):
    """No kiln command, no subprocess: the data comes from the library alone."""
    cli = cli_inspect(run_kiln, scale_path)

    def refuse(*args, **kwargs):
        raise AssertionError("kiln.inspect started a process: %r" % (args,))

    monkeypatch.setenv("KILN_BINARY", os.fspath(tmp_path / "no-such-kiln"))
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "execv", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse, raising=False)
    assert_same(kiln.inspect(scale_path), cli)
    assert_same(kiln.load(scale_path).inspect(), cli)
