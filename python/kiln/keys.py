"""Ed25519 keys and signing: the same key texts and files as `kiln keygen` and `kiln sign`."""
import ctypes
import os

from . import _lib
from ._describe import signature_of_path
from .errors import ArgumentError, FileError, raise_for


def _read_text(value):
    """Key text given directly, or read from a file named by `value`."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode()
    text = os.fspath(value)
    if os.path.exists(text):
        with open(text, "r", encoding="utf-8") as f:
            return f.read().strip()
    return text.strip()


class PublicKey:
    """A public key: trusted by kiln.load(trusted_keys=...) and kiln.verify(trust=...)."""

    def __init__(self, struct):
        self._struct = struct

    @classmethod
    def parse(cls, value):
        """From its text ("kiln-ed25519-public-v1 ...") or a path to a .pub file."""
        struct, error = _lib.PublicKey(), _lib.Error()
        raise_for(_lib.kiln.kiln_public_key_parse(_read_text(value).encode(), ctypes.byref(struct),
                                                  ctypes.byref(error)), error)
        return cls(struct)

    @property
    def key_id(self):
        """The 16-byte key id, as hex (what inspect and verify print)."""
        out = (ctypes.c_uint8 * 16)()
        _lib.kiln.kiln_key_id(ctypes.byref(self._struct), out)
        return bytes(out).hex()

    def text(self):
        buffer = ctypes.create_string_buffer(256)
        _lib.kiln.kiln_public_key_format(ctypes.byref(self._struct), buffer, len(buffer))
        return buffer.value.decode()

    def __repr__(self):
        return "<kiln.PublicKey %s>" % self.key_id


class SecretKey:
    """A secret key: signs artifacts (kiln.sign)."""

    def __init__(self, struct):
        self._struct = struct

    @classmethod
    def parse(cls, value):
        """From its text or a path to a .key file."""
        struct, error = _lib.SecretKey(), _lib.Error()
        raise_for(_lib.kiln.kiln_secret_key_parse(_read_text(value).encode(), ctypes.byref(struct),
                                                  ctypes.byref(error)), error)
        return cls(struct)

    def text(self):
        buffer = ctypes.create_string_buffer(256)
        _lib.kiln.kiln_secret_key_format(ctypes.byref(self._struct), buffer, len(buffer))
        return buffer.value.decode()

    def __del__(self):
        ctypes.memset(ctypes.addressof(self._struct), 0, ctypes.sizeof(self._struct))

    def __repr__(self):
        return "<kiln.SecretKey>"


def keygen(prefix=None):
    """A new key pair (PublicKey, SecretKey). With `prefix`, also write PREFIX.key (mode 0600)
    and PREFIX.pub as `kiln keygen --out PREFIX` does; existing files are never replaced."""
    public, secret, error = _lib.PublicKey(), _lib.SecretKey(), _lib.Error()
    raise_for(_lib.kiln.kiln_key_generate(ctypes.byref(public), ctypes.byref(secret), ctypes.byref(error)), error)
    pair = PublicKey(public), SecretKey(secret)
    if prefix is not None:
        _write_pair(os.fspath(prefix), pair)
    return pair


def _write_pair(prefix, pair):
    """PREFIX.key (mode 0600) and PREFIX.pub, both or neither: both files are created (never
    replacing one) before either is written, so an existing PREFIX.pub leaves no new PREFIX.key."""
    files = ((prefix + ".key", pair[1].text(), 0o600), (prefix + ".pub", pair[0].text(), 0o644))
    descriptors = []
    try:
        for path, _, mode in files:
            try:
                descriptors.append(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
            except FileExistsError:
                raise FileError("'%s' exists; remove it or choose another prefix" % path, 3) from None
    except BaseException:
        for fd, (path, _, _) in zip(descriptors, files):
            os.close(fd)
            os.unlink(path)
        raise
    for fd, (_, text, mode) in zip(descriptors, files):
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text + "\n")
            f.flush()
            os.fsync(f.fileno())


def sign(path, key, out=None):
    """Verify the artifact at `path` in full and sign it with `key` (a SecretKey, its text or a .key
    path), writing atomically to `out` (default: replace `path`). Returns the signer's key id."""
    if not isinstance(key, SecretKey):
        key = SecretKey.parse(key)
    error = _lib.Error()
    raise_for(_lib.kiln.kiln_artifact_sign(os.fspath(path).encode(), None if out is None else os.fspath(out).encode(),
                                           ctypes.byref(key._struct), None, ctypes.byref(error)), error)
    state, key_id = signature_of_path(path if out is None else out)
    if state == "unsigned":
        raise ArgumentError("signing '%s' left it unsigned" % path, 1)
    return key_id
