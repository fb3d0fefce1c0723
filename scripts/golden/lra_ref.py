"""The project's own PyTorch reference of the TransNormer Long-Range-Arena encoder (golden fixtures).

What it implements: the model the authors' LRA code builds around TransNormer (OpenNLPLab/lra), read
from these files of that repository and rewritten here, small and batch-first:

  src/tasks/encoders.py          the input: a token embedding (`embedding`) or, for pixels, Linear(1 -> d)
                                 on values the loaders normalise, (level - mean) / std (`linear`); then
                                 the PositionalEncoder: pe[t, 2i] = sin(t w_i), pe[t, 2i+1] = cos(t w_i),
                                 w_i = 10000^(-2i/d), t from 0 (dropout 0 here)
  src/models/sequence/model.py,  the backbone: floor(N/2) x [local attention, FF] then the rest x [linear
  .../block.py                   attention, FF], every one a pre-norm residual block x + f(norm(x)), and
                                 one more norm after the stack
  src/models/nn/components.py    Normalization "synbatch": BatchNorm over the d_model channels, its
                                 statistics over every (batch, position) row; one process, so plain
                                 BatchNorm1d (eps 1e-5, momentum 0.1)
  .../x_attention/norm_local_attention.py   DiagAttention: q / sqrt(d_head), blocks of w positions
                                 (the tail zero-padded), RoPE inside each block, relu(q k^T) then the
                                 norm (T1) or softmax(q k^T) and no norm (T2), then out_proj
  .../x_attention/norm_linear_attention.py  NormAttention: phi = elu (T1) or 1 + elu (T2) on q and k,
                                 RoPE after phi, q (k^T v) without a denominator, the norm over the
                                 concatenated heads, then out_proj
  .../x_attention/lrpe.py        Lrpe(core_matrix=1, p_matrix=1): RoPE with fixed angles
                                 theta_i = 10000^(-2i/d_head) on adjacent pairs (x_2i, x_2i+1)
  src/models/sequence/ff.py      FF: Linear(d, d_ff) -> GELU (erf) -> Linear(d_ff, d)
  src/tasks/decoders.py          SequenceDecoder (mean over the length, `pool`, or the last position,
                                 `last`) -> Linear(d, classes); RetrievalDecoder with RetrievalHead
                                 (nli, gelu): the 2B sequences are the B first documents then the B
                                 second ones, each mean-pooled, [a, b, a - b, a * b] -> Linear(4d, d) ->
                                 GELU -> Linear(d, classes)

plus one mixer the official LRA code does not have, the paper's Table 12 "parallel" layer: the two
attentions above on the same input, their outputs summed.

Where it departs from the official code, on purpose: no padding (every sequence of a fixture is
full length, so the official code's pads, which reach attention and BatchNorm, never arise);
DiagAttention with softmax refuses a length that leaves a partial block (the official code lets
that block's zero padding into the softmax, the project masks it); no dropout (every rate must be
0); the fixed tables (positions, RoPE angles) are formed in float64 and rounded to the run's dtype.

It reads the project's resolved `model:` section (the JSON stored in a checkpoint's
`transnormer.config`) and names its tensors as the project's checkpoints do (cpp_name), so that one
set of float32 weights drives both implementations.
"""
import json
import math
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

# The spellings of the project's model section this reference understands.
POSITIONAL = "sinusoidal_interleaved"
MIXERS = ("diag", "norm_attention", "diag_norm_parallel")


# ------------------------------------------------------------------------------------------------
# Options: the project's resolved model section, checked against what the official code builds
# ------------------------------------------------------------------------------------------------
def require(ok, message):
    if not ok:
        raise ValueError("lra_ref: " + message)


def check_model(m):
    """Refuses a model section outside the official LRA encoder (plus the parallel mixer)."""
    require(m["arch"] == "encoder", "arch must be encoder")
    require(m["positional"] == POSITIONAL, f"positional must be {POSITIONAL} (the official PositionalEncoder)")
    require(m["relative"] in ("rope", "none"), "relative must be rope or none")
    require(m["norm"] == "batchnorm" and m["prenorm"] and m["final_norm"], "pre-norm BatchNorm with a final norm only")
    require(m["embed_norm"] == "none" and not m["embed_scale"], "no embedding norm or scale")
    require(m["channel_mixer"]["type"] == "ffn" and m["channel_mixer"]["activation"] == "gelu", "FFN with GELU only")
    require(all(layer in MIXERS for layer in m["layers"]), f"layers must be among {MIXERS}")
    require(m["head"] in ("classification", "retrieval"), "head must be classification or retrieval")
    require(m["head"] == "retrieval" or m.get("classifier") == "linear", "the classification head must be linear")
    require(m["pooling"] in ("mean", "last"), "pooling must be mean or last")
    for key in ("dropout", "attention_dropout", "pooler_dropout", "positional_dropout"):
        require(m.get(key, 0.0) == 0.0, f"{key} must be 0 (a deterministic reference)")
    diag, norm_attn = m["attention"]["diag"], m["attention"]["norm_attention"]
    require(diag["inner"] in ("relu", "softmax"), "diag.inner must be relu or softmax")
    require(diag["norm"] in ("batchnorm", "none"), "diag.norm must be batchnorm or none")
    require(diag["inner"] == "relu" or diag["norm"] == "none",
            "diag with softmax has no norm in the official code: set attention.diag.norm: none")
    require(norm_attn["kernel"] in ("elu", "1+elu"), "norm_attention.kernel must be elu or 1+elu")
    require(norm_attn["norm"] in ("batchnorm", "none"), "norm_attention.norm must be batchnorm or none")


# ------------------------------------------------------------------------------------------------
# Building blocks
# ------------------------------------------------------------------------------------------------
class ChannelBatchNorm(nn.Module):
    """BatchNorm over the last axis (d channels); every other axis is a sample (the official
    Normalization moves the channels to axis -2 for BatchNorm1d and back)."""

    def __init__(self, d):
        super().__init__()
        self.bn = nn.BatchNorm1d(d)

    def forward(self, x):
        return self.bn(x.transpose(-1, -2)).transpose(-1, -2)


def make_norm(kind, d):
    return ChannelBatchNorm(d) if kind == "batchnorm" else nn.Identity()


def rope(x):
    """Rotates the pairs (x_2i, x_2i+1) of x [..., n, e] by t * theta_i at position t = 0..n-1."""
    n, e = x.shape[-2], x.shape[-1]
    theta = torch.pow(10000.0, -2.0 * torch.arange(e // 2, dtype=torch.float64) / e).float().to(x)
    angle = torch.arange(n, dtype=x.dtype)[:, None] * theta.repeat_interleave(2)
    partner = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).reshape(x.shape)
    return x * torch.cos(angle) + partner * torch.sin(angle)


def split_heads(x, heads):
    """[B, n, h * e] -> [B, h, n, e]."""
    b, n, d = x.shape
    return x.reshape(b, n, heads, d // heads).transpose(1, 2)


def merge_heads(x):
    """[B, h, n, e] -> [B, n, h * e]."""
    b, h, n, e = x.shape
    return x.transpose(1, 2).reshape(b, n, h * e)


class DiagAttention(nn.Module):
    """Attention inside non-overlapping blocks of `block` positions (official NormLocalAttention)."""

    def __init__(self, d, heads, block, softmax, norm, use_rope):
        super().__init__()
        self.heads, self.block, self.softmax, self.use_rope = heads, block, softmax, use_rope
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))
        self.norm = make_norm(norm, d)

    def forward(self, x):
        b, n, d = x.shape
        e = d // self.heads
        tail = (-n) % self.block
        require(not (self.softmax and tail), f"length {n} leaves a partial block of {self.block} under softmax")
        q, k, v = self.q_proj(x) * e ** -0.5, self.k_proj(x), self.v_proj(x)
        # Zero rows up to a whole number of blocks (after the projections, as the official code pads).
        q, k, v = (F.pad(t, (0, 0, 0, tail)) for t in (q, k, v))
        g = (n + tail) // self.block
        q, k, v = (split_heads(t, self.heads).reshape(b, self.heads, g, self.block, e) for t in (q, k, v))
        if self.use_rope:  # positions counted from each block's start
            q, k = rope(q), rope(k)
        scores = q @ k.transpose(-1, -2)
        self.last_scores = scores.detach()  # kept for the fixtures' check of relu's kink
        weights = torch.softmax(scores, dim=-1) if self.softmax else torch.relu(scores)
        out = merge_heads((weights @ v).reshape(b, self.heads, g * self.block, e))[:, :n]
        if not self.softmax:
            out = self.norm(out)
        return self.out_proj(out)


class NormAttention(nn.Module):
    """Kernelised attention without a denominator, normalised over d (official NormLinearAttention)."""

    def __init__(self, d, heads, kernel, norm, use_rope):
        super().__init__()
        self.heads, self.use_rope = heads, use_rope
        self.phi = F.elu if kernel == "elu" else (lambda t: 1 + F.elu(t))
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))
        self.norm = make_norm(norm, d)

    def forward(self, x):
        q = split_heads(self.phi(self.q_proj(x)), self.heads)
        k = split_heads(self.phi(self.k_proj(x)), self.heads)
        v = split_heads(self.v_proj(x), self.heads)
        if self.use_rope:
            q, k = rope(q), rope(k)
        out = merge_heads(q @ (k.transpose(-1, -2) @ v))
        return self.out_proj(self.norm(out))


class ParallelAttention(nn.Module):
    """DiagAttention and NormAttention on the same input, summed (the paper's Table 12)."""

    def __init__(self, diag, norm):
        super().__init__()
        self.diag, self.norm = diag, norm

    def forward(self, x):
        return self.diag(x) + self.norm(x)


class FeedForward(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Residual(nn.Module):
    """x + layer(norm(x)): one official SequenceResidualBlock in pre-norm."""

    def __init__(self, d, layer):
        super().__init__()
        self.norm, self.layer = ChannelBatchNorm(d), layer

    def forward(self, x):
        return x + self.layer(self.norm(x))


def sinusoid_table(n, d, dtype):
    """The official PositionalEncoder's rows 0..n-1: sin at even columns, cos at odd ones."""
    t = torch.arange(n, dtype=torch.float64)[:, None]
    w = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(t * w), torch.cos(t * w)
    return pe.to(dtype)


# ------------------------------------------------------------------------------------------------
# The model: input, backbone, decoder
# ------------------------------------------------------------------------------------------------
def mixer(m, kind):
    d, diag, norm_attn = m["d_model"], m["attention"]["diag"], m["attention"]["norm_attention"]
    use_rope = m["relative"] == "rope"

    def make_diag():
        return DiagAttention(d, diag.get("n_heads", m["n_heads"]), diag["block_size"], diag["inner"] == "softmax",
                             diag["norm"], use_rope)

    def make_norm_attention():
        return NormAttention(d, m["n_heads"], norm_attn["kernel"], norm_attn["norm"], use_rope)

    if kind == "diag":
        return make_diag()
    if kind == "norm_attention":
        return make_norm_attention()
    return ParallelAttention(make_diag(), make_norm_attention())


class LraEncoder(nn.Module):
    """Ids [rows, n] -> logits. Classification: rows = B; retrieval: rows = 2B (the B first
    documents, then the B second ones)."""

    def __init__(self, m):
        super().__init__()
        check_model(m)
        self.m = m
        d = m["d_model"]
        self.pixels = m.get("input", {}).get("kind", "tokens") == "linear"
        if self.pixels:
            self.pixel = nn.Linear(1, d)
        else:
            self.embedding = nn.Embedding(m["vocab_size"], d)
        blocks = []
        for kind in m["layers"]:
            blocks += [Residual(d, mixer(m, kind)), Residual(d, FeedForward(d, m["channel_mixer"]["d_ff"]))]
        self.residual = nn.ModuleList(blocks)
        self.final_norm = ChannelBatchNorm(d)
        if m["head"] == "retrieval":
            self.decoder = nn.ModuleDict({"dense": nn.Linear(4 * d, d), "out_proj": nn.Linear(d, m["num_classes"])})
        else:
            self.decoder = nn.ModuleDict({"out_proj": nn.Linear(d, m["num_classes"])})

    def embed(self, ids):
        dtype = self.final_norm.bn.weight.dtype
        if self.pixels:
            spec = self.m["input"]
            values = ((ids.to(torch.float64) - spec["mean"]) / spec["std"]).to(dtype)
            x = self.pixel(values[..., None])
        else:
            x = self.embedding(ids)
        return x + sinusoid_table(ids.shape[1], self.m["d_model"], dtype)

    def decode(self, h):
        if self.m["head"] == "retrieval":
            pooled = h.mean(dim=1)
            a, b = pooled.chunk(2, dim=0)
            features = torch.cat([a, b, a - b, a * b], dim=-1)
            return self.decoder["out_proj"](F.gelu(self.decoder["dense"](features)))
        pooled = h.mean(dim=1) if self.m["pooling"] == "mean" else h[:, -1]
        return self.decoder["out_proj"](pooled)

    def forward(self, ids):
        """Returns the logits and the hidden states the project reports: after the input, after
        each layer (an attention block and its FF block) and after the final norm."""
        x = self.embed(ids)
        hidden = [x]
        for i, block in enumerate(self.residual):
            x = block(x)
            if i % 2 == 1:
                hidden.append(x)
        x = self.final_norm(x)
        hidden.append(x)
        return self.decode(x), hidden


# ------------------------------------------------------------------------------------------------
# Tensor names: ours -> the project's checkpoint names (layers/module/param_store.h)
# ------------------------------------------------------------------------------------------------
def cpp_name(name):
    """Maps a state-dict name of LraEncoder to the project's name; None for BatchNorm's batch count."""
    parts = name.split(".")
    if parts[-1] == "num_batches_tracked":
        return None
    parts = [p for p in parts if p != "bn"]  # ChannelBatchNorm's inner module
    if parts[0] == "residual":
        layer, second = divmod(int(parts[1]), 2)
        role = ("channel_" if second else "token_") + ("mixer_norm" if parts[2] == "norm" else "mixer")
        return ".".join(["layers", str(layer), role] + parts[3:])
    if parts[0] == "embedding":
        return "embed_tokens." + parts[-1]
    if parts[0] == "pixel":
        return "embed_input." + parts[-1]
    if parts[0] == "decoder":
        return ".".join(["head"] + parts[1:])
    return ".".join(parts)


def named_tensors(model):
    """Every parameter and buffer under the project's names, and the set of trainable ones."""
    tensors, trainable = {}, set()
    params = {n for n, _ in model.named_parameters()}
    for name, t in model.state_dict().items():
        mapped = cpp_name(name)
        if mapped is not None:
            tensors[mapped] = t
            if name in params:
                trainable.add(mapped)
    return tensors, trainable


def load_named(model, tensors):
    """Copies tensors named as the project's checkpoints into the model (each must be present)."""
    state = model.state_dict()
    with torch.no_grad():
        for name, t in state.items():
            mapped = cpp_name(name)
            if mapped is not None:
                t.copy_(tensors[mapped].to(t.dtype))


# ------------------------------------------------------------------------------------------------
# safetensors (float32 only)
# ------------------------------------------------------------------------------------------------
def save_safetensors(path, tensors, metadata):
    """Writes float32 tensors in name order, metadata last, the header padded to 8 bytes."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = tensors[name].detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_safetensors(path):
    """(tensors as float32, metadata) of a file save_safetensors wrote."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        blob = f.read()
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        start, end = entry["data_offsets"]
        flat = torch.frombuffer(bytearray(blob[start:end]), dtype=torch.float32)
        tensors[name] = flat.reshape(entry["shape"])
    return tensors, metadata


def model_from_checkpoint(path, dtype):
    """The model of a checkpoint written by save_safetensors, in `dtype`."""
    tensors, metadata = load_safetensors(path)
    model = LraEncoder(json.loads(metadata["transnormer.config"])).to(dtype)
    load_named(model, tensors)
    return model
