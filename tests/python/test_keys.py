"""Ed25519 keys from Python: the files kiln keygen writes, signing, and
loading or verifying with trusted keys — interchangeable with the CLI's."""
import json
import os
import stat

import numpy
import pytest

import kiln


def test_keygen_writes_a_private_key_and_a_public_key(tmp_path):
    public, secret = kiln.keygen(tmp_path / "signer")
    key_file, pub_file = tmp_path / "signer.key", tmp_path / "signer.pub"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(pub_file).st_mode) == 0o644
    assert pub_file.read_text() == public.text() + "\n"
    assert key_file.read_text() == secret.text() + "\n"
    assert public.text().startswith("kiln-ed25519-public-v1 ")
    assert kiln.PublicKey.parse(pub_file).key_id == kiln.PublicKey.parse(public.text()).key_id == public.key_id
    assert len(public.key_id) == 32
    assert kiln.keygen()[0].key_id != public.key_id  # a new pair each time


def test_keygen_never_replaces_a_key(tmp_path):
    kiln.keygen(tmp_path / "signer")
    before = {name: (tmp_path / name).read_bytes() for name in ("signer.key", "signer.pub")}
    with pytest.raises(kiln.FileError, match="signer.key' exists"):
        kiln.keygen(tmp_path / "signer")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before


def test_keygen_with_only_the_public_key_there_writes_nothing(tmp_path):
    (tmp_path / "signer.pub").write_text("someone's key\n")
    with pytest.raises(kiln.FileError, match="signer.pub' exists"):
        kiln.keygen(tmp_path / "signer")
    assert sorted(os.listdir(tmp_path)) == ["signer.pub"]
    assert (tmp_path / "signer.pub").read_text() == "someone's key\n"


@pytest.mark.parametrize("trust", ["path", "PublicKey", "text"])
def test_a_signed_artifact_loads_verified_by_its_key(tmp_path, scale_path, trust):
    public, _ = kiln.keygen(tmp_path / "signer")
    assert kiln.load(scale_path).signature == ("unsigned", None)
    key_id = kiln.sign(scale_path, tmp_path / "signer.key")
    assert key_id == public.key_id
    trusted = {"path": tmp_path / "signer.pub", "PublicKey": public, "text": public.text()}[trust]
    program = kiln.load(scale_path, trusted_keys=[trusted])
    assert program.signature == ("verified", public.key_id)
    assert program.run(x=numpy.ones((2, 2)))["y"].tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_a_signature_without_trusted_keys_is_not_verified(tmp_path, scale_path):
    public, secret = kiln.keygen()
    kiln.sign(scale_path, secret)
    state, key_id = kiln.load(scale_path).signature
    assert (state, key_id) == ("unverified", public.key_id)


def test_signing_to_another_file_leaves_the_original(tmp_path, scale_path):
    public, secret = kiln.keygen()
    original = scale_path.read_bytes()
    kiln.sign(scale_path, secret.text(), out=tmp_path / "signed.kiln")
    assert scale_path.read_bytes() == original
    assert kiln.load(tmp_path / "signed.kiln", trusted_keys=[public]).signature == ("verified", public.key_id)


def test_verify_with_a_required_signature(tmp_path, scale_path, run_kiln):
    public, _ = kiln.keygen(tmp_path / "signer")
    kiln.sign(scale_path, tmp_path / "signer.key")
    report = kiln.verify(scale_path, trust=[tmp_path / "signer.pub"], require_signature=True)
    assert report["signature"] == {"state": "verified", "key_id": public.key_id}
    assert report["evidence"]
    done = run_kiln("verify", "--json", scale_path, "--trust", tmp_path / "signer.pub", "--require-signature")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["signature"]["state"] == "verified"
    other, _ = kiln.keygen()
    with pytest.raises(kiln.AuthenticityError):
        kiln.verify(scale_path, trust=[other], require_signature=True)


def test_cli_keys_sign_for_python_and_python_keys_for_the_cli(tmp_path, scale_path, run_kiln):
    assert run_kiln("keygen", "--out", tmp_path / "cli").returncode == 0
    key_id = kiln.sign(scale_path, tmp_path / "cli.key")
    assert key_id == kiln.PublicKey.parse(tmp_path / "cli.pub").key_id
    kiln.keygen(tmp_path / "py")
    done = run_kiln("sign", scale_path, "--key", tmp_path / "py.key")
    assert done.returncode == 0, done.stderr
    assert kiln.load(scale_path, trusted_keys=[tmp_path / "py.pub"]).signature[0] == "verified"
    assert run_kiln("verify", scale_path, "--trust", tmp_path / "cli.pub").returncode == 1


@pytest.mark.parametrize("trust", ["path", "PublicKey", "text"])
def test_one_trusted_key_needs_no_list(tmp_path, scale_path, trust):
    public, _ = kiln.keygen(tmp_path / "signer")
    kiln.sign(scale_path, tmp_path / "signer.key")
    key = {"path": tmp_path / "signer.pub", "PublicKey": public, "text": public.text()}[trust]
    assert kiln.load(scale_path, trusted_keys=key).signature == ("verified", public.key_id)
    assert kiln.verify(scale_path, trust=key, require_signature=True)["signature"]["state"] == "verified"
