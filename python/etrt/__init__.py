"""etrt: run ExecuTorch programs (.pte) with etrt's engine, and lower PyTorch models to it.

    prog = etrt.load("model.pte")
    outs = prog.run("forward", numpy_array_or_torch_tensor)
    numpy.from_dlpack(outs[0])

The AOT half (an ExecuTorch partitioner and backend) is in etrt.executorch.
"""

import atexit as _atexit
import logging as _logging
import os as _os

# A build tree's extension (cmake -DETRT_PYTHON=ON puts it in <build>/python/etrt):
# ETRT_PYTHON_BUILD names that folder, for running from a checkout without installing.
if _os.environ.get("ETRT_PYTHON_BUILD"):
    __path__.append(_os.environ["ETRT_PYTHON_BUILD"])  # noqa: F821 (package __path__)

from . import _etrt  # noqa: E402
from ._etrt import (  # noqa: E402,F401
    DeviceError,
    Error,
    FormatError,
    InvalidArgumentError,
    NotFoundError,
    Tensor,
    UnsupportedError,
)

__all__ = [
    "load",
    "Program",
    "Tensor",
    "Error",
    "InvalidArgumentError",
    "FormatError",
    "NotFoundError",
    "UnsupportedError",
    "DeviceError",
    "supported_op_types",
]

logger = _logging.getLogger("etrt")

# etrt's levels (etrt/log.h) and Python's.
_LEVELS = {0: _logging.ERROR, 1: _logging.WARNING, 2: _logging.INFO, 3: _logging.DEBUG}


def _log(level, message):
    logger.log(_LEVELS.get(level, _logging.INFO), "%s", message)


def _etrt_level():
    """etrt's level from the logger's, so that etrt formats only what Python keeps;
    ETRT_LOG, where set, is etrt's own choice and wins."""
    if _os.environ.get("ETRT_LOG"):
        return None
    effective = logger.getEffectiveLevel()
    for level in (3, 2, 1):
        if effective <= _LEVELS[level]:
            return level
    return 0


def set_log_level(level):
    """Sets the `etrt` logger's level and etrt's to match (etrt formats messages only
    at or above its level)."""
    logger.setLevel(level)
    _etrt.set_log_handler(_log, _etrt_level())


# Every etrt message (the one-shot staging notice included) goes to the `etrt` logger;
# at exit etrt's own sink comes back, so nothing calls into a finalizing interpreter.
_etrt.set_log_handler(_log, _etrt_level())
_atexit.register(_etrt.set_log_handler, None, None)


def supported_op_types(device="cpu"):
    """The ONNX operator types etrt's engine runs on `device` ("cpu" or "cuda:N")."""
    return _etrt.supported_op_types(device)


def _stream_handle(stream):
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    handle = getattr(stream, "cuda_stream", None)  # torch.cuda.Stream
    if handle is None:
        raise InvalidArgumentError(
            "stream: expected an integer CUDA stream or a torch.cuda.Stream, got %s"
            % type(stream).__name__
        )
    return int(handle)


def _capsule(value, index, stream):
    """An input as the C layer takes it: an int, or a DLPack capsule."""
    if isinstance(value, bool) or not hasattr(value, "__dlpack__"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise InvalidArgumentError(
            "input %d: %s has no __dlpack__ (give a NumPy array, a PyTorch tensor or an int)"
            % (index, type(value).__name__)
        )
    device_type = value.__dlpack_device__()[0] if hasattr(value, "__dlpack_device__") else 1
    if device_type == 2:
        # A CUDA producer makes `stream` (the caller's) wait for its pending work on the
        # tensor before handing it over. Without one etrt runs on the per-thread default
        # stream (DLPack's 2), which PyTorch refuses to name; that stream synchronises
        # with the legacy default stream (DLPack's 1), so asking for 1 orders it too.
        if stream is not None:
            return value.__dlpack__(stream=stream)
        try:
            return value.__dlpack__(stream=2)
        except BufferError:
            return value.__dlpack__(stream=1)
    return value.__dlpack__()


class Program:
    """A loaded .pte program (immutable; safe to share between threads)."""

    def __init__(self, path, data=None, allow_cpu_fallback=False, force_cpu=False):
        self._program = _etrt.Program(
            _os.fspath(path),
            None if data is None else _os.fspath(data),
            allow_cpu_fallback,
            force_cpu,
        )

    @property
    def method_names(self):
        return self._program.method_names()

    def inputs(self, method="forward"):
        """The declared inputs of `method`: dicts of dtype, shape, dynamic, device."""
        return self._program.io(method)[0]

    def outputs(self, method="forward"):
        return self._program.io(method)[1]

    def run(self, method, *inputs, stream=None):
        """Runs `method` on `inputs` (objects with __dlpack__, or ints) and returns its
        outputs as a list of etrt.Tensor (DLPack, no copy). A CUDA tensor is used in
        place where the program plans that input on its GPU. `stream` (an int
        cudaStream_t or a torch.cuda.Stream) is the stream etrt's GPU work runs on;
        the outputs are complete when run returns."""
        handle = _stream_handle(stream)
        capsules = [_capsule(x, i, handle) for i, x in enumerate(inputs)]
        return self._program.run(method, capsules, handle)


def load(path, data=None, allow_cpu_fallback=False, force_cpu=False):
    """Loads a .pte program (and an optional .ptd data file)."""
    return Program(path, data, allow_cpu_fallback, force_cpu)
