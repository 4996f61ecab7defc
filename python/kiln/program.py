"""Loading artifacts and running them with NumPy arrays.

A Program is the loaded, verified, immutable program: shared freely across
threads. Running needs a Session (the arena, the bound inputs); a Program
keeps one per thread behind `run` and `__call__`, created on first use
with the options given to `load`, so that threads never share one. The GIL
is released while the C library runs.
"""
import collections
import ctypes
import numbers
import os
import threading

import numpy

from . import _lib, _tensors
from ._describe import describe_bytes, describe_path
from ._replay import generation_cases, replay_all, replay_generation_all
from .contract import Check, Dim
from .errors import ArgumentError, ContractError, Error, from_status, raise_for
from .keys import PublicKey

Io = collections.namedtuple("Io", "name dtype shape rank")
Io.__doc__ = """An input or output: its name, NumPy dtype, shape text over the dims ("[batch, 2]") and rank."""

Problem = collections.namedtuple("Problem", "severity code location message")

VERIFY_POLICIES = {"full": 0, "none": 1, "lazy": 2}


def _text(function, handle, index):
    """The text a kiln_*_text(handle, index, buffer, size) function writes, whatever its length."""
    size = 256
    while True:
        buffer = ctypes.create_string_buffer(size)
        needed = function(handle, index, buffer, size)
        if needed < size:
            return buffer.value.decode()
        size = needed + 1


def _problems(report):
    out = []
    for i in range(_lib.kiln.kiln_report_count(report)):
        info = _lib.ProblemInfo()
        _lib.kiln.kiln_report_problem(report, i, ctypes.byref(info))
        out.append(Problem("error" if info.severity == 0 else "warning", info.code.decode(),
                           info.location.decode(), info.message.decode()))
    return out


def read_public_key(key):
    """A kiln public key: a kiln.PublicKey, its text ("kiln-ed25519-public-v1 ...", str or bytes) or a .pub path."""
    if isinstance(key, PublicKey):
        return key
    return PublicKey.parse(key)


def _load_options(verify, trusted_keys, require_signature, limits):
    """kiln_load_options for these arguments, and what it points at (keep it alive as long as the options)."""
    options = _lib.init(_lib.LoadOptions)
    if verify not in VERIFY_POLICIES:
        raise ArgumentError("verify must be one of %s, got %r" % (", ".join(VERIFY_POLICIES), verify), 1)
    options.verify = VERIFY_POLICIES[verify]
    limit_struct = _lib.init(_lib.Limits)
    for name, value in (limits or {}).items():
        if not hasattr(limit_struct, name) or name == "struct_size":
            raise ArgumentError("%r is not a kiln limit (kiln_limits)" % name, 1)
        setattr(limit_struct, name, value)
    options.limits = ctypes.pointer(limit_struct)
    if isinstance(trusted_keys, (str, bytes, os.PathLike, PublicKey)):
        trusted_keys = [trusted_keys]  # one key, not a sequence of characters
    keys = [read_public_key(k) for k in trusted_keys or ()]
    key_array = (_lib.PublicKey * max(len(keys), 1))()
    for i, key in enumerate(keys):
        key_array[i] = key._struct
    options.trusted_keys = ctypes.cast(key_array, ctypes.POINTER(_lib.PublicKey))
    options.trusted_key_count = len(keys)
    options.require_signature = bool(require_signature)
    return options, (key_array, limit_struct)


def load(source, *, verify="full", trusted_keys=(), require_signature=False, limits=None, dims=None,
         max_arena=None, threads=None):
    """Load and verify an artifact: a path, or its bytes.

    verify: "full" (every checksum and hash now, the default), "lazy"
    (weights when first run) or "none". trusted_keys: public keys (text,
    .pub paths or kiln.PublicKey) whose signatures are accepted (another
    signer is refused); require_signature: refuse unsigned artifacts.
    limits: {kiln_limits field: value}. dims ({"seq": (1, 512)}), max_arena
    (bytes) and threads are the defaults of the sessions `run` creates.
    Raises the kiln.Error subclass of the first problem, whose message
    names every incompatibility found."""
    options, keys = _load_options(verify, trusted_keys, require_signature, limits)
    handle, report, error = ctypes.c_void_p(), ctypes.c_void_p(), _lib.Error()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        status = _lib.kiln.kiln_program_load_memory(data, len(data), ctypes.byref(options), ctypes.byref(handle),
                                                    ctypes.byref(report), ctypes.byref(error))
        origin = "<memory>"
    else:
        origin = os.fspath(source)
        status = _lib.kiln.kiln_program_load(origin.encode(), ctypes.byref(options), ctypes.byref(handle),
                                             ctypes.byref(report), ctypes.byref(error))
    del keys
    problems = _problems(report) if report.value else []
    if report.value:
        _lib.kiln.kiln_report_free(report)
    if status != 0:
        try:
            raise_for(status, error)
        except Exception as exc:
            exc.problems = problems
            raise
    return Program(handle, origin, problems, dims=dims, max_arena=max_arena, threads=threads)


class _SessionHandle:
    """A session's C handle and its input wrappers, freed exactly once."""

    __slots__ = ("handle", "wrappers")

    def __init__(self, handle):
        self.handle, self.wrappers = handle, []

    def release(self):
        if self.handle:
            for wrapper in self.wrappers:
                if wrapper is not None:
                    _lib.kiln.kiln_tensor_free(wrapper)
            self.wrappers = []
            _lib.kiln.kiln_session_free(self.handle)
            self.handle = None


class _Owned:
    """Owns a program's C handle and those of its live sessions. A session
    must be freed before its program; the garbage collector may finalize a
    cycle holding both in any order, so whichever finalizer runs first does
    it right: this one frees the sessions still registered, then the
    program; a session's own close unregisters it."""

    __slots__ = ("handle", "sessions", "lock")

    def __init__(self, handle):
        self.handle, self.sessions, self.lock = handle, set(), threading.Lock()

    def add(self, session_handle):
        with self.lock:
            self.sessions.add(session_handle)

    def release_session(self, session_handle):
        with self.lock:
            self.sessions.discard(session_handle)
            session_handle.release()

    def __del__(self):
        if _lib is None or _lib.kiln is None:
            return
        with self.lock:
            for session_handle in list(self.sessions):
                session_handle.release()
            self.sessions.clear()
            if self.handle:
                _lib.kiln.kiln_program_free(self.handle)
                self.handle = None


class State:
    """The state tensors of one program (format 1.3): a decoder's KV cache, say, kept between runs
    and shared by the sessions of the program's methods (program.session(state=...)). Empty when
    made; reset() empties it again. One run at a time may use it."""

    def __init__(self, program):
        self._program_owner = program._owner  # the artifact (its state declarations) outlives the state
        self._program_name = program.name
        handle, error = ctypes.c_void_p(), _lib.Error()
        raise_for(_lib.kiln.kiln_state_new(program._open_handle(), ctypes.byref(handle), ctypes.byref(error)), error)
        self._handle = handle
        self.names = list(program.state_names)

    def reset(self):
        """Empty every state (length 0): start a new sequence."""
        _lib.kiln.kiln_state_reset(self._handle)

    def length(self, name):
        """The rows state `name` holds now."""
        value, error = ctypes.c_int64(), _lib.Error()
        raise_for(_lib.kiln.kiln_state_length(self._handle, name.encode(), ctypes.byref(value), ctypes.byref(error)),
                  error)
        return value.value

    def set_length(self, name, length):
        """Make state `name` hold `length` rows, as though runs had appended them (rows it did not
        hold keep their bytes: zeros after a reset): to time or probe a method at a given `past`."""
        error = _lib.Error()
        raise_for(_lib.kiln.kiln_state_set_length(self._handle, name.encode(), int(length), ctypes.byref(error)),
                  error)

    def write(self, name, rows):
        """Make state `name` hold the rows of `rows` (the state's shape, its growing axis at most the
        capacity long; copied), its length that axis's size: a cache computed elsewhere."""
        handle, array = _tensors.wrap(rows)
        try:
            error = _lib.Error()
            raise_for(_lib.kiln.kiln_state_write(self._handle, name.encode(), handle, ctypes.byref(error)), error)
        finally:
            _lib.kiln.kiln_tensor_free(handle)
        del array

    def read(self, name):
        """A new array: the rows state `name` holds now."""
        tensor, error = ctypes.c_void_p(), _lib.Error()
        raise_for(_lib.kiln.kiln_state_read(self._handle, name.encode(), ctypes.byref(tensor), ctypes.byref(error)),
                  error)
        try:
            return _tensors.output_array(tensor)
        finally:
            _lib.kiln.kiln_tensor_free(tensor)

    def __del__(self):
        if _lib is not None and _lib.kiln is not None and getattr(self, "_handle", None):
            _lib.kiln.kiln_state_free(self._handle)
            self._handle = None


class Program:
    """A loaded, verified program: its interface, and `run` over NumPy arrays."""

    def __init__(self, handle, origin, problems, dims=None, max_arena=None, threads=None, _root=None):
        # A method's Program shares its artifact's owner: the artifact lives while any of them does.
        self._owner = _root._owner if _root is not None else _Owned(handle)
        self._handle = handle
        self.origin = origin
        self.warnings = [p for p in problems if p.severity == "warning"]
        self._session_defaults = dict(dims=dims, max_arena=max_arena, threads=threads)
        self._local = threading.local()
        kiln = _lib.kiln
        self.name = kiln.kiln_program_name(handle).decode()
        self.inputs = [self._io(kiln.kiln_program_input, kiln.kiln_program_input_shape_text, i)
                       for i in range(kiln.kiln_program_input_count(handle))]
        self.outputs = [self._io(kiln.kiln_program_output, kiln.kiln_program_output_shape_text, i)
                        for i in range(kiln.kiln_program_output_count(handle))]
        self.dims = []
        for d in range(kiln.kiln_program_dim_count(handle)):
            info = _lib.DimInfo()
            kiln.kiln_program_dim(handle, d, ctypes.byref(info))
            self.dims.append(Dim(info.name.decode(), min=info.min, max=info.max, multiple_of=info.multiple_of))
        self.metadata = {}
        for m in range(kiln.kiln_program_metadata_count(handle)):
            key, value = ctypes.c_char_p(), ctypes.c_char_p()
            kiln.kiln_program_metadata(handle, m, ctypes.byref(key), ctypes.byref(value))
            self.metadata[key.value.decode()] = value.value.decode()
        self.checks = {}
        for i, io in enumerate(self.inputs):
            check = _lib.init(_lib.InputCheck)
            if kiln.kiln_program_input_check(handle, i, ctypes.byref(check)):
                self.checks[io.name] = Check(
                    range=(check.min, check.max) if check.has_range else None, finite=check.finite_only,
                    categories=[check.categories[k] for k in range(check.category_count)] or None,
                    unit=check.unit.decode() if check.unit else None,
                    description=check.description.decode() if check.description else None)
        self.evidence = [kiln.kiln_program_evidence_name(handle, c).decode()
                         for c in range(kiln.kiln_program_evidence_count(handle))]
        self.method = kiln.kiln_program_method_name(handle).decode()
        self.state_names = []
        for i in range(kiln.kiln_program_state_count(handle)):
            name, error = ctypes.c_char_p(), _lib.Error()
            raise_for(kiln.kiln_program_state_at(handle, i, ctypes.byref(name), None, None, None, None, None,
                                                 ctypes.byref(error)), error)
            self.state_names.append(name.value.decode())
        # The calling thread's state, which every method's run() shares (the root's thread-local).
        self._state_local = _root._state_local if _root is not None else threading.local()
        if _root is None:
            # Every method of the artifact, the first this Program: {name: Program}, shared by them all.
            self.methods = {self.method: self}
            for m in range(1, kiln.kiln_program_method_count(handle)):
                method = Program(kiln.kiln_program_method_at(handle, m), origin, (), max_arena=max_arena,
                                 threads=threads, _root=self)
                self.methods[method.method] = method
            for method in self.methods.values():
                method.methods = self.methods

    def __getattr__(self, name):
        """program.decode is the method "decode" of the artifact (program.methods["decode"]): a
        Program, so program.decode(t) runs it. Names the Program itself has come first."""
        methods = self.__dict__.get("methods")
        if methods is not None and name in methods:
            return methods[name]
        raise AttributeError("program %r has no attribute or method %r (its methods: %s)"
                             % (self.__dict__.get("name"), name, ", ".join(methods or ())))

    def _open_handle(self):
        """The C program; kiln.ArgumentError once close() let it go (the C library is never given NULL)."""
        if self._handle is None:
            raise ArgumentError("program '%s' is closed" % self.name, 1)
        return self._handle

    def _io(self, describe, shape_text, index):
        info = _lib.IoInfo()
        describe(self._handle, index, ctypes.byref(info))
        return Io(info.name.decode(), _tensors.numpy_dtype(info.dtype), _text(shape_text, self._handle, index),
                  info.rank)

    @property
    def arena_bytes(self):
        """The arena of a session over the whole declared domain (None if it overflows 64 bits)."""
        value = _lib.kiln.kiln_program_arena_bytes(self._open_handle())
        return None if value == 2 ** 64 - 1 else value

    def session_arena(self, *, dims=None, max_arena=None):
        """The arena a session with these options would allocate, without allocating it
        (kiln_program_session_arena): bytes, or kiln.LimitError naming the narrowings that fit."""
        options, bounds = _session_options(dims, max_arena, None, False, False)
        value, error = ctypes.c_uint64(), _lib.Error()
        raise_for(_lib.kiln.kiln_program_session_arena(self._open_handle(), ctypes.byref(options),
                                                       ctypes.byref(value), ctypes.byref(error)), error)
        return value.value

    @property
    def signature(self):
        """(state, key id hex): state "unsigned", "verified" or "unverified"."""
        info = _lib.SignatureInfo()
        _lib.kiln.kiln_program_signature(self._open_handle(), ctypes.byref(info))
        state = {0: "unsigned", 1: "verified", 2: "unverified"}[info.state]
        return state, (bytes(info.key_id).hex() if info.state else None)

    def generate(self, prompt, max_tokens=32, *, temperature=0.0, top_k=0, seed=0, stop=None, threads=None,
                 thread_policy="adaptive", prefill=None, decode=None, ids=None, position=None, mask=None,
                 logits=None, on_token=None, return_logits=False):
        """Generate tokens (spec/generate.md): the prefill method on `prompt` (token ids), then the
        decode method once per new token over one cache kept as state, each token the largest logit
        of the last row (temperature 0) or sampled from softmax(logits / temperature) among the
        top_k largest (0: all), seeded. Stops after max_tokens, at the token `stop` (kept), or when
        on_token(index, token) returns False. The methods' inputs are found by role (ids or
        input_ids; position, position_ids or positions; attention_mask); prefill, decode, ids,
        position, mask and logits name them otherwise. Returns the new tokens as a list, with
        return_logits=True also [logits row per token] (float arrays). A step the contract refuses
        (a full cache) raises its error (ContractError), the tokens made so far in its
        .tokens."""
        kiln = _lib.kiln
        options = _lib.init(_lib.GenerateOptions)
        for field, value in (("prefill_method", prefill), ("decode_method", decode), ("ids_input", ids),
                             ("position_input", position), ("mask_input", mask), ("logits_output", logits)):
            if value is not None:
                setattr(options, field, str(value).encode())
        if int(max_tokens) < 1:
            raise ArgumentError("max_tokens must be at least 1, got %r" % (max_tokens,), 1)
        options.max_tokens = int(max_tokens)
        options.temperature = float(temperature)
        options.top_k = int(top_k)
        options.seed = int(seed)
        options.stop_token = -1 if stop is None else int(stop)
        options.threads = int(threads or 0)
        if thread_policy not in ("adaptive", "fixed"):
            raise ArgumentError("thread_policy must be 'adaptive' or 'fixed', got %r" % (thread_policy,), 1)
        options.thread_policy = 1 if thread_policy == "fixed" else 0
        rows, failure = [], []

        def token_made(_user, index, token):
            try:
                if return_logits:
                    array = _tensors.output_array(kiln.kiln_generator_logits(generator))
                    rows.append(array.reshape(-1, array.shape[-1])[-1].copy())
                return True if on_token is None else on_token(index, token) is not False
            except BaseException as exc:  # raised again below, after the C loop has stopped
                failure.append(exc)
                return False

        callback = _lib.TOKEN_CALLBACK(token_made)
        options.on_token = callback
        generator, error = ctypes.c_void_p(), _lib.Error()
        raise_for(kiln.kiln_generator_new(self._open_handle(), ctypes.byref(options), ctypes.byref(generator),
                                          ctypes.byref(error)), error)
        try:
            prompt = numpy.ascontiguousarray(numpy.asarray(prompt, dtype=numpy.int64).reshape(-1))
            tokens = (ctypes.c_int64 * options.max_tokens)()
            count = ctypes.c_uint32()
            status = kiln.kiln_generator_run(generator, prompt.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                                             len(prompt), tokens, ctypes.byref(count), ctypes.byref(error))
        finally:
            kiln.kiln_generator_free(generator)
        made = list(tokens[:count.value])
        if failure:
            raise failure[0]
        if status != 0:
            exc = from_status(status, error.message.decode("utf-8", "replace"))
            exc.tokens = made
            raise exc
        if return_logits:
            return made, rows
        return made

    def new_state(self):
        """A new, empty kiln.State of this program, to share between sessions of its methods."""
        return State(self)

    @property
    def state(self):
        """The calling thread's State, which run() and calling the program or its methods use (None
        when the program declares no state): program.prefill(x) then program.decode(t) extend one
        cache; program.state.reset() starts a new sequence."""
        if not self.state_names:
            return None
        state = getattr(self._state_local, "state", None)
        if state is None:
            state = self._state_local.state = State(self)
        return state

    def session(self, *, dims=None, max_arena=None, threads=None, reference_kernels=False,
                skip_input_checks=False, fit=None, thread_policy="adaptive", profile=False, state=None):
        """A new Session (one thread at a time): dims {"seq": (1, 512) or 512} narrows the
        domain it runs, max_arena (bytes) is its arena limit. fit={input name: array} instead
        narrows every dim to the size those inputs give it: the smallest arena that runs them.
        threads is the most a run uses (default every core); thread_policy "adaptive" (default)
        runs on fewer while other processes hold cores, "fixed" always on `threads`.
        profile=True records per node what each run took (Session.profile()). state (a kiln.State
        of this program) is the state its runs read and extend, else it has its own."""
        return Session(self, dims=dims, max_arena=max_arena, threads=threads, reference_kernels=reference_kernels,
                       skip_input_checks=skip_input_checks, fit=fit, thread_policy=thread_policy, profile=profile,
                       state=state)

    def _thread_session(self):
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = Session(self, state=self.state, **self._session_defaults)
        return session

    def run(self, *args, **inputs):
        """Run on NumPy arrays, by input name (or position); return {output name: new array}.
        Inputs outside the contract raise kiln.ContractError with the C message."""
        return self._thread_session().run(*args, **inputs)

    def __call__(self, *args, **inputs):
        """As run, returning the outputs as a tuple in declared order."""
        return tuple(self._thread_session().run(*args, **inputs).values())

    def replay_evidence(self):
        """Run every stored known-input case; return [(case, [result dict per output])], raising
        kiln.EvidenceError for the first case that does not hold."""
        return replay_all(self)

    @property
    def generation(self):
        """The artifact's generation cases (format 1.3): [{name, prefill_method, decode_method,
        prompt, tokens, margin}], a prompt and the tokens a greedy generation of it must make."""
        return generation_cases(self)

    def replay_generation(self):
        """Replay every generation case (the prefill on its prompt, a decode per recorded token,
        the recorded tokens fed back); return [(case, {passed, matched})], raising
        kiln.EvidenceError for the first that fails or cannot run."""
        return replay_generation_all(self)

    def inspect(self):
        """The data of `kiln inspect --json` for this artifact (spec/inspect-json.md): its file's, or
        for a program loaded from memory that of its bytes ("file" is "<memory>")."""
        method = self.method if len(self.methods) > 1 else None
        if self.origin != "<memory>":
            return describe_path(self.origin, method)
        data = getattr(self.methods[next(iter(self.methods))], "_bytes", None)
        if data is None:
            raise Error("this program was loaded from memory without keeping its bytes: inspect the artifact", 0)
        return describe_bytes(data, method)

    def close(self):
        """Let the program go: it is freed now, or when the last Session made from it is; using the
        Program afterwards raises kiln.ArgumentError (its Sessions still run)."""
        self._local = threading.local()
        self._owner = None
        self._handle = None

    def __repr__(self):
        return "<kiln.Program %r%s: %s -> %s>" % (
            self.name, " method %r" % self.method if len(self.methods) > 1 else "", ", ".join("%s %s%s" % (i.name, _dtype_name(i.dtype), i.shape) for i in self.inputs),
            ", ".join("%s %s%s" % (o.name, _dtype_name(o.dtype), o.shape) for o in self.outputs))


def _dtype_name(dtype):
    code = _tensors.CODES.get(dtype.str)
    return _tensors.NAMES.get(code, str(dtype))


_THREAD_POLICIES = {"adaptive": 0, "fixed": 1}  # kiln_thread_policy


def _session_options(dims, max_arena, threads, reference_kernels, skip_input_checks, thread_policy="adaptive",
                     profile=False):
    """kiln_session_options for these arguments, and the kiln_dim_bound array it points at (keep it
    alive as long as the options). dims: {name: (min, max) or one size}."""
    options = _lib.init(_lib.SessionOptions)
    bounds = []
    for name, value in (dims or {}).items():
        low, high = (value, value) if isinstance(value, numbers.Integral) else value  # numpy ints too
        bounds.append(_lib.DimBound(name.encode(), int(low), int(high)))
    bound_array = (_lib.DimBound * max(len(bounds), 1))(*bounds)
    options.dims = ctypes.cast(bound_array, ctypes.POINTER(_lib.DimBound))
    options.dim_count = len(bounds)
    options.max_arena_bytes = int(max_arena or 0)
    options.threads = int(threads or 0)
    if thread_policy not in _THREAD_POLICIES:
        raise ArgumentError("thread_policy is 'adaptive' or 'fixed', not %r" % (thread_policy,), 1)
    options.thread_policy = _THREAD_POLICIES[thread_policy]
    options.reference_kernels = bool(reference_kernels)
    options.skip_input_checks = bool(skip_input_checks)
    options.profile = bool(profile)
    return options, bound_array


class Session:
    """The state of running one program on one thread at a time: its arena
    (sized once for the upper bound of its dims) and its bound inputs."""

    def __init__(self, program, *, dims=None, max_arena=None, threads=None, reference_kernels=False,
                 skip_input_checks=False, fit=None, thread_policy="adaptive", profile=False, state=None):
        self._program_owner = program._owner  # the program outlives the session
        self._program_name = program.name
        options, self._bounds = _session_options(dims, max_arena, threads, reference_kernels, skip_input_checks,
                                                 thread_policy, profile)
        if state is not None and not isinstance(state, State):
            raise ArgumentError("state is a kiln.State (program.new_state()), not %s" % type(state).__name__, 1)
        self._state = state  # the state outlives the session
        options.state = state._handle if state is not None else None
        handle, error = ctypes.c_void_p(), _lib.Error()
        if fit is None:
            status = _lib.kiln.kiln_session_new(program._open_handle(), ctypes.byref(options), ctypes.byref(handle),
                                                ctypes.byref(error))
        else:
            status = self._new_fitted(program, options, fit, handle, error)
        if status == 13:  # KILN_ERR_LIMIT: say how to narrow from Python
            error.message = (error.message.decode("utf-8", "replace") +
                             " (from Python: kiln.load(..., dims={'NAME': (MIN, MAX)}) or "
                             "program.session(dims=..., max_arena=BYTES))").encode()[:_lib.ERROR_MESSAGE_SIZE - 1]
        raise_for(status, error)
        self._cell = _SessionHandle(handle)
        self._program_owner.add(self._cell)
        self._handle = handle
        self._error = _lib.Error()
        kiln = _lib.kiln
        self._input_names = [io.name for io in program.inputs]
        self._input_keys = [io.name.encode() for io in program.inputs]
        self._output_names = [kiln.kiln_session_output_name(handle, o).decode()
                              for o in range(kiln.kiln_session_output_count(handle))]
        self._wrappers = self._cell.wrappers = [None] * len(self._input_names)
        self._shape = (ctypes.c_int64 * _lib.MAX_RANK)()
        self._arrays = [None] * len(self._input_names)  # borrowed by the session until the next run

    @staticmethod
    def _new_fitted(program, options, fit, handle, error):
        """kiln_session_new_for_inputs over the arrays of `fit` (wrapped, not copied)."""
        kiln = _lib.kiln
        wrappers, arrays = [], []
        try:
            for value in fit.values():
                wrapper, array = _tensors.wrap(value)
                wrappers.append(wrapper)
                arrays.append(array)
            names = (ctypes.c_char_p * max(len(fit), 1))(*(n.encode() for n in fit))
            tensors = (ctypes.c_void_p * max(len(fit), 1))(*(w.value for w in wrappers))
            options.dim_count = 0
            return kiln.kiln_session_new_for_inputs(program._open_handle(), ctypes.byref(options), len(fit), names,
                                                    tensors, ctypes.byref(handle), ctypes.byref(error))
        finally:
            for wrapper in wrappers:
                kiln.kiln_tensor_free(wrapper)

    def _open_handle(self):
        """The C session; kiln.ArgumentError once close() freed it (the C library is never given NULL)."""
        if self._handle is None:
            raise ArgumentError("this session of program '%s' is closed" % self._program_name, 1)
        return self._handle

    @property
    def arena_bytes(self):
        return _lib.kiln.kiln_session_arena_bytes(self._open_handle())

    @property
    def threads(self):
        """The most threads a run uses."""
        return _lib.kiln.kiln_session_threads(self._open_handle())

    @property
    def run_threads(self):
        """The threads the last run used (fewer than `threads` under the adaptive policy while
        other processes held cores)."""
        return _lib.kiln.kiln_session_run_threads(self._open_handle())

    def _inputs_by_index(self, args, inputs):
        if len(args) > len(self._input_names):
            raise ArgumentError("program %r takes %d input%s, %d given" % (
                self._program_name, len(self._input_names), "" if len(self._input_names) == 1 else "s",
                len(args)), 1)
        values = list(args) + [None] * (len(self._input_names) - len(args))
        for name, value in inputs.items():
            try:
                index = self._input_names.index(name)
            except ValueError:
                # KILN_ERR_UNKNOWN_INPUT, and the class and message kiln_session_set_input gives it
                raise ContractError("'%s' is not an input of program '%s' (inputs: %s)" % (
                    name, self._program_name, ", ".join("'%s'" % n for n in self._input_names)), 21) from None
            if values[index] is not None:
                raise ArgumentError("input '%s' is given twice" % name, 1)
            values[index] = value
        missing = [n for n, v in zip(self._input_names, values) if v is None]
        if missing:
            raise ContractError("missing input%s %s: every declared input must be set" % (
                "" if len(missing) == 1 else "s", ", ".join("'%s'" % n for n in missing)), 20)
        return values

    def run(self, *args, **inputs):
        """Run on NumPy arrays (by position or by name); return {output name: new array}."""
        kiln, error, shape = _lib.kiln, self._error, self._shape
        self._open_handle()
        values = self._inputs_by_index(args, inputs)
        for i, value in enumerate(values):
            array, code = _tensors.as_input(value)
            if array.ndim > _lib.MAX_RANK:
                raise ContractError("input '%s': rank %d is over kiln's %d" % (
                    self._input_names[i], array.ndim, _lib.MAX_RANK), 18)
            for a, extent in enumerate(array.shape):
                shape[a] = extent
            wrapper = self._wrappers[i]
            if wrapper is None:  # the first run: a wrapper the next runs point elsewhere (rewrap)
                wrapper, array = _tensors.wrap(array)
                self._wrappers[i] = wrapper
                raise_for(kiln.kiln_session_set_input(self._handle, self._input_keys[i], wrapper,
                                                      ctypes.byref(error)), error)
            else:
                raise_for(kiln.kiln_tensor_rewrap(wrapper, code, array.ndim, shape, array.ctypes.data, array.nbytes,
                                                  ctypes.byref(error)), error)
            self._arrays[i] = array
        raise_for(kiln.kiln_session_run(self._handle, ctypes.byref(error)), error)
        return {name: _tensors.output_array(kiln.kiln_session_output(self._handle, o))
                for o, name in enumerate(self._output_names)}

    def profile_summary(self):
        """What the profile of a session made with profile=True covers: {"runs", "nanoseconds" (their
        time inside the run, guards included), "node_nanoseconds" (the part in nodes), "node_count"};
        kiln.ArgumentError for a session that does not profile."""
        summary, error = _lib.ProfileSummary(struct_size=ctypes.sizeof(_lib.ProfileSummary)), self._error
        raise_for(_lib.kiln.kiln_session_profile_summary(self._open_handle(), ctypes.byref(summary),
                                                         ctypes.byref(error)), error)
        return {"runs": summary.runs, "nanoseconds": summary.nanoseconds,
                "node_nanoseconds": summary.node_nanoseconds, "node_count": summary.node_count}

    def profile(self):
        """Per node of the program, in order, a dict of what the profiled runs recorded
        (kiln_session_profile_node): "node", "op", "path" ("reference", "vector", "onednn",
        "view", "fused" or "not-run"), "activation_applied", "fused_into" (None unless fused),
        "runs", "fused_runs", "nanoseconds" (summed over the runs), "min_nanoseconds", "dtype"
        and "shape" (its result at its last run)."""
        kiln, error = _lib.kiln, self._error
        nodes = []
        for n in range(self.profile_summary()["node_count"]):
            p = _lib.NodeProfile(struct_size=ctypes.sizeof(_lib.NodeProfile))
            raise_for(kiln.kiln_session_profile_node(self._handle, n, ctypes.byref(p), ctypes.byref(error)), error)
            path = kiln.kiln_node_path_name(p.path).decode()
            nodes.append({"node": n, "op": p.op.decode(), "path": path,
                          "activation_applied": bool(p.applied_activation),
                          "fused_into": p.fused_into if path == "fused" else None,
                          "runs": p.runs, "fused_runs": p.fused_runs, "nanoseconds": p.nanoseconds,
                          "min_nanoseconds": p.min_nanoseconds,
                          "dtype": _tensors.NAMES.get(p.dtype),  # None before a run
                          "shape": tuple(p.shape[a] for a in range(p.rank))})
        return nodes

    def profile_reset(self):
        """Forget the profiled runs so far (a warm-up, say); nothing for a session that does not profile."""
        _lib.kiln.kiln_session_profile_reset(self._open_handle())

    def close(self):
        """Free the session now; running it afterwards raises kiln.ArgumentError."""
        if getattr(self, "_cell", None) is not None:
            self._program_owner.release_session(self._cell)
            self._cell = None
            self._handle = None

    def __del__(self):
        if _lib is not None and _lib.kiln is not None:
            self.close()
