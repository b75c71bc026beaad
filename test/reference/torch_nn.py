#!/usr/bin/env python3
"""Figures for test/nn-*.test.ts, computed with torch (CPU, float64).

Run: python3 test/reference/torch_nn.py > test/nn-torch-figures.ts
Every input is made from sin() by vals(), which the tests rebuild in JS, so no
random state is shared between the two sides.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sin_inputs import flat, shaped, vals  # noqa: E402

torch.set_default_dtype(torch.float64)


T = shaped


out = {}

# --- losses: value and d(loss)/d(input) --------------------------------------
def loss_case(name, fn, x, *rest, **kw):
    x = x.clone().requires_grad_(True)
    y = fn(x, *rest, **kw)
    y.sum().backward()
    out[name] = {"value": flat(y), "grad": flat(x.grad)}


x = T([4, 5], 0.7, 0.3, 2.0)
y = T([4, 5], 1.3, -0.2, 2.0)
for r in ["mean", "sum", "none"]:
    loss_case(f"mse_{r}", F.mse_loss, x, y, reduction=r)
    loss_case(f"l1_{r}", F.l1_loss, x, y, reduction=r)
loss_case("smoothl1_beta0.5", F.smooth_l1_loss, x, y, beta=0.5)
loss_case("huber_delta0.7", F.huber_loss, x, y, delta=0.7)

logits = T([4, 5], 0.9, 0.1, 3.0)
target = torch.tensor([1, 4, 0, 2])
target_ign = torch.tensor([1, -100, 0, 2])
w = torch.tensor([0.5, 1.0, 1.5, 2.0, 0.25])
for r in ["mean", "sum", "none"]:
    loss_case(f"ce_{r}", F.cross_entropy, logits, target, reduction=r)
loss_case("ce_weight_ignore", F.cross_entropy, logits, target_ign, weight=w)
loss_case("ce_weight_ignore_smooth", F.cross_entropy, logits, target_ign, weight=w, label_smoothing=0.2)
loss_case("ce_smooth_none", F.cross_entropy, logits, target, label_smoothing=0.1, reduction="none")
loss_case("ce_ignore7", F.cross_entropy, logits, torch.tensor([1, 7, 7, 2]), ignore_index=7)
probs = torch.softmax(T([4, 5], 0.4, 0.8, 2.0), 1)
loss_case("ce_prob", F.cross_entropy, logits, probs)
loss_case("ce_prob_weight_smooth", F.cross_entropy, logits, probs, weight=w, label_smoothing=0.3)
loss_case("ce_prob_none", F.cross_entropy, logits, probs, reduction="none")
logits3 = T([2, 5, 3], 0.5, 0.2, 2.0)
target3 = torch.tensor([[0, 4, 2], [1, 1, 3]])
loss_case("ce_3d", F.cross_entropy, logits3, target3)
loss_case("ce_3d_none_smooth", F.cross_entropy, logits3, target3, reduction="none", label_smoothing=0.15)
loss_case("ce_1d", F.cross_entropy, logits[0], torch.tensor(3))
lp = torch.log_softmax(logits, 1)
loss_case("nll_weight_ignore", F.nll_loss, lp, target_ign, weight=w)
loss_case("nll_sum", F.nll_loss, lp, target, reduction="sum")
p = torch.sigmoid(x)
t01 = torch.sigmoid(y)
bw = T([4, 5], 0.2, 0.5, 1.0).abs() + 0.5
loss_case("bce", F.binary_cross_entropy, p, t01)
loss_case("bce_weight_sum", F.binary_cross_entropy, p, t01, weight=bw, reduction="sum")
pw = torch.tensor([0.5, 1.0, 2.0, 3.0, 0.75])
loss_case("bcel", F.binary_cross_entropy_with_logits, x, t01)
loss_case("bcel_pos_weight", F.binary_cross_entropy_with_logits, x * 10, t01, pos_weight=pw, weight=bw)

# --- LayerNorm forward and gradients ------------------------------------------
xl = T([3, 4, 6], 0.35, 0.1, 2.0).requires_grad_(True)
ln = torch.nn.LayerNorm([4, 6], eps=1e-5)
with torch.no_grad():
    ln.weight.copy_(T([4, 6], 0.8, 0.0, 1.0) + 1)
    ln.bias.copy_(T([4, 6], 0.6, 1.0, 0.5))
yl = ln(xl)
gy = T([3, 4, 6], 0.45, 0.7, 1.0)
(yl * gy).sum().backward()
out["layernorm"] = {"y": flat(yl), "gx": flat(xl.grad), "gw": flat(ln.weight.grad), "gb": flat(ln.bias.grad)}

# --- a small MLP trained a few steps (SGD with momentum, Adam) ----------------
def mlp_run(opt_name):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                                torch.nn.Linear(16, 4))
    with torch.no_grad():
        for i, prm in enumerate(model.parameters()):
            prm.copy_(T(list(prm.shape), 0.3 + 0.1 * i, 0.2 * i, 0.4))
    xb = T([8, 6], 0.77, 0.5, 1.5)
    yb = torch.tensor([0, 1, 2, 3, 3, 2, 1, 0])
    if opt_name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb, label_smoothing=0.05)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    return {"losses": losses, "final": flat(model[3].weight)}


out["mlp_sgd"] = mlp_run("sgd")
out["mlp_adam"] = mlp_run("adam")

# --- clip_grad_norm_ ------------------------------------------------------------
def clip_case(name, norm_type, max_norm):
    a = T([3, 4], 0.5, 0.1, 2.0).requires_grad_(True)
    b = T([5], 0.9, 0.4, 3.0).requires_grad_(True)
    a.grad = T([3, 4], 0.3, 0.2, 2.0)
    b.grad = T([5], 0.7, 0.9, 4.0)
    total = torch.nn.utils.clip_grad_norm_([a, b], max_norm, norm_type=norm_type)
    out[name] = {"total": float(total), "a": flat(a.grad), "b": flat(b.grad)}


clip_case("clip_2", 2.0, 1.5)
clip_case("clip_inf", math.inf, 0.5)
clip_case("clip_1_noop", 1.0, 1000.0)

# --- learning-rate schedules ----------------------------------------------------
def lrs(make, steps, opt_kind="sgd"):
    prm = [torch.zeros(1, requires_grad=True)]
    opt2 = [torch.zeros(1, requires_grad=True)]
    if opt_kind == "sgd":
        opt = torch.optim.SGD([{"params": prm}, {"params": opt2, "lr": 0.05}], lr=0.1, momentum=0.9)
    else:
        opt = torch.optim.Adam([{"params": prm}, {"params": opt2, "lr": 0.05}], lr=0.1)
    s = make(opt)
    seq = [s.get_last_lr()]
    mom = []
    for _ in range(steps):
        opt.step()
        s.step()
        seq.append(s.get_last_lr())
        g = opt.param_groups[0]
        mom.append(g["momentum"] if "momentum" in g else g["betas"][0])
    return {"lr": seq, "momentum": mom}


S = torch.optim.lr_scheduler
out["sched_step"] = lrs(lambda o: S.StepLR(o, step_size=3, gamma=0.5), 10)
out["sched_multistep"] = lrs(lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.3), 10)
out["sched_exp"] = lrs(lambda o: S.ExponentialLR(o, gamma=0.9), 10)
out["sched_cos"] = lrs(lambda o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.001), 25)
out["sched_lambda"] = lrs(lambda o: S.LambdaLR(o, lambda e: 1 / (1 + e)), 8)
out["sched_linear"] = lrs(lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=6), 10)
out["sched_onecycle"] = lrs(lambda o: S.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=20), 20)
out["sched_onecycle_adam_linear3"] = lrs(lambda o: S.OneCycleLR(o, max_lr=0.3, total_steps=15, anneal_strategy="linear",
                                                                   three_phase=True, pct_start=0.25), 15, "adam")
# SequentialLR: each scheduler made on the optimizer first, then chained (the warm-up-then-cosine recipe among them).
out["sched_seq_warmup_cos"] = lrs(lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
                                                              S.CosineAnnealingLR(o, T_max=10)], milestones=[5]), 20)
out["sched_seq_three"] = lrs(lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.5, total_iters=2), S.ExponentialLR(o, gamma=0.8),
                                                         S.CosineAnnealingLR(o, T_max=4, eta_min=0.001)], milestones=[3, 7]), 16)
out["sched_seq_lambda_multistep"] = lrs(lambda o: S.SequentialLR(o, [S.LambdaLR(o, lambda e: 1.0 / (e + 1)),
                                                                    S.MultiStepLR(o, milestones=[2, 4], gamma=0.3)], milestones=[3]), 10)
out["sched_seq_exp_step_adam"] = lrs(lambda o: S.SequentialLR(o, [S.ExponentialLR(o, gamma=0.9), S.StepLR(o, step_size=3, gamma=0.5)],
                                                             milestones=[4]), 14, "adam")


# --- RMSNorm, Bilinear, scaled_dot_product_attention, MultiheadAttention -------
def grads_case(name, fn, inputs, gy_seed):
    ins = [t.clone().requires_grad_(True) for t in inputs]
    y = fn(*ins)
    gy = T(list(y.shape), 0.37, gy_seed, 1.0)
    (y * gy).sum().backward()
    out[name] = {"y": flat(y), **{f"g{i}": flat(t.grad) for i, t in enumerate(ins)}}


xr = T([3, 4, 6], 0.41, 0.2, 2.0)
wr = T([4, 6], 0.23, 0.9, 0.5) + 1
grads_case("rmsnorm", lambda x, w: F.rms_norm(x, [4, 6], w), [xr, wr], 0.3)
grads_case("rmsnorm_eps", lambda x: F.rms_norm(x, [6], None, 0.1), [xr], 0.5)
out["rmsnorm_default_eps"] = {"float32": torch.finfo(torch.float32).eps, "float64": torch.finfo(torch.float64).eps,
                              "module_eps": torch.nn.RMSNorm(6).eps}

x1 = T([2, 3, 4], 0.53, 0.1, 1.5)
x2 = T([2, 3, 5], 0.61, 0.7, 1.5)
wb = T([3, 4, 5], 0.29, 0.4, 0.8)
bb = T([3], 0.9, 0.3, 0.5)
grads_case("bilinear", F.bilinear, [x1, x2, wb, bb], 0.8)

qs = T([2, 3, 5, 4], 0.31, 0.2, 1.2)
ks = T([2, 3, 6, 4], 0.47, 0.5, 1.2)
vs = T([2, 3, 6, 7], 0.59, 0.9, 1.2)
fmask = T([5, 6], 0.71, 0.3, 1.0)
bmask = torch.tensor([[(i * 7 + j * 3) % 4 != 0 for j in range(6)] for i in range(5)])
grads_case("sdpa", F.scaled_dot_product_attention, [qs, ks, vs], 0.1)
grads_case("sdpa_float_mask_scale", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=fmask, scale=0.3), [qs, ks, vs], 0.2)
grads_case("sdpa_bool_mask", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=bmask), [qs, ks, vs], 0.3)
grads_case("sdpa_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [qs, ks, vs], 0.4)
out["sdpa_bool_mask_list"] = [bool(b) for b in bmask.reshape(-1).tolist()]


def mha_case(name, E, H, call, kdim=None, vdim=None, bias=True, batch_first=False, seed=0.0):
    m = torch.nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first, kdim=kdim, vdim=vdim)
    sd = {}
    with torch.no_grad():
        for i, (n, prm) in enumerate(m.named_parameters()):
            prm.copy_(T(list(prm.shape), 0.13 + 0.07 * i, seed + 0.3 * i, 0.6))
            sd[n] = flat(prm)
    res = call(m)
    o, w = res
    gy = T(list(o.shape), 0.37, 0.25, 1.0)
    loss = (o * gy).sum()
    if w is not None:
        loss = loss + (w * T(list(w.shape), 0.43, 0.6, 1.0)).sum()
    loss.backward()
    out[name] = {"params": sd, "names": [n for n, _ in m.named_parameters()], "y": flat(o), "w": None if w is None else flat(w),
                 "wshape": None if w is None else list(w.shape),
                 "grads": {n: flat(p.grad) for n, p in m.named_parameters()}}


qm = T([5, 2, 8], 0.33, 0.1, 1.0)
km = T([6, 2, 8], 0.45, 0.6, 1.0)
vm = T([6, 2, 8], 0.57, 0.2, 1.0)
kpm = torch.tensor([[False, False, True, False, False, True], [False, True, False, False, False, False]])
am = torch.tensor([[(i + 2 * j) % 5 == 0 for j in range(6)] for i in range(5)])
mha_case("mha_basic", 8, 2, lambda m: m(qm, km, vm))
mha_case("mha_masks_perhead", 8, 2, lambda m: m(qm, km, vm, key_padding_mask=kpm, attn_mask=am, average_attn_weights=False), seed=0.5)
mha_case("mha_float_mask_noweights", 8, 4, lambda m: m(qm, km, vm, attn_mask=T([5, 6], 0.2, 0.1, 1.0), need_weights=False), seed=0.9)
xs = T([2, 5, 8], 0.39, 0.8, 1.0)
causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
mha_case("mha_self_batch_first_causal", 8, 2, lambda m: m(xs, xs, xs, attn_mask=causal, is_causal=True), batch_first=True, seed=1.3)
k6 = T([6, 2, 3], 0.51, 0.4, 1.0)
v6 = T([6, 2, 5], 0.63, 0.1, 1.0)
mha_case("mha_kdim_vdim_nobias", 8, 2, lambda m: m(qm, k6, v6), kdim=3, vdim=5, bias=False, seed=0.2)
mha_case("mha_unbatched", 8, 2, lambda m: m(qm[:, 0], km[:, 0], vm[:, 0]), seed=0.7)
torch.manual_seed(0)
m_init = torch.nn.MultiheadAttention(64, 4)
out["mha_init"] = {n: {"shape": list(p.shape), "min": float(p.detach().min()), "max": float(p.detach().max()), "std": float(p.detach().std())} for n, p in m_init.named_parameters()}
out["mha_statedict_keys"] = list(m_init.state_dict().keys())
out["mha_statedict_keys_kv"] = list(torch.nn.MultiheadAttention(8, 2, kdim=3, vdim=5).state_dict().keys())

print("// generated by test/reference/torch_nn.py with torch " + torch.__version__ + " (CPU, float64) -- do not edit;")
print("// rerun: python3 test/reference/torch_nn.py > test/nn-torch-figures.ts")
print("/* eslint-disable */")
print("export const TORCH = " + json.dumps(out, separators=(",", ":")) + ";")
