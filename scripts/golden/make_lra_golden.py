#!/usr/bin/env python3
"""Write the Long-Range-Arena golden fixtures of tests/golden/ (the lra_* cases) from lra_ref.py.

Not run in CI: the C++ tests only read the committed fixtures. Run it (Debian's python3-torch, with
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset) when a case is added or the reference changes, then
commit the folders it writes:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 scripts/golden/make_lra_golden.py \
        [--out tests/golden] [--case NAME ...] [--check]

The cases are the table CASES below (the source of truth; each folder's case.json is written from
it). Each case folder holds the files make_golden.py writes, in the same format. For every case:
  1. seed torch, build lra_ref's model from the case's model section, move the norm gains and all
     biases off their initial values, and give every BatchNorm running statistics of its own: those
     of a training-mode pass over another random batch, then shifted and scaled at random (so in
     evaluation they are neither 0/1 nor the statistics of the scored batch);
  2. draw the input (token ids in [1, V), or pixel levels in [0, 256)) and the class targets;
     retrieval draws 2B documents, the B first ones and then the B second ones of the B pairs;
  3. write the float32 weights and buffers (model.safetensors, the project's names, the resolved
     model section as `transnormer.config`) and reload them twice: in float64, whose loss, logits,
     gradients, hidden-state norms (and, in training mode, updated running statistics) are the
     expected values, and in float32, whose distance from them is `float32_vs_float64`.
Training-mode cases (`training: true`) normalise with the batch's own statistics and update the
running ones, as BatchNorm trains; every dropout rate is 0. No input is padded.

--check writes into a temporary folder and compares every file with the committed one byte for
byte (exit 1 on any difference).
"""
import argparse
import copy
import filecmp
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lra_ref  # noqa: E402
from make_golden import TOLERANCE_RULE, as_lists, float32_error, global_norm  # noqa: E402

# A relu input this close to zero could change sides under float32 rounding: seeds are chosen so
# that every score DiagAttention's relu sees (real query and key) lies farther away.
RELU_MARGIN = 5e-5

# The LRA T1 encoder of configs/paper/lra/encoder_t1.yaml at golden size.
T1 = {
    "arch": "encoder", "vocab_size": 40, "d_model": 32, "n_layers": 2, "n_heads": 4, "max_positions": 64,
    "token_mixer": "norm_attention", "diag_layers": 1,
    "attention": {"norm_attention": {"kernel": "elu", "norm": "batchnorm"},
                  "diag": {"block_size": 16, "inner": "relu", "norm": "batchnorm"}},
    "channel_mixer": {"type": "ffn", "d_ff": 64, "activation": "gelu"},
    "norm": "batchnorm", "prenorm": True, "final_norm": True,
    "positional": "sinusoidal_interleaved", "relative": "rope",
    "embed_scale": False, "embed_norm": "none", "tie_embeddings": True,
    "dropout": 0.0, "attention_dropout": 0.0, "pooler_dropout": 0.0,
    "head": "classification", "classifier": "linear", "pooling": "mean", "num_classes": 4,
}


def variant(**changes):
    """T1 with some keys replaced (attention merged mixer by mixer)."""
    model = copy.deepcopy(T1)
    for key, value in changes.items():
        if key == "attention":
            for mixer, options in value.items():
                model["attention"][mixer].update(options)
        elif value is None:
            model.pop(key)
        else:
            model[key] = value
    return model


CASES = [
    {"name": "lra_t1_eval", "seed": 310, "model": T1, "batch": 3, "seq_len": 40, "training": False,
     "note": "LRA T1 encoder: BatchNorm everywhere (evaluation: running statistics), RoPE, interleaved "
             "sinusoidal positions, FFN, linear classification head on the mean; blocks 16, 16 and a partial 8"},
    {"name": "lra_t1_train", "seed": 310, "model": T1, "batch": 3, "seq_len": 40, "training": True,
     "note": "lra_t1_eval's weights and input in training mode: BatchNorm on the batch's statistics, "
             "running statistics updated"},
    {"name": "lra_pixel_last", "seed": 322, "batch": 2, "seq_len": 64, "training": False,
     "model": variant(vocab_size=256, input={"kind": "linear", "mean": 127.5, "std": 127.5}, pooling="last",
                      num_classes=2, attention={"diag": {"n_heads": 2}}),
     "note": "Pathfinder shape: 8x8 pixel levels through Linear(1 -> d) after (level - 127.5) / 127.5, the "
             "last position classified; DiagAttention with its own 2 heads"},
    {"name": "lra_retrieval", "seed": 331, "batch": 2, "seq_len": 40, "training": True,
     "model": variant(head="retrieval", classifier=None, num_classes=2),
     "note": "dual encoder: 2 pairs as 4 documents through one encoder (training mode: BatchNorm's "
             "statistics over all 4), mean-pooled, [a, b, a-b, a*b] -> Linear(4d, d) -> GELU -> Linear(d, 2)"},
    {"name": "lra_parallel", "seed": 342, "batch": 2, "seq_len": 40, "training": False,
     "model": variant(token_mixer="diag_norm_parallel", diag_layers=0),
     "note": "diag_norm_parallel in both layers (DiagAttention + NormAttention summed, the paper's Table 12) "
             "in the LRA encoder"},
    {"name": "lra_t2", "seed": 351, "batch": 3, "seq_len": 48, "training": False,
     "model": variant(attention={"diag": {"inner": "softmax", "norm": "none"},
                                 "norm_attention": {"kernel": "1+elu"}}),
     "note": "LRA T2: softmax inside the DiagAttention blocks without a norm, 1+elu in NormAttention, RoPE "
             "in both; three whole blocks of 16"},
]

# The project's resolved defaults of the attention options (layers/attention/*_entry.cpp).
ATTENTION_DEFAULTS = {
    "softmax": {}, "linear": {"kernel": "1+elu", "normalize": "scaling", "eps": 1e-06},
    "norm_attention": {"kernel": "elu", "norm": "srmsnorm"},
    "diag": {"block_size": 64, "inner": "relu", "norm": "srmsnorm"},
    "performer": {"features": 64, "eps": 0.01, "feature_eps": 0.0001},
    "cosformer": {"eps": 0.0001, "out_proj": True},
}


def resolve(model):
    """The model section with the project's defaults filled in (every other key is given)."""
    out = copy.deepcopy(model)
    attention = copy.deepcopy(ATTENTION_DEFAULTS)
    for mixer, options in model["attention"].items():
        attention[mixer].update(options)
    layers = model.get("layers") or (["diag"] * model["diag_layers"] +
                                     [model["token_mixer"]] * (model["n_layers"] - model["diag_layers"]))
    if "diag_norm_parallel" in layers:
        attention["diag_norm_parallel"] = {}
    out["attention"], out["layers"] = attention, layers
    return out


def batch_norms(model):
    return [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]


def perturb(model, scale=0.1):
    """Norm gains off 1 and biases off their init, in parameter order."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or p.dim() == 1:
                p.add_(scale * torch.randn_like(p))


def set_running_stats(model, ids):
    """Each BatchNorm's running statistics: a training pass's over `ids`, then moved at random."""
    norms = batch_norms(model)
    for bn in norms:
        bn.reset_running_stats()
        bn.momentum = None  # a cumulative average: after one batch, its statistics exactly
    model.train()
    with torch.no_grad():
        model(ids)
        for bn in norms:
            bn.momentum = 0.1
            bn.num_batches_tracked.zero_()
            bn.running_mean.add_(0.2 * bn.running_var.sqrt() * torch.randn_like(bn.running_mean))
            bn.running_var.mul_(torch.exp(0.3 * torch.randn_like(bn.running_var)))
    model.eval()


def draw_ids(case, m):
    rows = case["batch"] * (2 if m["head"] == "retrieval" else 1)
    if m.get("input", {}).get("kind") == "linear":
        return torch.randint(0, m["vocab_size"], (rows, case["seq_len"]))
    return torch.randint(1, m["vocab_size"], (rows, case["seq_len"]))


def relu_margin(model, n):
    """The smallest |score| DiagAttention's relu saw over real queries and keys in the last forward."""
    margin = float("inf")
    for module in model.modules():
        if isinstance(module, lra_ref.DiagAttention) and not module.softmax:
            scores = module.last_scores  # [B, h, blocks, w, w]
            pos = torch.arange(scores.shape[2] * module.block).reshape(scores.shape[2], module.block)
            real = (pos[:, :, None] < n) & (pos[:, None, :] < n)
            margin = min(margin, float(scores[:, :, real].abs().min()))
    return margin


def forward_backward(model, ids, targets, training):
    model.zero_grad(set_to_none=True)
    model.train(training)
    logits, hidden = model(ids)
    loss = torch.nn.functional.cross_entropy(logits, targets)
    loss.backward()
    tensors, trainable = lra_ref.named_tensors(model)
    names = {lra_ref.cpp_name(n): p for n, p in model.named_parameters()}
    grads = {n: names[n].grad.detach().clone() if names[n].grad is not None else torch.zeros_like(names[n])
             for n in sorted(trainable)}
    running = {n: t.detach().clone() for n, t in tensors.items() if n.endswith(("running_mean", "running_var"))}
    return loss.detach(), logits.detach(), [h.detach() for h in hidden], grads, running


def expected_values(run64, run32, training):
    loss, logits, hidden, grads, running = run64
    out = {"loss": float(loss), "task": "classification", "logits": as_lists(logits)}
    out["grad_norms"] = {n: float(g.norm()) for n, g in sorted(grads.items())}
    out["grad_global_norm"] = global_norm(grads)
    out["hidden_norms"] = {"embed": float(hidden[0].norm()), "layers": [float(h.norm()) for h in hidden[1:-1]],
                           "final": float(hidden[-1].norm())}
    out["computed_in"] = ("float64 from the float32 weights in model.safetensors, " +
                          ("training mode (BatchNorm on batch statistics; no dropout)" if training
                           else "eval mode (BatchNorm on running statistics; no dropout)"))
    out["trainable"] = sorted(grads)
    out["buffers"] = sorted(running)
    errors = float32_error(run32[:4], run64[:4])
    if training:  # the running statistics after the forward, and the float32 run's distance from them
        out["running_stats"] = {n: as_lists(t) for n, t in sorted(running.items())}
        errors["running_stats_abs"] = max(float(((run32[4][n].double() - t).abs() / t.abs().clamp_min(1)).max())
                                          for n, t in running.items())
    out["float32_vs_float64"] = errors
    out["tolerances"] = dict(TOLERANCE_RULE, note=TOLERANCE_RULE["note"] + (
        " running_stats_abs (training mode): max |r - ref| / max(1, |ref|) over every running statistic "
        "after the forward." if training else ""))
    return out


def build_case(case):
    """Seeds, builds and perturbs the model; returns it (float32) with the input and targets."""
    torch.manual_seed(case["seed"])
    m = resolve(case["model"])
    model = lra_ref.LraEncoder(m)
    perturb(model)
    set_running_stats(model, draw_ids(case, m))
    ids = draw_ids(case, m)
    targets = torch.randint(0, m["num_classes"], (case["batch"],))
    return m, model, ids, targets


def write_case(case, folder):
    os.makedirs(folder, exist_ok=True)
    m, model, ids, targets = build_case(case)
    weights = os.path.join(folder, "model.safetensors")
    lra_ref.save_safetensors(weights, lra_ref.named_tensors(model)[0],
                             {"transnormer.config": json.dumps(m, sort_keys=True)})
    m64 = lra_ref.model_from_checkpoint(weights, torch.float64)
    run64 = forward_backward(m64, ids, targets, case["training"])
    margin = relu_margin(m64, case["seq_len"])
    if margin < RELU_MARGIN:
        sys.exit(f"{case['name']}: a relu input lies {margin:.3g} from zero; choose another seed")
    run32 = forward_backward(lra_ref.model_from_checkpoint(weights, torch.float32), ids, targets, case["training"])
    expected = expected_values(run64, run32, case["training"])
    task = "retrieval" if m["head"] == "retrieval" else "classification"
    inputs = {"task": task, "batch": case["batch"], "seq_len": case["seq_len"], "training": case["training"],
              "tokens": ids.tolist(), "targets": targets.tolist()}
    expected["task"] = task
    with open(os.path.join(folder, "input.json"), "w") as f:
        json.dump(inputs, f, separators=(",", ":"))
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(dict(case, generator="make_lra_golden.py", grads=True, perturb=True, resolved_model=m), f, indent=1)
    lra_ref.save_safetensors(os.path.join(folder, "grads.safetensors"), {n: g.float() for n, g in run64[3].items()},
                             {"transnormer.note": "d loss / d parameter, computed in float64, stored as float32"})
    return margin


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden"),
                    help="the fixture root (default: tests/golden)")
    ap.add_argument("--case", action="append", help="regenerate only this case (repeatable)")
    ap.add_argument("--check", action="store_true", help="regenerate apart and compare byte for byte")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    known = {c["name"] for c in CASES}
    if args.case and set(args.case) - known:
        sys.exit(f"unknown case {sorted(set(args.case) - known)}; the cases are {sorted(known)}")
    cases = [c for c in CASES if not args.case or c["name"] in args.case]
    if not args.check:
        for case in cases:
            margin = write_case(case, os.path.join(args.out, case["name"]))
            print(f"wrote {os.path.join(args.out, case['name'])} (relu margin {margin:.3g})")
        return 0
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            fresh = os.path.join(tmp, case["name"])
            write_case(case, fresh)
            for name in sorted(os.listdir(fresh)):
                committed = os.path.join(args.out, case["name"], name)
                same = os.path.exists(committed) and filecmp.cmp(os.path.join(fresh, name), committed, shallow=False)
                differ += not same
                print("same   " if same else "DIFFERS", os.path.join(case["name"], name))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
