"""etrt as an ExecuTorch backend: EtrtPartitioner tags what etrt's engine runs,
EtrtBackend.preprocess turns each tagged partition into an etrt engine plan.

    from executorch.exir import to_edge_transform_and_lower
    from etrt.executorch import EtrtPartitioner
    ep = torch.export.export(model, example_inputs)
    prog = to_edge_transform_and_lower(ep, partitioner=[EtrtPartitioner(device="cpu")])
    open("model.pte", "wb").write(prog.to_executorch().buffer)

The partition is translated node by node into etrt's network (etrt/network.h) and
built with etrt_plan_build: the delegate's bytes are exactly the plan `etrt build`
writes for a partition. _TRANSLATE below maps each edge (ATen) operator to etrt's
operators; whether etrt runs the result on the device is the engine's own verdict
(etrt/support.h), asked per node with its real dtypes and shapes. docs/python.md
says why the network route and not an ONNX export.
"""

import logging
import operator
from typing import Dict, List

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from torch.export import ExportedProgram
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from . import Error, _etrt

__all__ = ["EtrtPartitioner", "EtrtBackend", "compile_specs", "backend_config"]

logger = logging.getLogger("etrt")

_PRECISIONS = {"fp32": 0, "tf32": 1, "fp16": 2, "bf16": 3}

_DTYPES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}


def _device_text(device):
    text = str(device)
    return "cuda:0" if text == "cuda" else text


def target_device_label(device, target_device=None):
    """The target_device compile spec of a GPU plan as etrt build writes it: an explicit
    value verbatim, else the plan's device ("cuda:N"). None for a CPU plan: ExecuTorch's
    PropagateDevicePass treats any target_device as a device boundary and would put two
    host-to-host copies around the delegate."""
    if device == "cpu":
        return None
    if target_device is not None:
        return target_device
    return device if device.startswith("cuda:") else "cuda:0"


def compile_specs(device="cuda:0", precision="fp32", io="device", target_device=None):
    """The compile specs of an etrt delegate (keys: device, precision, io, and
    target_device for a GPU plan)."""
    device = _device_text(device)
    if precision not in _PRECISIONS:
        raise ValueError("precision %r: expected one of %s" % (precision, sorted(_PRECISIONS)))
    if io not in ("device", "host"):
        raise ValueError('io %r: expected "device" or "host"' % (io,))
    if device != "cpu" and not device.startswith("cuda:"):
        raise ValueError('device %r: expected "cpu" or "cuda:N"' % (device,))
    values = {"device": device, "precision": precision, "io": io}
    label = target_device_label(device, target_device)
    if label is not None:
        values["target_device"] = label
    return [CompileSpec(k, v.encode()) for k, v in values.items()]


def backend_config(io="device", device="cuda:0"):
    """The ExecutorchBackendConfig for to_executorch() that keeps a GPU program's method
    inputs and outputs on the device (io="device": the caller passes device tensors, no
    host copies are planned); the default config for io="host" or a CPU program."""
    from executorch.exir import ExecutorchBackendConfig

    if io != "device" or _device_text(device) == "cpu":
        return ExecutorchBackendConfig()
    from executorch.exir.passes import MemoryPlanningPass
    from executorch.exir.passes.propagate_device_config import PropagateDeviceConfig

    return ExecutorchBackendConfig(
        propagate_device_config=PropagateDeviceConfig(
            skip_h2d_for_method_inputs=True, skip_d2h_for_method_outputs=True
        ),
        enable_non_cpu_memory_planning=True,
        # Outputs stay planned: they live in the method's device memory, which the
        # etrt.Tensor outputs export without a copy.
        memory_planning_pass=MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=True),
    )


def _spec_dict(specs):
    return {s.key: bytes(s.value).decode() for s in specs}


# --- translation: edge operators -> etrt network operations --------------------------


class _Unsupported(Exception):
    """A node the translation cannot express (the reason is the message)."""


def _op_name(node):
    target = node.target
    name = getattr(target, "__name__", str(target))
    return name[len("aten.") :] if name.startswith("aten.") else name


def _dims(value, what):
    """(min, max) sizes of a tensor's meta value; dynamic axes need an upper bound."""
    lows, highs = [], []
    for i, d in enumerate(value.shape):
        if isinstance(d, int):
            lows.append(d)
            highs.append(d)
            continue
        try:
            node = d.node
            bound = node.shape_env.bound_sympy(node.expr)
            low, high = int(bound.lower), int(bound.upper)
        except Exception:  # an unbounded symbol: int(oo) raises
            raise _Unsupported("%s: axis %d is dynamic without an upper bound" % (what, i))
        lows.append(max(low, 0))
        highs.append(high)
    return lows, highs


def _dtype(value, what):
    name = _DTYPES.get(value.dtype)
    if name is None:
        raise _Unsupported("%s: dtype %s is not one etrt has" % (what, value.dtype))
    return name


class _Network:
    """One etrt network under construction, with the values of the fx nodes in it."""

    def __init__(self, constant_of=None, trial=False):
        self.trial = trial
        self.net = _etrt.Network()
        self.env: Dict[torch.fx.Node, object] = {}
        self.constant_of = constant_of or (lambda node: None)
        self.count = 0

    def _name(self, base):
        self.count += 1
        return "%s_%d" % (base, self.count)

    def tensor(self, name, t):
        if isinstance(t, torch._subclasses.fake_tensor.FakeTensor):
            if not self.trial:
                raise Error("etrt preprocess: constant %s has no data (a fake tensor)" % name)
            # The partitioner may see a program whose weights are fake: the verdict
            # needs their shape and dtype only.
            t = torch.zeros(tuple(t.shape), dtype=t.dtype)
        t = t.detach().contiguous().cpu()
        dtype = _DTYPES.get(t.dtype)
        if dtype is None:
            raise _Unsupported("constant %s: dtype %s is not one etrt has" % (name, t.dtype))
        flat = t.reshape(-1)
        if t.dtype == torch.bool:
            flat = flat.to(torch.uint8)
        data = flat.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        return self.net.add_constant(self._name(name), dtype, list(t.shape), data)

    def ints(self, values):
        return self.tensor("ints", torch.tensor(list(values), dtype=torch.int64))

    def scalar(self, value, like):
        """A rank-0 constant of `like`'s dtype (a Python number in an elementwise op)."""
        dtype = self.net.value_info(like)[0]
        torch_dtype = {v: k for k, v in _DTYPES.items()}[dtype]
        return self.tensor("scalar", torch.tensor(value, dtype=torch_dtype))

    def op(self, op_type, inputs, attributes=(), outputs=1):
        ids = self.net.add_op(op_type, self._name(op_type), list(inputs), outputs, list(attributes))
        return ids if outputs > 1 else ids[0]

    def value(self, arg, like=None):
        """The network value of an fx argument: a node's, or a constant for a number."""
        if isinstance(arg, torch.fx.Node):
            if arg not in self.env:
                self.add_placeholder(arg)
            v = self.env[arg]
            if isinstance(v, list):
                raise _Unsupported("%s has several outputs" % arg.name)
            return v
        if isinstance(arg, (int, float, bool)) and like is not None:
            return self.scalar(arg, like)
        raise _Unsupported("argument %r is not a tensor" % (arg,))

    def add_placeholder(self, node):
        constant = self.constant_of(node)
        if constant is not None:
            self.env[node] = self.tensor(node.name, constant)
            return
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise _Unsupported("%s is not a tensor" % node.name)
        low, high = _dims(val, node.name)
        self.env[node] = self.net.add_input(node.name, _dtype(val, node.name), low, high)

    def translate(self, node):
        """Adds `node`; returns the ids of the operations it became."""
        if node.target is operator.getitem:
            source, index = node.args
            outs = self.env[source]
            if not isinstance(outs, list) or outs[index] is None:
                raise _Unsupported("output %d of %s is not computed by etrt" % (index, source.name))
            self.env[node] = outs[index]
            return []
        fn = _TRANSLATE.get(_op_name(node))
        if fn is None:
            raise _Unsupported("etrt has no translation of %s" % _op_name(node))
        val = node.meta.get("val")
        for v in val if isinstance(val, (list, tuple)) else [val]:
            if isinstance(v, torch.Tensor):
                _dtype(v, node.name)
                _dims(v, node.name)
        before = self.count
        try:
            result = fn(self, node, *node.args, **node.kwargs)
        except TypeError as e:  # a signature the translation does not know
            raise _Unsupported("%s: %s" % (_op_name(node), e))
        self.env[node] = result
        made = []
        for r in result if isinstance(result, list) else [result]:
            if r is not None:
                made.append(r)
        return made if self.count > before else []


def _perm_swap(rank, a, b):
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def _rank(n, v):
    return len(n.net.value_info(v)[1])


def _conv(n, node, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        raise _Unsupported("transposed convolution")
    spatial = len(stride)
    pads = list(padding) * 2 if len(padding) == spatial else list(padding)
    inputs = [n.value(x), n.value(w)] + ([n.value(b)] if b is not None else [])
    attrs = [("strides", list(stride)), ("pads", pads), ("dilations", list(dilation)),
             ("group", int(groups))]
    return n.op("Conv", inputs, attrs)


def _addmm(n, node, bias, m1, m2, beta=1, alpha=1):
    return n.op("Gemm", [n.value(m1), n.value(m2), n.value(bias)],
                [("alpha", float(alpha)), ("beta", float(beta))])


def _linear(n, node, x, w, b=None):
    xv, wv = n.value(x), n.value(w)
    if _rank(n, xv) == 2:
        inputs = [xv, wv] + ([n.value(b)] if b is not None else [])
        return n.op("Gemm", inputs, [("transB", 1)])
    y = n.op("MatMul", [xv, n.op("Transpose", [wv], [("perm", [1, 0])])])
    return n.op("Add", [y, n.value(b)]) if b is not None else y


def _binary(op_type):
    def translate(n, node, a, b, alpha=1, rounding_mode=None):
        if alpha != 1:
            raise _Unsupported("%s with alpha %s" % (op_type, alpha))
        if rounding_mode is not None:
            raise _Unsupported("%s with rounding_mode %s" % (op_type, rounding_mode))
        if not isinstance(a, torch.fx.Node):
            bv = n.value(b)
            return n.op(op_type, [n.value(a, bv), bv])
        av = n.value(a)
        return n.op(op_type, [av, n.value(b, av)])

    return translate


def _unary(op_type, **fixed):
    def translate(n, node, x, *args, **kwargs):
        attrs = list(fixed.items())
        if op_type == "Gelu":
            approximate = kwargs.get("approximate", args[0] if args else "none")
            attrs = [("approximate", approximate)]
        elif args or kwargs:
            raise _Unsupported("%s with arguments" % op_type)
        return n.op(op_type, [n.value(x)], attrs)

    return translate


def _rsqrt(n, node, x):
    return n.op("Reciprocal", [n.op("Sqrt", [n.value(x)])])


def _batch_norm(n, node, x, weight, bias, mean, var, momentum, eps):
    xv = n.value(x)
    channels = node.args[0].meta["val"].shape[1]
    dtype = node.args[0].meta["val"].dtype
    scale = n.value(weight) if weight is not None else n.tensor("ones", torch.ones(channels, dtype=dtype))
    shift = n.value(bias) if bias is not None else n.tensor("zeros", torch.zeros(channels, dtype=dtype))
    y = n.op("BatchNormalization", [xv, scale, shift, n.value(mean), n.value(var)],
             [("epsilon", float(eps))])
    return [y, None, None]


def _pool_attrs(kernel, stride, padding, dilation=None, ceil_mode=False):
    spatial = len(kernel)
    stride = list(stride) if stride else list(kernel)
    padding = list(padding) if isinstance(padding, (list, tuple)) else [padding] * spatial
    if len(padding) == 1:
        padding = padding * spatial
    attrs = [("kernel_shape", list(kernel)), ("strides", stride), ("pads", padding * 2),
             ("ceil_mode", int(bool(ceil_mode)))]
    if dilation is not None:
        dilation = list(dilation) if isinstance(dilation, (list, tuple)) else [dilation] * spatial
        attrs.append(("dilations", dilation * (spatial // len(dilation))))
    return attrs


def _max_pool_indices(n, node, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    return [n.op("MaxPool", [n.value(x)], _pool_attrs(kernel, stride, padding, dilation, ceil_mode)),
            None]


def _max_pool(n, node, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    return n.op("MaxPool", [n.value(x)], _pool_attrs(kernel, stride, padding, dilation, ceil_mode))


def _avg_pool(n, node, x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    if divisor_override is not None:
        raise _Unsupported("avg_pool2d with divisor_override")
    attrs = _pool_attrs(kernel, stride, padding, None, ceil_mode)
    attrs.append(("count_include_pad", int(bool(count_include_pad))))
    return n.op("AveragePool", [n.value(x)], attrs)


def _adaptive_avg_pool(n, node, x, output_size):
    if any(s != 1 for s in output_size):
        raise _Unsupported("adaptive average pooling to %s (only to 1x1)" % (list(output_size),))
    return n.op("GlobalAveragePool", [n.value(x)])


def _reduce(op_type):
    def translate(n, node, x, dims=None, keepdim=False, dtype=None):
        if dtype is not None:
            raise _Unsupported("%s with dtype" % op_type)
        xv = n.value(x)
        axes = list(dims) if dims else list(range(_rank(n, xv)))
        return n.op(op_type, [xv], [("axes", axes), ("keepdims", int(bool(keepdim)))])

    return translate


def _reshape(n, node, x, size):
    return n.op("Reshape", [n.value(x), n.ints(size)])


def _permute(n, node, x, dims):
    xv = n.value(x)
    rank = _rank(n, xv)
    return n.op("Transpose", [xv], [("perm", [d % rank for d in dims])])


def _t(n, node, x):
    xv = n.value(x)
    if _rank(n, xv) < 2:
        return n.op("Identity", [xv])
    return n.op("Transpose", [xv], [("perm", [1, 0])])


def _transpose(n, node, x, a, b):
    xv = n.value(x)
    rank = _rank(n, xv)
    return n.op("Transpose", [xv], [("perm", _perm_swap(rank, a % rank, b % rank))])


def _softmax(op_type):
    def translate(n, node, x, dim, half_to_float=False):
        if half_to_float:
            raise _Unsupported("softmax with half_to_float")
        return n.op(op_type, [n.value(x)], [("axis", int(dim))])

    return translate


def _layer_norm(n, node, x, normalized_shape, weight, bias, eps):
    xv = n.value(x)
    dtype = node.args[0].meta["val"].dtype
    shape = list(normalized_shape)
    scale = n.value(weight) if weight is not None else n.tensor("ones", torch.ones(shape, dtype=dtype))
    inputs = [xv, scale] + ([n.value(bias)] if bias is not None else [])
    y = n.op("LayerNormalization", inputs, [("axis", -len(shape)), ("epsilon", float(eps))])
    return [y, None, None]


def _identity(n, node, x, *args, **kwargs):
    val, src = node.meta.get("val"), node.args[0].meta.get("val")
    if kwargs.get("dtype") not in (None, getattr(src, "dtype", None)):
        return n.op("Cast", [n.value(x)], [("to", _ONNX_DTYPES[_dtype(val, node.name)])])
    return n.op("Identity", [n.value(x)])


_ONNX_DTYPES = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7,
                "bool": 9, "float16": 10, "float64": 11, "bfloat16": 16}


def _unsqueeze(n, node, x, dim):
    xv = n.value(x)
    return n.op("Unsqueeze", [xv, n.ints([dim % (_rank(n, xv) + 1)])])


def _squeeze(n, node, x, dims=None):
    xv = n.value(x)
    if dims is None:
        return n.op("Squeeze", [xv])
    dims = [dims] if isinstance(dims, int) else list(dims)
    return n.op("Squeeze", [xv, n.ints(dims)])


def _expand(n, node, x, sizes, implicit=False):
    shape = list(node.meta["val"].shape)
    if not all(isinstance(s, int) for s in shape):
        raise _Unsupported("expand to a dynamic shape")
    return n.op("Expand", [n.value(x), n.ints(shape)])


def _cat(n, node, tensors, dim=0):
    return n.op("Concat", [n.value(t) for t in tensors], [("axis", int(dim))])


def _slice(n, node, x, dim=0, start=None, end=None, step=1):
    big = 2**62
    start = 0 if start is None else max(min(start, big), -big)
    end = big if end is None else max(min(end, big), -big)
    return n.op("Slice", [n.value(x), n.ints([start]), n.ints([end]), n.ints([dim]), n.ints([step])])


def _select(n, node, x, dim, index):
    return n.op("Gather", [n.value(x), n.ints([index]) if False else n.tensor(
        "index", torch.tensor(index, dtype=torch.int64))], [("axis", int(dim))])


def _split(n, node, x, sizes, dim=0):
    return n.op("Split", [n.value(x), n.ints(sizes)], [("axis", int(dim))], outputs=len(sizes))


def _clamp(n, node, x, low=None, high=None):
    xv = n.value(x)
    inputs = [xv, n.value(low, xv) if low is not None else -1, n.value(high, xv) if high is not None else -1]
    while inputs[-1] == -1:
        inputs.pop()
    return n.op("Clip", inputs)


def _hardtanh(n, node, x, low=-1.0, high=1.0):
    return _clamp(n, node, x, low, high)


def _where(n, node, cond, a, b):
    av = n.value(a) if isinstance(a, torch.fx.Node) else None
    bv = n.value(b, av) if av is not None else n.value(b)
    if av is None:
        av = n.value(a, bv)
    return n.op("Where", [n.value(cond), av, bv])


def _pow(n, node, x, exponent):
    xv = n.value(x)
    return n.op("Pow", [xv, n.value(exponent, xv)])


def _embedding(n, node, weight, indices, *args):
    return n.op("Gather", [n.value(weight), n.value(indices)], [("axis", 0)])


def _full_like(n, node, x, value, **kwargs):
    val = node.meta["val"]
    shape = list(val.shape)
    if not all(isinstance(d, int) for d in shape):
        raise _Unsupported("full_like of a dynamic shape")
    fill = n.tensor("fill", torch.tensor(value, dtype=val.dtype))
    return n.op("Expand", [fill, n.ints(shape)])


def _any(n, node, x, dim=None, keepdim=False):
    xv = n.value(x)
    dims = [dim] if isinstance(dim, int) else (list(dim) if dim else list(range(_rank(n, xv))))
    as_int = n.op("Cast", [xv], [("to", _ONNX_DTYPES["int32"])])
    most = n.op("ReduceMax", [as_int], [("axes", dims), ("keepdims", int(bool(keepdim)))])
    return n.op("Cast", [most], [("to", _ONNX_DTYPES["bool"])])


def _dim_order_identity(n, node, x, *args, dim_order=None, **kwargs):
    rank = len(node.meta["val"].shape)
    if dim_order is not None and list(dim_order) != list(range(rank)):
        raise _Unsupported("a memory format other than contiguous (dim_order %s)" % (list(dim_order),))
    return _identity(n, node, x, **kwargs)


def _compare(op_type, swap=False, negate=False):
    inner = _binary(op_type)

    def translate(n, node, a, b):
        y = inner(n, node, b, a) if swap else inner(n, node, a, b)
        return n.op("Not", [y]) if negate else y

    return translate


_TRANSLATE = {
    "dim_order_ops._clone_dim_order.default": _dim_order_identity,
    "dim_order_ops._to_dim_order_copy.default": _dim_order_identity,
    "full_like.default": _full_like,
    "logical_not.default": _unary("Not"),
    "any.dim": _any,
    "any.dims": _any,
    "eq.Scalar": _compare("Equal"),
    "eq.Tensor": _compare("Equal"),
    "ne.Scalar": _compare("Equal", negate=True),
    "ne.Tensor": _compare("Equal", negate=True),
    "lt.Scalar": _compare("Less"),
    "lt.Tensor": _compare("Less"),
    "gt.Scalar": _compare("Greater"),
    "gt.Tensor": _compare("Greater"),
    "le.Scalar": _compare("LessOrEqual"),
    "le.Tensor": _compare("LessOrEqual"),
    "ge.Scalar": _compare("GreaterOrEqual"),
    "ge.Tensor": _compare("GreaterOrEqual"),
    "convolution.default": _conv,
    "addmm.default": _addmm,
    "linear.default": _linear,
    "mm.default": lambda n, node, a, b: n.op("MatMul", [n.value(a), n.value(b)]),
    "bmm.default": lambda n, node, a, b: n.op("MatMul", [n.value(a), n.value(b)]),
    "matmul.default": lambda n, node, a, b: n.op("MatMul", [n.value(a), n.value(b)]),
    "add.Tensor": _binary("Add"),
    "add.Scalar": _binary("Add"),
    "sub.Tensor": _binary("Sub"),
    "sub.Scalar": _binary("Sub"),
    "mul.Tensor": _binary("Mul"),
    "mul.Scalar": _binary("Mul"),
    "div.Tensor": _binary("Div"),
    "div.Scalar": _binary("Div"),
    "div.Tensor_mode": _binary("Div"),
    "relu.default": _unary("Relu"),
    "gelu.default": _unary("Gelu"),
    "sigmoid.default": _unary("Sigmoid"),
    "tanh.default": _unary("Tanh"),
    "exp.default": _unary("Exp"),
    "log.default": _unary("Log"),
    "sqrt.default": _unary("Sqrt"),
    "rsqrt.default": _rsqrt,
    "neg.default": _unary("Neg"),
    "abs.default": _unary("Abs"),
    "erf.default": _unary("Erf"),
    "reciprocal.default": _unary("Reciprocal"),
    "hardswish.default": _unary("HardSwish"),
    "hardsigmoid.default": _unary("HardSigmoid", alpha=1.0 / 6.0),
    "hardtanh.default": _hardtanh,
    "clamp.default": _clamp,
    "pow.Tensor_Scalar": _pow,
    "pow.Tensor_Tensor": _pow,
    "where.self": _where,
    "_native_batch_norm_legit_no_training.default": _batch_norm,
    "max_pool2d_with_indices.default": _max_pool_indices,
    "max_pool2d.default": _max_pool,
    "avg_pool2d.default": _avg_pool,
    "_adaptive_avg_pool2d.default": _adaptive_avg_pool,
    "adaptive_avg_pool2d.default": _adaptive_avg_pool,
    "mean.dim": _reduce("ReduceMean"),
    "sum.dim_IntList": _reduce("ReduceSum"),
    "amax.default": _reduce("ReduceMax"),
    "view_copy.default": _reshape,
    "view.default": _reshape,
    "_unsafe_view.default": _reshape,
    "reshape.default": _reshape,
    "permute_copy.default": _permute,
    "permute.default": _permute,
    "t_copy.default": _t,
    "t.default": _t,
    "transpose_copy.int": _transpose,
    "transpose.int": _transpose,
    "_softmax.default": _softmax("Softmax"),
    "_log_softmax.default": _softmax("LogSoftmax"),
    "native_layer_norm.default": _layer_norm,
    "clone.default": _identity,
    "alias_copy.default": _identity,
    "_to_copy.default": _identity,
    "unsqueeze_copy.default": _unsqueeze,
    "squeeze_copy.dims": _squeeze,
    "squeeze_copy.dim": _squeeze,
    "squeeze_copy.default": _squeeze,
    "expand_copy.default": _expand,
    "cat.default": _cat,
    "slice_copy.Tensor": _slice,
    "select_copy.int": _select,
    "split_with_sizes_copy.default": _split,
    "embedding.default": _embedding,
}


def _constant_getter(program: ExportedProgram):
    signature = program.graph_signature
    sources = [
        (signature.inputs_to_parameters, program.state_dict),
        (signature.inputs_to_buffers, program.state_dict),
        (getattr(signature, "inputs_to_lifted_tensor_constants", {}), program.constants),
    ]

    def constant_of(node):
        for names, store in sources:
            key = names.get(node.name)
            if key is not None:
                value = store.get(key)
                if value is None:
                    value = program.constants.get(key)
                return value
        return None

    return constant_of


# --- the partitioner --------------------------------------------------------------


class _EtrtSupport(OperatorSupportBase):
    """A node is supported when it translates and etrt's engine runs every operation it
    became on the device (etrt_support_network_node), with its real dtypes and shapes."""

    def __init__(self, device, constant_of):
        self.device = device
        self.constant_of = constant_of
        self.verdicts: Dict[torch.fx.Node, bool] = {}

    def is_node_supported(self, submodules, node) -> bool:
        if node.op != "call_function":
            return False
        if node in self.verdicts:
            return self.verdicts[node]
        verdict, reason = False, None
        if node.target is operator.getitem:
            source = node.args[0]
            verdict = self.is_node_supported(submodules, source) and node.args[1] == 0
            reason = None if verdict else "output %d of %s stays outside" % (node.args[1], source.name)
        else:
            trial = _Network(self.constant_of, trial=True)
            try:
                made = trial.translate(node)
                verdict = all(trial.net.supports(v, self.device) for v in made)
                if not verdict:
                    reason = "etrt's engine does not run it on %s" % self.device
            except (_Unsupported, Error) as e:
                reason = str(e)
            except Exception as e:  # never let one odd node fail the whole lowering
                reason = "%s: %s" % (type(e).__name__, e)
        if not verdict and reason:
            logger.info("etrt partitioner: %s (%s) stays with the portable runtime: %s",
                        node.name, _op_name(node), reason)
        self.verdicts[node] = verdict
        return verdict


class EtrtPartitioner(Partitioner):
    """Tags, in connected partitions, the nodes etrt's engine runs on `device`."""

    def __init__(self, device="cuda:0", precision="fp32", io="device", target_device=None):
        self.device = _device_text(device)
        self.io = io
        self.specs = compile_specs(self.device, precision, io, target_device)
        self.delegation_spec = DelegationSpec(EtrtBackend.__name__, self.specs)
        super().__init__()

    def backend_config(self):
        """The to_executorch() config matching this partitioner's io (see backend_config)."""
        return backend_config(self.io, self.device)

    @staticmethod
    def _takes_inputs(nodes, constant_of):
        for node in nodes:
            for arg in node.all_input_nodes:
                if arg in nodes:
                    continue
                if arg.op != "placeholder" or constant_of(arg) is None:
                    return True
        return False

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        support = _EtrtSupport(self.device, _constant_getter(exported_program))
        partitioner = CapabilityBasedPartitioner(
            exported_program.graph_module, support, allows_single_node_partition=True
        )
        partitions = partitioner.propose_partitions()
        tags = {}
        for partition in partitions:
            # A partition computing from constants alone (a scalar's cast) is left to the
            # program's constant handling: a delegate without inputs would only add a call.
            if not self._takes_inputs(partition.nodes, support.constant_of):
                continue
            tag = "etrt_%d" % partition.id
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
            tags[tag] = self.delegation_spec
        if not tags:
            logger.warning(
                "etrt partitioner: nothing in this program runs on etrt's engine (%s); it is "
                "left to the portable runtime without a delegate", self.device)
        tag_constant_data(exported_program)
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


# --- the backend --------------------------------------------------------------------


class EtrtBackend(BackendDetails):
    """preprocess: one partition -> one etrt engine plan (the EtrtBackend delegate)."""

    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_specs: List[CompileSpec]) -> PreprocessResult:
        specs = _spec_dict(compile_specs)
        device = specs.get("device", "cpu")
        precision = _PRECISIONS[specs.get("precision", "fp32")]
        n = _Network(_constant_getter(edge_program))
        graph = edge_program.graph_module.graph
        for node in graph.nodes:
            if node.op == "placeholder":
                n.add_placeholder(node)
            elif node.op == "call_function":
                try:
                    n.translate(node)
                except _Unsupported as e:  # the partitioner let through what it cannot take
                    raise Error("etrt preprocess: node %s (%s): %s" % (node.name, _op_name(node), e))
            elif node.op == "output":
                outputs = node.args[0] if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
                marked = set()
                for i, out in enumerate(outputs):
                    v = n.value(out)
                    # An output must be an operation's, and each value one output.
                    if v in marked or n.net.value_info(v) and out.op == "placeholder":
                        v = n.op("Identity", [v])
                    marked.add(v)
                    n.net.mark_output(v, "output_%d" % i)
        major, minor = 0, 0
        if device.startswith("cuda") and torch.cuda.is_available():
            index = int(device.split(":")[1]) if ":" in device else 0
            if index < torch.cuda.device_count():
                major, minor = torch.cuda.get_device_capability(index)
        plan = n.net.build(device, precision, "etrt", major, minor)
        return PreprocessResult(processed_bytes=plan)
