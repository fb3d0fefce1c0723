#!/usr/bin/env python3
"""Regenerate the golden fixtures of tests/golden/ from a PyTorch implementation of the models.

Not run in CI: the C++ tests only read the committed fixtures. Run it when a case is added or the
reference changes, then commit the folders it writes:

    /usr/bin/python3 scripts/golden/make_golden.py --torch-impl PATH/transnormer_ref.py \
        [--out tests/golden] [--case NAME ...] [--check]

Each case is described by its own `case.json` (name, seed, model section, batch, seq_len, whether
gradients are stored, whether parameters are perturbed, the share of ignored targets), so the
committed folders are the list of cases: a new case is a new folder with a case.json (folders whose
case.json names another `generator`, the lra_* cases of make_lra_golden.py, are left alone). For
every case the script:
  1. seeds torch with the case's seed, builds the model from its model section and, when asked,
     moves every parameter that its initialisation leaves special away from it (norm gains off 1,
     biases off 0, URPE angles scaled), so that each one influences the result;
  2. draws the input ids and targets from the same generator (id 0, the padding id, never appears;
     for an encoder's MLM targets a share of positions is set to the ignore index, never the first);
  3. writes the float32 weights (model.safetensors) and reloads them twice: in float64, whose loss,
     logits, hidden-state norms and gradients are the expected values, and in float32, whose
     distance from the float64 values is recorded as `float32_vs_float64`: the error a float32
     implementation is expected to make, from which the C++ test derives each case's tolerance.

--check writes into a temporary folder and compares every file with the committed one byte for
byte (exit 1 on any difference).

The PyTorch implementation is loaded from the file given by --torch-impl and must provide:
resolve_config(model_section) -> dict, TransNormer(cfg) (forward(tokens, return_hidden=True) ->
(logits, [hidden...])), model_to_checkpoint(model, path), model_from_checkpoint(path, dtype) ->
(model, ...), compute_loss(logits, targets, head), save_safetensors(path, tensors, metadata) and
IGNORE_INDEX.
"""
import argparse
import filecmp
import importlib.util
import json
import os
import sys
import tempfile

import torch

# How the C++ test turns the recorded float32 error into a tolerance (tests/experiments/test_golden.cpp).
TOLERANCE_RULE = {
    "margin": 10.0,
    "floor": 5.96e-8,
    "grad_scale_floor_of_global": 1e-3,
    "note": "each figure of float32_vs_float64, in its units, may be at most margin * max(recorded, floor) "
            "in the implementation under test. Units: loss |l - ref| / |ref|; logits max |z - ref| / "
            "max(1, |ref|); gradients use the scale s(r) = max(r, grad_scale_floor_of_global * "
            "grad_global_norm), since some gradients are exactly zero: per-parameter norms max |n - ref| / "
            "s(ref norm), gradient elements max |g - ref| / s(max |ref| of the tensor).",
}


def load_impl(path):
    spec = importlib.util.spec_from_file_location("torch_impl", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["torch_impl"] = module
    spec.loader.exec_module(module)
    return module


def perturb(model, scale=0.1):
    """Norm gains off 1, biases off 0, URPE angles scaled by exp(N(0, scale)), in parameter order."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("urpe.theta"):
                p.mul_(torch.exp(scale * torch.randn_like(p)))
            elif name.endswith("bias") or (p.dim() == 1 and name.endswith("weight")):
                p.add_(scale * torch.randn_like(p))


def draw_inputs(case, cfg, ignore_index):
    """Input ids in [1, V) and targets: class ids, next ids (decoder) or ids with ignored positions."""
    B, T, V = case["batch"], case["seq_len"], cfg["vocab_size"]
    if cfg["head"] == "classification":
        return torch.randint(1, V, (B, T)), torch.randint(0, cfg["num_classes"], (B,))
    if cfg["arch"] == "decoder":
        ids = torch.randint(1, V, (B, T + 1))
        return ids[:, :-1].clone(), ids[:, 1:].clone()
    tokens, targets = torch.randint(1, V, (B, T)), torch.randint(0, V, (B, T))
    if case.get("ignore_frac", 0) > 0:
        ignored = torch.rand(B, T) < case["ignore_frac"]
        ignored[:, 0] = False
        targets[ignored] = ignore_index
    return tokens, targets


def forward_backward(impl, model, tokens, targets):
    model.zero_grad(set_to_none=True)
    logits, hidden = model(tokens, return_hidden=True)
    loss = impl.compute_loss(logits, targets, model.cfg["head"])
    loss.backward()
    grads = {n: (p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p))
             for n, p in model.named_parameters() if p.requires_grad}
    return loss.detach(), logits.detach(), [h.detach() for h in hidden], grads


def as_lists(t):
    return [float(v) for v in t.reshape(-1).tolist()] if t.dim() <= 1 else [as_lists(r) for r in t]


def global_norm(grads):
    return float(torch.sqrt(sum((g.double() ** 2).sum() for g in grads.values())))


def expected_values(cfg, run):
    loss, logits, hidden, grads = run
    classification = cfg["head"] == "classification"
    out = {"loss": float(loss), "task": "classification" if classification else "lm"}
    if classification:
        out["logits"] = as_lists(logits)
    else:
        out["logits_first"], out["logits_last"] = as_lists(logits[:, 0]), as_lists(logits[:, -1])
    out["grad_norms"] = {n: float(g.norm()) for n, g in sorted(grads.items())}
    out["grad_global_norm"] = global_norm(grads)
    out["hidden_norms"] = {"embed": float(hidden[0].norm()), "layers": [float(h.norm()) for h in hidden[1:-1]],
                           "final": float(hidden[-1].norm())}
    return out


def float32_error(run32, run64):
    """The float32 run's distance from the float64 one, in the units of TOLERANCE_RULE."""
    loss, logits, _, grads = run32
    rloss, rlogits, _, rgrads = run64
    floor = TOLERANCE_RULE["grad_scale_floor_of_global"] * global_norm(rgrads)
    scale = lambda r: max(r, floor)  # noqa: E731
    rel = (logits.double() - rlogits.double()).abs() / rlogits.double().abs().clamp_min(1)
    norms = elems = 0.0
    for n, g in rgrads.items():
        g, mine = g.double(), grads[n].double()
        norms = max(norms, abs(float(mine.norm()) - float(g.norm())) / scale(float(g.norm())))
        elems = max(elems, float((mine - g).abs().max()) / scale(float(g.abs().max())))
    return {"loss_rel": abs(float(loss) - float(rloss)) / max(abs(float(rloss)), 1e-30),
            "logits_abs": float(rel.max()), "grad_norm_rel": norms, "grad_elem_rel_of_max": elems}


def write_case(impl, case, folder):
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(case["seed"])
    cfg = impl.resolve_config(case["model"])
    model = impl.TransNormer(cfg)
    if case.get("perturb", True):
        perturb(model)
    tokens, targets = draw_inputs(case, cfg, impl.IGNORE_INDEX)
    weights = os.path.join(folder, "model.safetensors")
    impl.model_to_checkpoint(model, weights)
    m64 = impl.model_from_checkpoint(weights, torch.float64)[0]
    run64 = forward_backward(impl, m64, tokens, targets)
    expected = expected_values(m64.cfg, run64)
    expected["computed_in"] = "float64 from the float32 weights in model.safetensors, eval mode (no dropout)"
    expected["trainable"] = sorted(run64[3])
    expected["buffers"] = sorted(set(m64.state_dict()) - set(run64[3]))
    m32 = impl.model_from_checkpoint(weights, torch.float32)[0]
    expected["float32_vs_float64"] = float32_error(forward_backward(impl, m32, tokens, targets), run64)
    expected["tolerances"] = TOLERANCE_RULE
    inputs = {"task": expected["task"], "batch": case["batch"], "seq_len": case["seq_len"],
              "tokens": tokens.tolist(), "targets": targets.tolist(), "ignore_index": impl.IGNORE_INDEX}
    with open(os.path.join(folder, "input.json"), "w") as f:
        json.dump(inputs, f, separators=(",", ":"))
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(dict(case, resolved_model=m64.cfg), f, indent=1)
    grads_path = os.path.join(folder, "grads.safetensors")
    if case.get("grads", True):
        impl.save_safetensors(grads_path, {n: g.float() for n, g in run64[3].items()},
                              {"transnormer.note": "d loss / d parameter, computed in float64, stored as float32"})
    elif os.path.exists(grads_path):
        os.remove(grads_path)


def read_cases(root, names):
    cases = []
    for name in names or sorted(os.listdir(root)):
        path = os.path.join(root, name, "case.json")
        if not os.path.isfile(path):
            if names:
                sys.exit(f"{path}: no such case (a case is a folder of {root} with a case.json)")
            continue
        with open(path) as f:
            case = json.load(f)
        if case.get("generator", "make_golden.py") != "make_golden.py":  # the lra_* cases: make_lra_golden.py
            if names:
                sys.exit(f"{path}: written by {case['generator']}, not by this script")
            continue
        case.pop("resolved_model", None)
        cases.append(case)
    return cases


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--torch-impl", required=True, help="the Python file of the PyTorch implementation")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden"),
                    help="the fixture root (default: tests/golden)")
    ap.add_argument("--case", action="append", help="regenerate only this case (repeatable)")
    ap.add_argument("--check", action="store_true", help="regenerate apart and compare byte for byte")
    args = ap.parse_args(argv)
    impl = load_impl(args.torch_impl)
    torch.set_num_threads(1)
    cases = read_cases(args.out, args.case)
    if not args.check:
        for case in cases:
            write_case(impl, case, os.path.join(args.out, case["name"]))
            print("wrote", os.path.join(args.out, case["name"]))
        return 0
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            fresh = os.path.join(tmp, case["name"])
            write_case(impl, case, fresh)
            for name in sorted(os.listdir(fresh)):
                same = filecmp.cmp(os.path.join(fresh, name), os.path.join(args.out, case["name"], name), shallow=False)
                differ += not same
                print("same   " if same else "DIFFERS", os.path.join(case["name"], name))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
