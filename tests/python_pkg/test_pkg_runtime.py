"""The runtime API (etrt.load / Program.run / etrt.Tensor) with NumPy; no torch needed."""

import logging
import os
import threading

import numpy as np
import pytest

import etrt

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # the build-based cases need onnx (python3-onnx in CI)
    onnx = None


@pytest.fixture()
def add_pte(testdata):
    return os.path.join(testdata, "pte", "add.pte")


def one(value):
    return np.array([value], dtype=np.float32)


def test_load_lists_methods_and_io(add_pte):
    prog = etrt.load(add_pte)
    assert prog.method_names == ["forward"]
    ins, outs = prog.inputs("forward"), prog.outputs("forward")
    assert [i["dtype"] for i in ins] == ["float32", "float32"]
    assert ins[0]["shape"] == (1,) and ins[0]["device"] == "cpu"
    assert outs[0]["shape"] == (1,)


def test_run_returns_dlpack_tensors(add_pte):
    prog = etrt.load(add_pte)
    outs = prog.run("forward", one(2.0), one(3.5))
    assert len(outs) == 1
    out = outs[0]
    assert isinstance(out, etrt.Tensor)
    assert out.shape == (1,) and out.dtype == "float32" and out.device == "cpu"
    assert out.__dlpack_device__() == (1, 0)
    array = np.from_dlpack(out)
    assert array.tolist() == [5.5]
    # No copy: NumPy's array is etrt's output memory.
    assert array.__array_interface__["data"][0] == out.data_ptr
    assert np.from_dlpack(out).__array_interface__["data"][0] == out.data_ptr


def test_outputs_outlive_later_runs_and_the_program(add_pte):
    prog = etrt.load(add_pte)
    first = np.from_dlpack(prog.run("forward", one(1.0), one(1.0))[0])
    second = np.from_dlpack(prog.run("forward", one(10.0), one(10.0))[0])
    del prog
    assert first.tolist() == [2.0] and second.tolist() == [20.0]


def test_runs_from_threads(add_pte):
    prog = etrt.load(add_pte)
    results = {}

    def work(k):
        results[k] = float(np.from_dlpack(prog.run("forward", one(k), one(k))[0])[0])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k: 2.0 * k for k in range(8)}


def test_wrong_dtype_names_the_input(add_pte):
    prog = etrt.load(add_pte)
    with pytest.raises(etrt.InvalidArgumentError, match=r"input 1: dtype int32.*takes float32"):
        prog.run("forward", one(1.0), np.array([1], dtype=np.int32))


def test_strided_input_names_the_input(add_pte, tmp_path):
    prog = etrt.load(add_pte)
    strided = np.zeros(2, dtype=np.float32)[::2]  # one element, stride 2: still dense
    assert prog.run("forward", strided, one(1.0))[0].shape == (1,)
    with pytest.raises(etrt.InvalidArgumentError, match=r"input 0: strides"):
        prog.run("forward", np.zeros((2, 2), np.float32).T, one(1.0))


def test_bad_inputs_are_refused(add_pte):
    prog = etrt.load(add_pte)
    with pytest.raises(etrt.InvalidArgumentError, match="takes 2 input"):
        prog.run("forward", one(1.0))
    with pytest.raises(etrt.InvalidArgumentError, match="input 1: str has no __dlpack__"):
        prog.run("forward", one(1.0), "x")
    with pytest.raises(etrt.Error, match="input"):
        prog.run("forward", np.ones(3, np.float32), one(1.0))
    with pytest.raises(etrt.Error, match="nope"):
        prog.run("nope", one(1.0), one(1.0))
    with pytest.raises(etrt.InvalidArgumentError, match="stream"):
        prog.run("forward", one(1.0), one(1.0), stream="s")


def test_load_errors(tmp_path):
    with pytest.raises(etrt.Error, match="missing.pte"):
        etrt.load(tmp_path / "missing.pte")
    bad = tmp_path / "bad.pte"
    bad.write_bytes(b"\0" * 64)
    with pytest.raises(etrt.FormatError):
        etrt.load(bad)
    assert issubclass(etrt.FormatError, etrt.Error) and issubclass(etrt.Error, RuntimeError)


def test_support_table_comes_from_the_engine():
    cpu = etrt.supported_op_types("cpu")
    assert {"Conv", "Gemm", "MatMul", "Relu", "BatchNormalization", "MaxPool"} <= set(cpu)
    assert "NoSuchOp" not in cpu
    assert set(etrt.supported_op_types("cuda:0")) <= set(cpu) | {"EtrtSmId"}
    with pytest.raises(etrt.InvalidArgumentError, match="device 'gpu'"):
        etrt.supported_op_types("gpu")


def test_network_node_support_and_plan():
    net = etrt._etrt.Network()
    x = net.add_input("x", "float32", [2, 3], [2, 3])
    w = net.add_constant("w", "float32", [3, 4], np.ones((3, 4), np.float32).tobytes())
    (y,) = net.add_op("MatMul", "mm", [x, w], 1, [])
    assert net.value_info(y) == ("float32", (2, 4), (2, 4))
    assert net.supports(y, "cpu") is True
    with pytest.raises(etrt.InvalidArgumentError, match="input or a constant"):
        net.supports(x, "cpu")
    with pytest.raises(etrt.UnsupportedError, match="NoSuchOp"):
        net.add_op("NoSuchOp", "n", [x], 1, [])
    with pytest.raises(etrt.InvalidArgumentError, match="do not match"):
        net.add_constant("short", "float32", [3], b"\0" * 4)
    net.mark_output(y, "y")
    plan = net.build("cpu", 0, "test", 0, 0)
    assert isinstance(plan, bytes) and len(plan) > 0
    assert plan == net.build("cpu", 0, "test", 0, 0)  # deterministic


@pytest.fixture()
def mlp(tmp_path):
    """An ONNX MLP, its weights, and a function building it with etrt build."""
    if onnx is None:
        pytest.skip("needs onnx")
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("MatMul", ["r", "w2"], ["y"])],
        "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx_path = tmp_path / "mlp.onnx"
    onnx.save(model, onnx_path)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    return onnx_path, x, np.maximum(x @ w1, 0) @ w2


def test_built_program_matches_numpy(mlp, tmp_path, run_tool):
    onnx_path, x, expected = mlp
    pte = tmp_path / "mlp.pte"
    run_tool("build", onnx_path, "-o", pte, "--device", "cpu")
    got = np.from_dlpack(etrt.load(pte).run("forward", x)[0])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(bool(os.environ.get("ETRT_PYTHON_GPU")), reason="the fallback needs no GPU")
def test_log_lines_reach_the_etrt_logger(mlp, tmp_path, run_tool):
    """A GPU plan run on the CPU fallback says so at info level: through `etrt`."""
    onnx_path, x, expected = mlp
    pte = tmp_path / "mlp_gpu.pte"
    run_tool("build", onnx_path, "-o", pte, "--device", "cuda:0")
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append((record.levelno, record.getMessage()))

    logger = logging.getLogger("etrt")
    handler = Keep()
    logger.addHandler(handler)
    try:
        etrt.set_log_level(logging.INFO)
        out = etrt.load(pte, allow_cpu_fallback=True).run("forward", x)
    finally:
        etrt.set_log_level(logging.WARNING)
        logger.removeHandler(handler)
    np.testing.assert_allclose(np.from_dlpack(out[0]), expected, rtol=1e-5, atol=1e-5)
    assert any(level == logging.INFO and "runs on the CPU" in m for level, m in seen), seen


def test_idle_instances_are_reused(add_pte):
    """A run whose outputs are all released gives its instance (and memory) to the next
    run; outputs still held keep theirs."""
    prog = etrt.load(add_pte)
    first = prog.run("forward", one(1.0), one(1.0))[0]
    address = first.data_ptr
    held = prog.run("forward", one(2.0), one(2.0))[0]
    assert held.data_ptr != address
    del first
    again = prog.run("forward", one(3.0), one(3.0))[0]
    assert again.data_ptr == address
    assert np.from_dlpack(held).tolist() == [4.0] and np.from_dlpack(again).tolist() == [6.0]
    # A failed run does not return its instance in a half-set state.
    with pytest.raises(etrt.InvalidArgumentError):
        prog.run("forward", one(1.0), np.ones(1, np.int64))
    assert np.from_dlpack(prog.run("forward", one(5.0), one(5.0))[0]).tolist() == [10.0]


def test_tensors_come_only_from_runs():
    with pytest.raises(TypeError):
        etrt.Tensor()
