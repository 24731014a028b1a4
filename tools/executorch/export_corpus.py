"""Exports the ExecuTorch test corpus with the real exporter and records reference outputs
from ExecuTorch's own runtime.

Run inside the environment of `make venv-executorch` (executorch 1.5.1, torch, torchvision):

    python tools/executorch/export_corpus.py --out tests/data/executorch

Each program goes torch.export.export -> to_edge_transform_and_lower (no partitioner: every
operator stays a portable KernelCall) -> to_executorch. Its inputs come from a fixed seed;
its expected outputs are what `executorch.runtime` computes on them, not eager PyTorch, so
that the corpus states what ExecuTorch itself does. The manifest lists per program: files,
method, inputs, expected outputs, the operators its instructions call and the comparison
rule. Weights are small and random (batch-norm statistics are not the identity), so the
whole corpus stays small enough to commit.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
from executorch.runtime import Runtime

SEED = 20260
TOLERANCE = {
    "float": "max |etrt - reference| <= 1e-5 * max |reference| (per output)",
    "int": "exact",
    "bool": "exact",
    "float, programs that compute in float16 or bfloat16 (precision: reduced)":
        "max |etrt - reference| <= 1e-2 * max |reference| (per output): each operator rounds "
        "to the reduced type, and two runtimes may round an intermediate differently",
}


def randomize_norms(module, generator):
    """Batch norms get non-identity statistics, so that a runtime ignoring them fails."""
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=generator) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(m.num_features, generator=generator) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.num_features, generator=generator) * 0.1)
    return module


# ---------------------------------------------------------------------------------------
# The models. Each keeps the operator set of the architecture it stands for, at a width
# that keeps its weights to a few kilobytes.


def resnet_mini():
    from torchvision.models.resnet import BasicBlock

    class ResNetMini(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                      nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
            down = nn.Sequential(nn.Conv2d(8, 16, 1, 2, bias=False), nn.BatchNorm2d(16))
            self.layer1 = BasicBlock(8, 8)
            self.layer2 = BasicBlock(8, 16, stride=2, downsample=down)
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.layer2(self.layer1(self.stem(x)))
            return self.fc(torch.flatten(self.pool(x), 1))

    return ResNetMini(), (torch.randn(1, 3, 32, 32),)


def mobilenet_v2_mini():
    from torchvision.models import mobilenet_v2

    setting = [[1, 8, 1, 1], [6, 12, 2, 2], [6, 16, 1, 2]]
    model = mobilenet_v2(num_classes=10, width_mult=1.0, inverted_residual_setting=setting)
    # The head is 1280 wide by construction; a narrower one keeps the same operators.
    model.features[-1] = nn.Sequential(nn.Conv2d(16, 64, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU6())
    model.classifier[1] = nn.Linear(64, 10)
    return model, (torch.randn(1, 3, 32, 32),)


def mobilenet_v3_mini():
    from torchvision.models.mobilenetv3 import InvertedResidualConfig, MobileNetV3

    cfg = [
        InvertedResidualConfig(8, 3, 8, 8, True, "RE", 2, 1, 1.0),
        InvertedResidualConfig(8, 3, 24, 12, False, "RE", 2, 1, 1.0),
        InvertedResidualConfig(12, 5, 32, 16, True, "HS", 1, 1, 1.0),
    ]
    model = MobileNetV3(cfg, last_channel=64, num_classes=10)
    # torchvision initialises the classifier with std 0.01, which leaves logits near 1e-3;
    # a wider one keeps the reference's scale, and with it the test's sensitivity, near 1.
    for m in model.classifier.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 0.3)
    return model, (torch.randn(1, 3, 32, 32),)


def efficientnet_mini():
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig

    cfg = [
        MBConvConfig(1, 3, 1, 8, 8, 1, 1.0, 1.0),
        MBConvConfig(4, 3, 2, 8, 12, 2, 1.0, 1.0),
        MBConvConfig(4, 5, 2, 12, 16, 1, 1.0, 1.0),
    ]
    model = EfficientNet(cfg, dropout=0.2, num_classes=10, last_channel=64)
    return model, (torch.randn(1, 3, 32, 32),)


def transformer_encoder():
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    return model, (torch.randn(2, 8, 32),)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaBlock(nn.Module):
    """One decoder block as llama writes it: pre-norm RMSNorm, rotary embedding on the
    queries and keys, causal scaled_dot_product_attention, SiLU-gated MLP."""

    def __init__(self, dim=32, heads=4, hidden=64, seq=16):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.attn_norm, self.mlp_norm = RMSNorm(dim), RMSNorm(dim)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=True)
        self.register_buffer("sin", emb.sin(), persistent=True)

    def forward(self, x):
        b, s, d = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, d))
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def llama_block():
    return LlamaBlock(), (torch.randn(1, 16, 32),)


def lstm():
    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(8, 16, num_layers=1, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            y, (h, c) = self.rnn(x)
            return self.head(y[:, -1]), h, c

    return Lstm(), (torch.randn(2, 6, 8),)


def gru():
    class Gru(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(8, 16, num_layers=1, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            y, h = self.rnn(x)
            return self.head(y[:, -1]), h

    return Gru(), (torch.randn(2, 6, 8),)


def audio_conv1d():
    class AudioNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv1d(1, 8, 9, stride=2, padding=4), nn.BatchNorm1d(8), nn.ReLU(), nn.MaxPool1d(2),
                nn.Conv1d(8, 16, 5, padding=2), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(2),
                nn.Conv1d(16, 16, 3, padding=1, groups=4), nn.ReLU())
            self.head = nn.Linear(16, 5)

        def forward(self, x):
            return self.head(self.body(x).mean(dim=-1))

    return AudioNet(), (torch.randn(2, 1, 256),)


def embedding_classifier():
    class EmbeddingBag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 16)
            self.fc1 = nn.Linear(16, 16)
            self.fc2 = nn.Linear(16, 3)

        def forward(self, tokens):
            return self.fc2(torch.tanh(self.fc1(self.emb(tokens).mean(dim=1))))

    return EmbeddingBag(), (torch.randint(0, 50, (2, 7), dtype=torch.int64),)


def index_ops():
    class IndexOps(nn.Module):
        """Integer and boolean results: argmax, gather, index_select, comparisons, where."""

        def forward(self, x, idx):
            picked = torch.index_select(x, 1, idx)
            best = torch.argmax(x, dim=1)
            top = torch.gather(x, 1, best.unsqueeze(1))
            positive = x > 0
            count = positive.to(torch.int64).sum(dim=1)
            return picked, best, top, positive, count, torch.where(positive, x, -x)

    return IndexOps(), (torch.randn(3, 6), torch.tensor([5, 0, 2], dtype=torch.int64))


def channels_last_convnet():
    class ChannelsLast(nn.Module):
        """A conv net kept in channels-last memory format: every activation's dim order is
        (0, 2, 3, 1), through grouped convolution, max pooling, a residual addition, silu
        and average pooling. Left out: batch norm, upsampling and reflection padding
        (ExecuTorch's kernels, or the index.Tensor these decompose to, refuse this order),
        cat and constant padding (ExecuTorch 1.5.1's portable cat and constant_pad_nd
        place channels-last elements as if the tensors were contiguous, so their
        reference would be wrong; tests/unit/test_portable_concat.c and the pad's own test
        check etrt's)."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, 1, 1)
            self.conv2 = nn.Conv2d(8, 8, 3, 1, 1, groups=2)
            self.head = nn.Conv2d(8, 4, 1)

        def forward(self, x):
            a = F.relu(self.conv1(x))
            p = F.max_pool2d(a, 2)
            y = self.head(F.relu(self.conv2(p)) + p)
            return F.silu(y), F.avg_pool2d(y, 2)

    model = ChannelsLast().to(memory_format=torch.channels_last)
    return model, (torch.randn(1, 3, 16, 16).to(memory_format=torch.channels_last),)


def norm_activations():
    class NormActivations(nn.Module):
        """group_norm, prelu, elu, leaky_relu, softplus, bilinear and nearest upsampling."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(4, 8, 3, 1, 1)
            self.gn = nn.GroupNorm(2, 8)
            self.prelu = nn.PReLU(8)

        def forward(self, x):
            h = self.prelu(self.gn(self.conv(x)))
            b = F.interpolate(F.elu(h), size=(12, 10), mode="bilinear", align_corners=False)
            c = F.interpolate(F.leaky_relu(h, 0.2), scale_factor=2.0, mode="bilinear",
                              align_corners=True)
            return b, c, F.softplus(h).mean(dim=(2, 3))

    return NormActivations(), (torch.randn(2, 4, 6, 5),)


def half_mlp():
    class HalfMlp(nn.Module):
        """A float16 program: linear, layer norm, gelu, softmax, all in float16."""

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.norm = nn.LayerNorm(32)
            self.fc2 = nn.Linear(32, 8)

        def forward(self, x):
            h = F.gelu(self.norm(self.fc1(x)))
            return torch.softmax(self.fc2(h), dim=-1), h.amax(dim=-1)

    return HalfMlp().to(torch.float16), (torch.randn(4, 16).to(torch.float16),)


def bf16_convnet():
    class Bf16ConvNet(nn.Module):
        """A bfloat16 program: convolution, batch norm, hardswish, pooling, linear. Its input
        and output are float32 (NumPy has no bfloat16), cast at the edges."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, 2, 1)
            self.bn = nn.BatchNorm2d(8)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            h = F.hardswish(self.bn(self.conv(x.to(torch.bfloat16))))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1)).to(torch.float32)

    return Bf16ConvNet().to(torch.bfloat16), (torch.randn(1, 3, 16, 16),)


def instance_norm_warp():
    class InstanceNormWarp(nn.Module):
        """Style-transfer and spatial-transformer pieces: instance norm (decomposed into
        _native_batch_norm_legit.no_stats), grid sampling (bilinear with reflection, nearest
        with zeros, bicubic with border) on a fixed grid that reaches past the borders."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, 1, 1)
            self.norm = nn.InstanceNorm2d(4, affine=True)
            ys, xs = torch.meshgrid(torch.linspace(-1.2, 1.1, 6), torch.linspace(-1.1, 1.3, 5),
                                    indexing="ij")
            self.register_buffer("grid", torch.stack([xs + 0.1 * ys, ys - 0.05 * xs], -1)[None])

        def forward(self, x):
            h = F.relu(self.norm(self.conv(x)))
            grid = self.grid.expand(x.shape[0], -1, -1, -1)
            return (F.grid_sample(h, grid, mode="bilinear", padding_mode="reflection",
                                  align_corners=False),
                    F.grid_sample(h, grid, mode="nearest", padding_mode="zeros",
                                  align_corners=True),
                    F.grid_sample(h, grid, mode="bicubic", padding_mode="border",
                                  align_corners=False))

    return InstanceNormWarp(), (torch.randn(2, 3, 8, 8),)


def half_ops():
    class HalfOps(nn.Module):
        """float16 through convolution, instance norm, silu, sigmoid, cat, grid sampling,
        view, softmax and a reduction."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, 1, 1)
            self.norm = nn.InstanceNorm2d(4, affine=True)
            ys, xs = torch.meshgrid(torch.linspace(-1, 1, 4), torch.linspace(-1, 1, 4),
                                    indexing="ij")
            self.register_buffer("grid", torch.stack([xs * 0.9, ys * 1.1], -1)[None])

        def forward(self, x):
            h = F.silu(self.norm(self.conv(x)))
            h = torch.cat([h, torch.sigmoid(h)], dim=1)
            w = F.grid_sample(h, self.grid.expand(x.shape[0], -1, -1, -1), align_corners=False)
            return torch.softmax(w.reshape(x.shape[0], 8, 16), dim=-1), h.mean(dim=(2, 3))

    return HalfOps().to(torch.float16), (torch.randn(2, 3, 6, 6).to(torch.float16),)


def mutable_buffer():
    class MutableBuffer(nn.Module):
        """A buffer the program updates in place (a running sum, an indexed store): the
        exporter writes it back with aten::copy_ at the end of the method."""

        def __init__(self):
            super().__init__()
            self.register_buffer("acc", torch.zeros(2, 3))

        def forward(self, x):
            self.acc.add_(x)
            self.acc[0, 1] = 5.0
            return self.acc * 2

    return MutableBuffer(), (torch.randn(2, 3),)


def tensor_indexing():
    class TensorIndexing(nn.Module):
        """Advanced indexing and the reductions and rearrangements around it: index.Tensor,
        index_put, topk, flip, roll, var, max over a dim, remainder, cumsum."""

        def forward(self, x, rows, cols):
            picked = x[rows, :, cols]
            values, where = torch.topk(x.flatten(1), 3, dim=1)
            var = torch.var(x, dim=-1)
            biggest, at = x.max(dim=1)
            y = x.clone()
            y[rows, 0, cols] = 0.0
            moved = torch.roll(torch.flip(x, [2]), 1, 1)
            return (picked, values, where, var, biggest, at, y, moved, torch.remainder(x, 0.7),
                    torch.cumsum(x, 2))

    return TensorIndexing(), (torch.randn(3, 4, 5), torch.tensor([2, 0]), torch.tensor([1, -1]))


def multi_output():
    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(8, 16)
            self.cls = nn.Linear(16, 4)
            self.reg = nn.Linear(16, 2)

        def forward(self, x):
            h = F.relu(self.trunk(x))
            logits = self.cls(h)
            return torch.softmax(logits, dim=-1), self.reg(h), h.sum(dim=-1)

    return Heads(), (torch.randn(3, 8),)


def matmul_pointwise():
    class MatmulPointwise(nn.Module):
        """Matrix product and element-wise arithmetic on three inputs, no weights."""

        def forward(self, a, b, c):
            p = torch.relu(a @ b)
            return p * a - c + a, p

    return MatmulPointwise(), (torch.randn(4, 8), torch.randn(8, 8), torch.randn(4, 8))


class MatmulMlp(nn.Module):
    """An MLP written with matrix products and bias additions (aten::mm, aten::add)."""

    def __init__(self):
        super().__init__()
        self.w1, self.b1 = nn.Parameter(torch.randn(8, 16) * 0.3), nn.Parameter(torch.randn(16) * 0.1)
        self.w2, self.b2 = nn.Parameter(torch.randn(16, 4) * 0.3), nn.Parameter(torch.randn(4) * 0.1)

    def forward(self, x):
        return torch.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2


def matmul_mlp():
    return MatmulMlp(), (torch.randn(3, 8),)


class TwoMethods(nn.Module):
    """forward encodes and decodes; encode stops half way (matrix products, no Linear, so
    that the program's operators are the ones every runtime starts with)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Parameter(torch.randn(8, 4) * 0.3)
        self.dec = nn.Parameter(torch.randn(4, 8) * 0.3)

    def forward(self, x):
        return torch.relu(x @ self.enc) @ self.dec

    def encode(self, x):
        return torch.relu(x @ self.enc)


class EncodeOnly(nn.Module):
    def __init__(self, parent):
        super().__init__()
        self.parent = parent

    def forward(self, x):
        return self.parent.encode(x)


# name -> (constructor, options). Options: "reduced" marks a float16 / bfloat16 program
# (its tolerance is the reduced precision's); "ptd" keeps the constants in a .ptd beside the
# program; "dynamic" exports the batch axis of every input as torch.export.Dim (max given)
# and records cases at batch 1 and at the max besides the example batch.
CORPUS = [
    ("resnet_mini", resnet_mini, {}),
    ("mobilenet_v2_mini", mobilenet_v2_mini, {}),
    ("mobilenet_v3_mini", mobilenet_v3_mini, {}),
    ("efficientnet_mini", efficientnet_mini, {}),
    ("transformer_encoder", transformer_encoder, {}),
    ("llama_block", llama_block, {}),
    ("lstm", lstm, {}),
    ("gru", gru, {}),
    ("audio_conv1d", audio_conv1d, {}),
    ("embedding_classifier", embedding_classifier, {}),
    ("index_ops", index_ops, {}),
    ("multi_output", multi_output, {}),
    ("channels_last_convnet", channels_last_convnet, {}),
    ("norm_activations", norm_activations, {}),
    ("half_mlp", half_mlp, {"reduced": True}),
    ("bf16_convnet", bf16_convnet, {"reduced": True}),
    ("tensor_indexing", tensor_indexing, {}),
    ("instance_norm_warp", instance_norm_warp, {}),
    ("half_ops", half_ops, {"reduced": True}),
    ("mutable_buffer", mutable_buffer, {}),
    ("matmul_pointwise", matmul_pointwise, {}),
    ("mlp_ptd", matmul_mlp, {"ptd": True}),
    ("mlp_dynamic_batch", matmul_mlp, {"dynamic": 8}),
]


# ---------------------------------------------------------------------------------------


def operators_of(et_program):
    """Per method, the operators its KernelCalls name, as `etrt inspect` spells them."""
    found = {}
    for plan in et_program.executorch_program.execution_plan:
        names = []
        for op in plan.operators:
            name = op.name + ("." + op.overload if op.overload else "")
            if name not in names:
                names.append(name)
        found[plan.name] = names
    return found


def methods_of(et_program):
    """What ExecuTorch's own program reading says of each method, for the test to hold
    `etrt inspect --json` against: operator table, instruction count, I/O value indices."""
    methods = {}
    for plan in et_program.executorch_program.execution_plan:
        instructions = sum(len(chain.instructions) for chain in plan.chains)
        methods[plan.name] = {
            "operators": [op.name + ("." + op.overload if op.overload else "") for op in plan.operators],
            "instructions": instructions,
            "inputs": list(plan.inputs),
            "outputs": list(plan.outputs),
            "num_values": len(plan.values),
        }
    return methods


def lower(exported, ptd):
    edge = to_edge_transform_and_lower(exported)
    config = ExecutorchBackendConfig(external_constants=True) if ptd else ExecutorchBackendConfig()
    return edge.to_executorch(config=config)


def kind_of(array):
    if array.dtype == np.bool_:
        return "bool"
    if np.issubdtype(array.dtype, np.integer):
        return "int"
    return "float"


def run_reference(pte, ptd, method_name, inputs, channels_last=()):
    """ExecuTorch's outputs. The inputs listed in channels_last are handed over in that
    memory format: ExecuTorch copies an input's bytes as they are, so a row-major tensor
    given to a channels-last input would be read as channels-last."""
    runtime = Runtime.get()
    program = runtime.load_program(pte, data_path=ptd)
    method = program.load_method(method_name)
    tensors = [torch.from_numpy(a) for a in inputs]
    tensors = [t.contiguous(memory_format=torch.channels_last) if i in channels_last else t
               for i, t in enumerate(tensors)]
    outputs = method.execute(tensors)
    return [o.detach().numpy().copy() if isinstance(o, torch.Tensor) else np.asarray(o) for o in outputs]


def write_case(out, name, method_name, inputs, outputs, case="", channels_last=()):
    """Writes inputs and outputs as name/[case_]input_N.npy (row-major) and returns their
    entries; a channels-last input's entry says so ("dim_order")."""
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    prefix = case + "_" if case else ""
    entry = {"method": method_name, "inputs": [], "outputs": []}
    for i, a in enumerate(inputs):
        rel = "%s/%sinput_%d.npy" % (name, prefix, i)
        np.save(os.path.join(out, rel), a)
        entry["inputs"].append({"file": rel, "dtype": str(a.dtype), "shape": list(a.shape)})
        if i in channels_last:
            entry["inputs"][-1]["dim_order"] = [0, 2, 3, 1]
    for i, a in enumerate(outputs):
        rel = "%s/%soutput_%d.npy" % (name, prefix, i)
        np.save(os.path.join(out, rel), a)
        entry["outputs"].append({"file": rel, "dtype": str(a.dtype), "shape": list(a.shape), "kind": kind_of(a)})
    return entry


def export_one(out, name, make, options):
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    model, example = make()
    model = randomize_norms(model, generator).eval()
    dynamic = options.get("dynamic")
    shapes = None
    if dynamic:
        batch = torch.export.Dim("batch", min=1, max=dynamic)
        shapes = tuple({0: batch} for _ in example)
    exported = torch.export.export(model, example, dynamic_shapes=shapes)
    et_program = lower(exported, options.get("ptd"))
    pte = os.path.join(out, name + ".pte")
    with open(pte, "wb") as f:
        et_program.write_to_file(f)
    ptd = None
    if options.get("ptd"):
        folder = os.path.join(out, name + "_data")
        os.makedirs(folder, exist_ok=True)
        et_program.write_tensor_data_to_file(folder)
        written = [p for p in os.listdir(folder) if p.endswith(".ptd")]
        if len(written) != 1:
            raise RuntimeError("%s: expected one .ptd, got %s" % (name, written))
        ptd = os.path.join(out, name + ".ptd")
        shutil.move(os.path.join(folder, written[0]), ptd)
        shutil.rmtree(folder)
    inputs = [t.numpy().copy() for t in example]
    channels_last = [i for i, t in enumerate(example) if t.dim() == 4 and not t.is_contiguous()
                     and t.is_contiguous(memory_format=torch.channels_last)]
    cases = [("", inputs)]
    if dynamic:
        smaller = [np.ascontiguousarray(a[:1]) for a in inputs]
        rng = np.random.default_rng(SEED)
        larger = [rng.standard_normal((dynamic,) + a.shape[1:]).astype(a.dtype) for a in inputs]
        cases += [("batch1", smaller), ("batch%d" % dynamic, larger)]
    entries = []
    for case, case_inputs in cases:
        outputs = run_reference(pte, ptd, "forward", case_inputs, channels_last)
        entry = write_case(out, name, "forward", case_inputs, outputs, case, channels_last)
        entry["case"] = case or "default"
        entries.append(entry)
    return {
        "name": name,
        "file": name + ".pte",
        "precision": "reduced" if options.get("reduced") else "float32",
        "data": os.path.basename(ptd) if ptd else None,
        "operators": operators_of(et_program)["forward"],
        "methods": methods_of(et_program),
        "cases": entries,
    }


def export_two_methods(out):
    """One program, two methods (forward and encode), for `etrt run --method`."""
    torch.manual_seed(SEED)
    model = TwoMethods().eval()
    x = torch.randn(2, 8)
    programs = {
        "forward": torch.export.export(model, (x,)),
        "encode": torch.export.export(EncodeOnly(model).eval(), (x,)),
    }
    et_program = to_edge_transform_and_lower(programs).to_executorch()
    name = "two_methods"
    pte = os.path.join(out, name + ".pte")
    with open(pte, "wb") as f:
        et_program.write_to_file(f)
    inputs = [x.numpy().copy()]
    ops = operators_of(et_program)
    entries = []
    for method in ("forward", "encode"):
        outputs = run_reference(pte, None, method, inputs)
        entry = write_case(out, name, method, inputs, outputs, method)
        entry["case"] = method
        entries.append(entry)
    return {"name": name, "file": name + ".pte", "data": None,
            "operators": sorted(set(ops["forward"]) | set(ops["encode"])),
            "methods": methods_of(et_program), "cases": entries}


def export_bundled(out):
    """A BundledProgram (.bpte): the matmul_mlp program with two test cases of its own, for
    `etrt test`. Not a corpus program (etrt run reads .pte)."""
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer,
    )

    torch.manual_seed(SEED)
    model, example = matmul_mlp()
    model = model.eval()
    et_program = lower(torch.export.export(model, example), False)
    cases = []
    for i in range(2):
        x = torch.randn(3, 8)
        cases.append(MethodTestCase(inputs=[x], expected_outputs=[model(x).detach()]))
    bundled = BundledProgram(et_program, [MethodTestSuite(method_name="forward", test_cases=cases)])
    path = os.path.join(out, "matmul_mlp_bundled.bpte")
    with open(path, "wb") as f:
        f.write(serialize_from_bundled_program_to_flatbuffer(bundled))
    return {"file": "matmul_mlp_bundled.bpte", "method": "forward", "test_cases": len(cases),
            "expected_outputs": "eager PyTorch (the BundledProgram's own convention)"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder to write (manifest.json and the files)")
    parser.add_argument("--only", action="append", help="export only this program (repeatable)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_grad_enabled(True)
    programs = []
    for name, make, options in CORPUS:
        if args.only and name not in args.only:
            continue
        print("export", name, flush=True)
        programs.append(export_one(args.out, name, make, options))
    if not args.only or "two_methods" in args.only:
        print("export two_methods", flush=True)
        programs.append(export_two_methods(args.out))
    bundled = None
    if not args.only or "matmul_mlp_bundled" in args.only:
        print("export matmul_mlp_bundled", flush=True)
        bundled = export_bundled(args.out)
    import executorch.version

    manifest = {
        "exporter": {"executorch": executorch.version.__version__, "torch": torch.__version__},
        "tolerance": TOLERANCE,
        "programs": programs,
        "bundled_programs": [bundled] if bundled else [],
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.out) for f in fs)
    print("wrote %d programs, %d bytes in %s" % (len(programs), total, args.out))


if __name__ == "__main__":
    sys.exit(main())
