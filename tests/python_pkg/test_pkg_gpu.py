"""The CUDA cases (make test-gpu sets ETRT_PYTHON_GPU=1 on a machine with an NVIDIA GPU):
device-resident torch tensors in place, a caller stream, outputs on the GPU through
DLPack, the staging notice, and refusals of tensors on the wrong device."""

import logging
import os
import sys

import numpy as np
import pytest

if not os.environ.get("ETRT_PYTHON_GPU"):
    pytest.skip("the CUDA cases run under make test-gpu (ETRT_PYTHON_GPU=1)", allow_module_level=True)

import torch  # noqa: E402

import etrt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS  # noqa: E402

# A GPU machine without ExecuTorch's exporter takes the programs lower_gpu_programs.py
# wrote where the exporter is (ETRT_GPU_PROGRAMS), with their inputs and eager outputs.
PROGRAMS = os.environ.get("ETRT_GPU_PROGRAMS")


def test_a_gpu_is_there():
    assert torch.cuda.is_available(), "ETRT_PYTHON_GPU=1 but torch sees no GPU"


def lower(name, tmp_path, io="device"):
    """(eager output, inputs, .pte lowered for cuda:0 with `io` placement)."""
    if PROGRAMS:
        with np.load(os.path.join(PROGRAMS, name + "_inputs.npz")) as saved:
            inputs = tuple(torch.from_numpy(saved["arg%d" % i]) for i in range(len(saved.files)))
        expected = torch.from_numpy(np.load(os.path.join(PROGRAMS, name + "_expected.npy")))
        return expected, inputs, os.path.join(PROGRAMS, "%s_%s.pte" % (name, io))
    from lower_gpu_programs import lower_to

    return lower_to(name, io, str(tmp_path))


class Keep(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture()
def etrt_log():
    handler = Keep()
    logger = logging.getLogger("etrt")
    logger.addHandler(handler)
    etrt.set_log_level(logging.INFO)
    yield handler.messages
    etrt.set_log_level(logging.WARNING)
    logger.removeHandler(handler)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_device_tensors_in_place_on_a_caller_stream(name, tmp_path, etrt_log):
    expected, inputs, pte = lower(name, tmp_path)
    prog = etrt.load(pte)
    assert all(i["device"] == "cuda:0" for i in prog.inputs())
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        device_inputs = [t.cuda() for t in inputs]
    outs = prog.run("forward", *device_inputs, stream=stream)
    assert outs[0].device == "cuda:0" and outs[0].__dlpack_device__() == (2, 0)
    got = torch.from_dlpack(outs[0])
    assert got.is_cuda and got.data_ptr() == outs[0].data_ptr  # no copy out
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-4, atol=1e-4)
    # Device tensors need no staging: etrt says nothing about it (contract rule 4).
    assert not any("staging" in m for m in etrt_log), etrt_log
    # An integer stream works the same.
    outs = prog.run("forward", *device_inputs, stream=stream.cuda_stream)
    torch.testing.assert_close(torch.from_dlpack(outs[0]).cpu(), expected, rtol=1e-4, atol=1e-4)


def test_host_inputs_are_staged_once_with_a_notice(tmp_path, etrt_log):
    expected, inputs, pte = lower("mlp", tmp_path)
    prog = etrt.load(pte)
    for _ in range(3):
        # Each run's outputs are released before the next, so the runs share one method
        # instance (one delegate handle), whose notice is one-shot (contract rule 4).
        out = prog.run("forward", *inputs)
        got = torch.from_dlpack(out[0]).cpu()
        del out
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    assert sum("staging host I/O" in m for m in etrt_log) == 1, etrt_log


def test_output_is_read_on_another_stream(tmp_path):
    expected, inputs, pte = lower("cnn", tmp_path)
    prog = etrt.load(pte)
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    out = prog.run("forward", *[t.cuda() for t in inputs], stream=producer)[0]
    with torch.cuda.stream(consumer):
        got = torch.from_dlpack(out) * 1  # torch passes its current stream to __dlpack__
    consumer.synchronize()
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-4, atol=1e-4)


def test_wrong_device_names_the_input(tmp_path):
    _, inputs, host_pte = lower("mlp", tmp_path, io="host")
    prog = etrt.load(host_pte)
    with pytest.raises(etrt.InvalidArgumentError, match=r"input 0: a tensor on cuda:0.*plans this input on cpu"):
        prog.run("forward", inputs[0].cuda())
    _, _, device_pte = lower("mlp", tmp_path)
    if torch.cuda.device_count() > 1:
        with pytest.raises(etrt.InvalidArgumentError, match=r"input 0: a tensor on cuda:1"):
            etrt.load(device_pte).run("forward", inputs[0].cuda(1))


def test_strided_device_tensor_names_the_input(tmp_path):
    _, inputs, pte = lower("mlp", tmp_path)
    wide = torch.zeros(inputs[0].shape[1], inputs[0].shape[0], device="cuda").t()
    with pytest.raises(etrt.InvalidArgumentError, match=r"input 0: strides"):
        etrt.load(pte).run("forward", wide)


def test_numpy_refuses_a_gpu_output(tmp_path):
    _, inputs, pte = lower("mlp", tmp_path)
    out = etrt.load(pte).run("forward", inputs[0].cuda())[0]
    with pytest.raises((RuntimeError, BufferError, TypeError)):
        np.from_dlpack(out)
