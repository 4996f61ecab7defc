"""An artifact saved from Python is the artifact the kiln command makes and
reads: disassembled and reassembled by the CLI it is byte-identical, the
CLI's inspect and verify agree with the package's, and saving is
deterministic and atomic."""
import json
import os

import pytest
import torch

import kiln
from conftest import MLP, Scale, export_mlp


@pytest.fixture(params=["scale", "mlp"])
def saved(request, tmp_path, scale_artifact, mlp_artifact):
    """(path, artifact): the seed (constants only) and the MLP (weights written as .npy by disasm)."""
    artifact = {"scale": scale_artifact, "mlp": mlp_artifact}[request.param]
    path = tmp_path / ("%s.kiln" % request.param)
    artifact.save(path)
    return path, artifact


def test_disasm_then_asm_gives_the_same_bytes(saved, tmp_path, run_kiln):
    path, artifact = saved
    text_dir = tmp_path / "text"
    done = run_kiln("disasm", path, "-o", text_dir)
    assert done.returncode == 0, done.stderr
    (text,) = [name for name in os.listdir(text_dir) if name.endswith(".ktxt")]
    assert text == kiln.load(path).name + ".ktxt"
    rebuilt = tmp_path / "rebuilt.kiln"
    done = run_kiln("asm", text_dir / text, "-o", rebuilt)
    assert done.returncode == 0, done.stderr
    assert rebuilt.read_bytes() == path.read_bytes() == artifact.bytes


def test_cli_inspect_json_is_kiln_inspect(saved, run_kiln):
    path, artifact = saved
    done = run_kiln("inspect", "--json", path)
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    assert cli["file"] == os.fspath(path)
    assert kiln.inspect(path) == cli
    assert kiln.inspect(path) == cli  # a second call too (kiln.inspect once became the submodule)
    assert kiln.load(path).inspect() == cli
    from_memory = artifact.load().inspect()
    assert from_memory.pop("file") == "<memory>"
    assert from_memory == {key: value for key, value in cli.items() if key != "file"}


def test_cli_verify_replays_the_sealed_evidence(saved, run_kiln):
    path, artifact = saved
    sealed = sorted(case["name"] for case in artifact.evidence if case["sealed"])
    assert "example" in sealed and len(sealed) >= 2  # the example and at least one corner
    done = run_kiln("verify", "--json", path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert sorted(case["name"] for case in report["evidence"]) == sealed
    assert all(case["passed"] and case["outputs"] for case in report["evidence"])
    python = kiln.verify(path)
    assert sorted(name for name, _ in python["evidence"]) == sealed
    for name, results in python["evidence"]:
        assert results and all(r["passed"] for r in results), name


def test_two_exports_of_one_module_are_byte_identical(monkeypatch, tmp_path):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first, second = export_mlp(), export_mlp()
    assert first.bytes == second.bytes
    first.save(tmp_path / "first.kiln")
    second.save(tmp_path / "second.kiln")
    assert (tmp_path / "first.kiln").read_bytes() == (tmp_path / "second.kiln").read_bytes()
    # Other weights are another artifact: the comparison above can fail.
    assert export_mlp(seed=1).bytes != first.bytes


def test_source_date_epoch_is_the_only_timestamp(monkeypatch):
    module, example = Scale(), (torch.ones(2, 2, dtype=torch.float64),)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    without = kiln.export(module, example).bytes
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    stamped = kiln.export(module, example).bytes
    assert stamped != without
    assert kiln.export(module, example).bytes == stamped


def test_save_replaces_the_file_atomically(tmp_path):
    path = tmp_path / "model.kiln"
    old, new = export_mlp(seed=0), export_mlp(seed=1)
    old.save(path)
    with open(path, "rb") as reader:
        new.save(path)
        # The old file was replaced by a rename, not rewritten in place:
        # a reader that opened it before still reads all of the old bytes.
        assert reader.read() == old.bytes
    assert path.read_bytes() == new.bytes
    assert os.listdir(tmp_path) == ["model.kiln"]  # no temporary file left behind


def test_save_into_a_missing_directory_is_a_file_error(tmp_path):
    with pytest.raises(kiln.FileError) as failed:
        export_mlp().save(tmp_path / "missing" / "model.kiln")
    assert failed.value.status_name == "KILN_ERR_IO"
    assert isinstance(failed.value, OSError)
    assert not (tmp_path / "missing").exists()


def test_a_python_saved_artifact_runs_in_the_cli(mlp_path, tmp_path, run_kiln):
    import numpy
    x = numpy.linspace(-1, 1, 5 * 8, dtype=numpy.float32).reshape(5, 8)
    numpy.save(tmp_path / "x.npy", x)
    done = run_kiln("run", mlp_path, "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    expected = MLP(0)(torch.from_numpy(x)).detach().numpy()
    numpy.testing.assert_allclose(numpy.load(tmp_path / "out" / "y.npy"), expected, rtol=1e-5, atol=1e-5)
    assert numpy.array_equal(numpy.load(tmp_path / "out" / "y.npy"), kiln.load(mlp_path).run(x=x)["y"])
