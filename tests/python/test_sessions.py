"""Sessions at real sizes from Python: narrowing a session's dims plans its
arena for the narrower bound and refuses sizes outside it, kiln.load sets
the defaults of the sessions Program.run makes, an arena limit too small
for the domain is a LimitError that says how to narrow, and fit= plans for
exactly the sizes of given inputs; a closed program or session refuses to
be used (a session made before its program was closed still runs)."""
import subprocess
import sys

import numpy
import pytest

import kiln

ROW = 8  # the MLP's input width


def rows(batch):
    return numpy.linspace(-1, 1, batch * ROW, dtype=numpy.float32).reshape(batch, ROW)


@pytest.fixture
def program(mlp_path):
    return kiln.load(mlp_path)


def test_a_narrowed_session_runs_inside_its_bound_only(program, mlp_path, tmp_path, run_kiln):
    session = program.session(dims={"batch": (2, 3)})
    for batch in (2, 3):
        numpy.testing.assert_array_equal(session.run(x=rows(batch))["y"], program.run(x=rows(batch))["y"])
    for batch in (1, 4):
        with pytest.raises(kiln.ContractError) as refused:
            session.run(x=rows(batch))
        assert refused.value.status_name == "KILN_ERR_SHAPE_GUARD"
        assert str(refused.value).startswith("input 'x' axis 0 (batch): %d is outside this session's 2..3" % batch)
        assert "the artifact allows 1..16" in str(refused.value)
    assert program.run(x=rows(4))["y"].shape == (4, 4)  # the program's own sessions are not narrowed
    # kiln run --dim refuses it with the same message.
    numpy.save(tmp_path / "x.npy", rows(4))
    done = run_kiln("run", mlp_path, "--input", "x=%s" % (tmp_path / "x.npy"), "--dim", "batch=2..3")
    assert done.returncode == 1
    assert str(refused.value) in done.stderr


def test_arena_sizes_follow_the_bound(program, mlp_path):
    plan = kiln.inspect(mlp_path)["memory_plan"]
    assert program.arena_bytes == plan["arena_bytes"] == program.session().arena_bytes
    (growth,) = plan["growth"]
    for size in ("min", "mid", "max"):
        assert program.session(dims={"batch": growth[size]}).arena_bytes == growth["arena_at_%s_bytes" % size]
    # The upper bound decides: 2..3 plans for 3, and narrower is smaller than the whole domain.
    assert program.session(dims={"batch": (2, 3)}).arena_bytes == program.session(dims={"batch": 3}).arena_bytes
    assert program.session(dims={"batch": 3}).arena_bytes < program.arena_bytes


@pytest.mark.parametrize("batch", [1, 5, 16])
def test_fit_plans_for_exactly_the_given_inputs(program, batch):
    x = rows(batch)
    fitted = program.session(fit={"x": x})
    assert fitted.arena_bytes == program.session(dims={"batch": (batch, batch)}).arena_bytes
    numpy.testing.assert_array_equal(fitted.run(x=x)["y"], program.run(x=x)["y"])
    if batch > 1:
        with pytest.raises(kiln.ContractError, match="outside this session's %d..%d" % (batch, batch)):
            fitted.run(x=rows(batch - 1))


def test_load_sets_the_defaults_of_run(mlp_path):
    narrowed = kiln.load(mlp_path, dims={"batch": (1, 4)})
    assert narrowed.run(x=rows(4))["y"].shape == (4, 4)
    assert narrowed._thread_session().arena_bytes == narrowed.session(dims={"batch": 4}).arena_bytes
    with pytest.raises(kiln.ContractError, match="5 is outside this session's 1..4"):
        narrowed.run(x=rows(5))
    assert narrowed.arena_bytes == kiln.load(mlp_path).arena_bytes  # the artifact's domain is unchanged
    # An explicit session does not take the load defaults.
    assert narrowed.session().run(x=rows(16))["y"].shape == (16, 4)


def test_an_arena_limit_under_the_domain_says_how_to_narrow(program, mlp_path, tmp_path, run_kiln):
    limit = program.session(dims={"batch": 7}).arena_bytes + 16  # batch 1..7 fits, 8 does not
    with pytest.raises(kiln.LimitError) as refused:
        program.session(max_arena=limit)
    message = str(refused.value)
    assert refused.value.status_name == "KILN_ERR_LIMIT"
    assert "over the limit of %d bytes" % limit in message
    assert "with batch=1..7 it needs" in message and "narrow the session's dims" in message
    assert "from Python: kiln.load(..., dims={'NAME': (MIN, MAX)}) or program.session(dims=..., max_arena=BYTES)" \
        in message
    # The C part is what kiln run says for the same limit.
    numpy.save(tmp_path / "x.npy", rows(2))
    done = run_kiln("run", mlp_path, "--input", "x=%s" % (tmp_path / "x.npy"), "--max-arena", str(limit))
    assert done.returncode == 1
    assert message.split(" (from Python:")[0] in done.stderr
    # The narrowing it suggests fits.
    assert program.session(dims={"batch": (1, 7)}, max_arena=limit).run(x=rows(7))["y"].shape == (7, 4)


def test_load_with_a_small_arena_limit_fails_at_the_first_run(mlp_path):
    limited = kiln.load(mlp_path, max_arena=1000)  # loading has no resource limit (DESIGN.md §4)
    assert limited.arena_bytes > 1000
    with pytest.raises(kiln.LimitError, match="from Python: kiln.load"):
        limited.run(x=rows(1))
    fits = kiln.load(mlp_path, dims={"batch": (1, 7)}, max_arena=1000)
    assert fits.run(x=rows(7))["y"].shape == (7, 4)


def test_a_session_can_only_narrow(program):
    with pytest.raises(kiln.ArgumentError, match="a session can only narrow a dim"):
        program.session(dims={"batch": (0, 3)})
    with pytest.raises(kiln.ArgumentError, match="'seq' is not a dim of program"):
        program.session(dims={"seq": (1, 3)})


def test_a_numpy_integer_is_one_size(program):
    lengths = numpy.array([2, 5, 3])
    session = program.session(dims={"batch": lengths.max()})
    assert session.arena_bytes == program.session(dims={"batch": (5, 5)}).arena_bytes
    assert session.run(x=rows(5))["y"].shape == (5, 4)


USE_AFTER_CLOSE = {
    "session.run": "s = program.session(); s.run(x=x); s.close(); s.run(x=x)",
    "session.arena_bytes": "s = program.session(); s.close(); s.arena_bytes",
    "program.arena_bytes": "program.close(); program.arena_bytes",
    "program.signature": "program.close(); program.signature",
    "program.run": "program.close(); program.run(x=x)",
    "program.replay_evidence": "program.close(); program.replay_evidence()",
}


@pytest.mark.parametrize("use", sorted(USE_AFTER_CLOSE))
def test_a_closed_object_refuses_to_be_used(scale_path, use):
    # In a child process: a regression would crash the interpreter (it once did), not fail this suite.
    code = ("import kiln, numpy\nprogram = kiln.load(%r)\nx = numpy.ones((2, 2))\n"
            "try:\n    %s\nexcept kiln.ArgumentError as e:\n    print(e)\n" % (str(scale_path), USE_AFTER_CLOSE[use]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in ("program 'Scale' is closed", "this session of program 'Scale' is closed")


def test_a_session_outlives_its_closed_program(scale_path):
    program = kiln.load(scale_path)
    session = program.session()
    program.close()
    assert session.run(x=numpy.ones((2, 2)))["y"].tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_a_profiling_session_records_each_node(program):
    """Session(profile=True): per node its op, path, calls, time and last shape (spec/bench-json.md §1)."""
    session = program.session(profile=True, reference_kernels=True)
    session.run(x=rows(3))
    session.profile_reset()  # the first run left out
    for batch in (2, 5):
        session.run(x=rows(batch))
    summary = session.profile_summary()
    assert summary["runs"] == 2
    assert 0 < summary["node_nanoseconds"] <= summary["nanoseconds"]
    nodes = session.profile()
    assert len(nodes) == summary["node_count"] > 0
    assert [n["node"] for n in nodes] == list(range(len(nodes)))
    assert sum(n["nanoseconds"] for n in nodes) == summary["node_nanoseconds"]
    ran = [n for n in nodes if n["path"] != "not-run"]
    assert ran, nodes
    for n in ran:
        assert n["runs"] == 2 and n["fused_into"] is None
        assert n["path"] in ("reference", "vector", "view"), n  # reference kernels: no oneDNN, nothing fused
        assert 0 < n["min_nanoseconds"] * 2 <= n["nanoseconds"]
        assert n["shape"][0] == 5 and n["dtype"] == "f32"  # the last run's batch
    assert {n["op"] for n in ran} >= {"gemm"}
    assert [n for n in ran if n["op"] == "gemm"][0]["path"] == "reference"
    with pytest.raises(kiln.ArgumentError) as refused:
        program.session().profile()
    assert "options.profile" in str(refused.value)
