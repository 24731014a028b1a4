"""The AOT path with the real executorch and PyTorch: lower with EtrtPartitioner, save,
run with etrt.load and with etrt run, compare with eager PyTorch."""

import json
import logging
import os
import sys

import numpy as np
import pytest

if not os.environ.get("ETRT_REQUIRE_EXECUTORCH"):
    pytest.importorskip("executorch")
import torch  # noqa: E402
from executorch.exir import to_edge_transform_and_lower  # noqa: E402

import etrt  # noqa: E402
from etrt.executorch import EtrtPartitioner, compile_specs  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS  # noqa: E402

# No compute of these outside the delegate.
COMPUTE = ("convolution", "addmm", "mm.", "bmm", "linear", "matmul", "batch_norm", "max_pool",
           "layer_norm", "softmax")


def lower(model, inputs, **options):
    ep = torch.export.export(model, inputs)
    return to_edge_transform_and_lower(ep, partitioner=[EtrtPartitioner(**options)])


def outside_ops(edge):
    graph = edge.exported_program().graph_module.graph
    return [str(n.target) for n in graph.nodes
            if n.op == "call_function" and "executorch_call_delegate" not in str(n.target)
            and "getitem" not in str(n.target)]


def delegates(edge):
    return [n for n in edge.exported_program().graph_module.graph.nodes
            if "executorch_call_delegate" in str(n.target)]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_cpu_lowering_delegates_all_compute_and_matches_eager(name, tmp_path, run_tool):
    model, inputs = MODELS[name]()
    edge = lower(model, inputs, device="cpu")
    assert delegates(edge), "nothing was delegated"
    left = [op for op in outside_ops(edge) if any(c in op for c in COMPUTE)]
    assert not left, left
    pte = tmp_path / ("%s.pte" % name)
    pte.write_bytes(edge.to_executorch().buffer)
    expected = model(*inputs).detach().numpy()
    info = json.loads(run_tool("inspect", "--json", pte).stdout)
    assert not info["methods"][0]["operators"], "copies around a CPU delegate"

    outs = etrt.load(pte).run("forward", *[t.numpy() for t in inputs])
    np.testing.assert_allclose(np.from_dlpack(outs[0]), expected, rtol=1e-4, atol=1e-5)
    # torch takes the output too (DLPack), and torch tensors go in as they are.
    got = torch.from_dlpack(etrt.load(pte).run("forward", *inputs)[0])
    torch.testing.assert_close(got, torch.from_numpy(expected), rtol=1e-4, atol=1e-5)

    args = []
    for i, t in enumerate(inputs):
        np.save(tmp_path / ("in%d.npy" % i), t.numpy())
        args += ["--input", tmp_path / ("in%d.npy" % i)]
    run_tool("run", pte, *args, "--output-dir", tmp_path / "out")
    cli = np.load(tmp_path / "out" / "output_0.npy")
    np.testing.assert_allclose(cli, expected, rtol=1e-4, atol=1e-5)


def test_gpu_label_without_a_gpu(tmp_path, run_tool):
    """Lowered for cuda:1 on a machine without a GPU, the delegate says cuda:1."""
    model, inputs = MODELS["mlp"]()
    pte = tmp_path / "mlp_cuda1.pte"
    pte.write_bytes(lower(model, inputs, device="cuda:1").to_executorch().buffer)
    info = json.loads(run_tool("inspect", "--json", pte).stdout)
    specs = [d["compile_specs"] for m in info["methods"] for d in m["delegates"]]
    assert specs and all(s["target_device"] == "cuda:1" and s["device"] == "cuda:1" for s in specs)


@pytest.mark.skipif(bool(os.environ.get("ETRT_PYTHON_GPU")), reason="needs a machine without a GPU")
def test_device_io_without_a_gpu(tmp_path, run_tool):
    """io="device" for cuda:1: the method's inputs and outputs live on cuda:1, with no
    copies planned; without a GPU, load refuses it, and the CPU fallback runs it."""
    model, inputs = MODELS["mlp"]()
    partitioner = EtrtPartitioner(device="cuda:1", io="device")
    ep = torch.export.export(model, inputs)
    edge = to_edge_transform_and_lower(ep, partitioner=[partitioner])
    pte = tmp_path / "mlp_io.pte"
    pte.write_bytes(edge.to_executorch(partitioner.backend_config()).buffer)
    method = json.loads(run_tool("inspect", "--json", pte).stdout)["methods"][0]
    assert [t["device"] for t in method["input_tensors"] + method["output_tensors"]] == ["cuda:1"] * 2
    assert not method["operators"]
    with pytest.raises(etrt.UnsupportedError, match="no GPU"):
        etrt.load(pte).run("forward", *inputs)
    prog = etrt.load(pte, allow_cpu_fallback=True)
    assert prog.inputs()[0]["device"] == "cuda:1"
    out = prog.run("forward", inputs[0].numpy())[0]
    assert out.device == "cpu"  # the fallback's device memory is host memory
    np.testing.assert_allclose(np.from_dlpack(out), model(*inputs).detach().numpy(), rtol=1e-4,
                               atol=1e-5)


SIM_SCRIPT = """
import logging, sys
import numpy as np
import etrt
seen = []
class Keep(logging.Handler):
    def emit(self, record):
        seen.append(record.getMessage())
logging.getLogger("etrt").addHandler(Keep())
etrt.set_log_level(logging.INFO)
prog = etrt.load(sys.argv[1])
x = np.load(sys.argv[2])
outs = [np.from_dlpack(prog.run("forward", x)[0]).copy() for _ in range(3)]
np.save(sys.argv[3], outs[-1])
print(sum("staging host I/O" in m for m in seen))
"""


def test_cuda1_program_on_simulated_gpus(tmp_path):
    """Under two simulated GPUs (ETRT_DEVICE=sim:2) the cuda:1 program runs on sim GPU 1;
    host inputs are staged, and etrt's one-shot staging notice reaches the `etrt` logger
    once however many runs there are."""
    import subprocess

    model, inputs = MODELS["mlp"]()
    partitioner = EtrtPartitioner(device="cuda:1", io="device")
    edge = to_edge_transform_and_lower(torch.export.export(model, inputs), partitioner=[partitioner])
    pte = tmp_path / "mlp_sim.pte"
    pte.write_bytes(edge.to_executorch(partitioner.backend_config()).buffer)
    np.save(tmp_path / "x.npy", inputs[0].numpy())
    package_root = os.path.dirname(os.path.dirname(etrt.__file__))
    env = dict(os.environ, ETRT_DEVICE="sim:2",
               PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    env.pop("ETRT_LOG", None)
    result = subprocess.run([sys.executable, "-c", SIM_SCRIPT, str(pte), str(tmp_path / "x.npy"),
                             str(tmp_path / "y.npy")], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "1", result.stdout
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), model(*inputs).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_target_device_derivation():
    def target(**kw):
        return {s.key: bytes(s.value).decode() for s in compile_specs(**kw)}.get("target_device")

    assert target(device="cuda:1") == "cuda:1"
    assert target(device="cuda") == "cuda:0"
    assert target(device="cuda:1", target_device="cuda:7") == "cuda:7"
    assert target(device="cpu", target_device="cuda:7") is None
    with pytest.raises(ValueError, match="precision"):
        compile_specs(device="cpu", precision="fp64")
    with pytest.raises(ValueError, match="io"):
        compile_specs(device="cpu", io="shared")
    with pytest.raises(ValueError, match="device"):
        compile_specs(device="tpu:0")


class Sort(torch.nn.Module):
    def forward(self, x):
        return torch.sort(x).values


def test_nothing_supported_lowers_without_a_delegate(caplog):
    with caplog.at_level(logging.INFO, logger="etrt"):
        edge = lower(Sort().eval(), (torch.randn(4, 5),), device="cpu")
    assert not delegates(edge)
    assert any(r.levelno == logging.WARNING and "nothing" in r.getMessage() for r in caplog.records)
    assert any("sort" in r.getMessage() and "portable" in r.getMessage() for r in caplog.records)


class Relu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def test_unbounded_dynamic_dimension_stays_outside(caplog):
    batch = torch.export.Dim("batch")
    ep = torch.export.export(Relu(), (torch.randn(3, 4),), dynamic_shapes=({0: batch},))
    with caplog.at_level(logging.INFO, logger="etrt"):
        edge = to_edge_transform_and_lower(ep, partitioner=[EtrtPartitioner(device="cpu")])
    assert not delegates(edge)
    assert any("without an upper bound" in r.getMessage() for r in caplog.records)


def test_bounded_dynamic_dimension_is_delegated(tmp_path):
    batch = torch.export.Dim("batch", min=1, max=8)
    ep = torch.export.export(Relu(), (torch.randn(3, 4),), dynamic_shapes=({0: batch},))
    edge = to_edge_transform_and_lower(ep, partitioner=[EtrtPartitioner(device="cpu")])
    assert delegates(edge)
    pte = tmp_path / "relu.pte"
    pte.write_bytes(edge.to_executorch().buffer)
    prog = etrt.load(pte)
    for rows in (2, 5, 8):  # export keeps batch >= 2
        x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(prog.run("forward", x)[0]), np.maximum(x, 0) * 2)


class Relu8(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def test_unsupported_dtype_is_left_with_a_reason(caplog):
    with caplog.at_level(logging.INFO, logger="etrt"):
        edge = lower(Relu8().eval(), (torch.arange(12, dtype=torch.uint8).reshape(3, 4),),
                     device="cpu")
    assert not delegates(edge)
    assert any("relu" in r.getMessage() and "uint8" in r.getMessage() for r in caplog.records)


class MatMul64(torch.nn.Module):
    def forward(self, a, b):
        return torch.mm(a, b)


def test_the_engine_decides_per_device(caplog):
    """float64 MatMul: a CPU kernel, no CUDA kernel (the definition's predicate)."""
    inputs = (torch.randn(3, 4, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64))
    assert delegates(lower(MatMul64(), inputs, device="cpu"))
    with caplog.at_level(logging.INFO, logger="etrt"):
        edge = lower(MatMul64(), inputs, device="cuda:0")
    assert not delegates(edge)
    assert any("does not run it on cuda:0" in r.getMessage() for r in caplog.records)
