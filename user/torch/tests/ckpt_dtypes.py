# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""collx.checkpoint round trip of every dtype (tests/lab/cases/96-ckpt-torch.sh).

One plain python3 process per node (COLLX_RANK/COLLX_NRANKS/COLLX_MASTER_ADDR,
no torch.distributed): a state_dict with a tensor of every dtype of
collx.checkpoint.DTYPES (the backend's, and bool) in several shapes (0-d,
empty, transposed), NaNs, -0.0 and extremes, plus an Adam optimizer's
state and plain values, is saved async and scribbled over as soon as save
returns; after wait, latest() names the step; load() restores every byte
into the scribbled state_dict in place and rebuilds it into an empty dict;
a wrong shape is refused naming its key and changes nothing.
"""
import os
import sys

import torch

import collx.checkpoint as ckpt

rank = int(os.environ["COLLX_RANK"])
torch.manual_seed(7 + rank)


def sample(d, shape):
    if d == torch.bool:
        return torch.rand(shape) > 0.5
    if d.is_complex or d.is_floating_point:
        t = torch.randn(shape, dtype=torch.complex128 if d.is_complex else torch.float64) * 1e3
        t = t.to(d)
        if t.numel() >= 3 and not d.is_complex:
            flat = t.view(-1)
            flat[0], flat[1], flat[2] = float("nan"), -0.0, float("inf")
        return t
    info = torch.iinfo(d)
    t = torch.randint(max(info.min, -2 ** 62), min(info.max, 2 ** 62), shape, dtype=d)
    if t.numel() >= 2:
        t.view(-1)[0], t.view(-1)[1] = info.min, info.max
    return t


def bits(t):
    return t.contiguous().reshape(-1).view(torch.uint8)


sd = {"dtypes": {}}
for d in ckpt.DTYPES:
    n = str(d).replace("torch.", "")
    sd["dtypes"][n] = {"vec": sample(d, (37,)), "mat": sample(d, (5, 7)).t(),
                       "scalar": sample(d, ()), "empty": sample(d, (0, 4))}
model = torch.nn.Linear(16, 4)
opt = torch.optim.Adam(model.parameters(), lr=0.003)
model(torch.randn(8, 16)).pow(2).mean().backward()
opt.step()
sd["model"], sd["optim"] = model.state_dict(), opt.state_dict()
sd["meta"] = {"note": "rank %d" % rank, "ints": [1, 2, 3], "pair": (torch.arange(5), "x")}

flat = []
ckpt._describe(sd, "", flat)
ref = [(name, t.clone()) for name, t, _ in flat]
h = ckpt.save(sd, 3)
with torch.no_grad():
    for _, t, _ in flat:
        t.copy_(~t if t.dtype == torch.bool else torch.zeros_like(t))
st = h.wait()
print("rank %d: saved %d tensors of %d dtypes, %d bytes: pause %.4f s (pack %.4f), replication "
      "%.3f s, epoch %d" % (rank, len(ref), len(ckpt.DTYPES), st["bytes"], st["pause_seconds"],
                            st["pack_seconds"], st["replicate_seconds"], st["epoch"]), flush=True)
step = ckpt.latest()
assert step == 3, "latest() is %r, not 3" % (step,)


def check(got, what):
    flat2 = []
    ckpt._describe(got, "", flat2)
    names = [n for n, _, _ in flat2]
    if names != [n for n, _ in ref]:
        sys.exit("rank %d: %s: the structure differs: %s" % (rank, what, names))
    for (n, t, _), (_, r) in zip(flat2, ref):
        if t.dtype != r.dtype or t.shape != r.shape or not torch.equal(bits(t), bits(r)):
            sys.exit("rank %d: %s: %s differs from the saved tensor" % (rank, what, n))


ckpt.load(sd)
check(sd, "in place")
assert sd["meta"]["pair"][1] == "x" and sd["meta"]["note"] == "rank %d" % rank
c = ckpt.default_checkpointer()
print("rank %d: load in place from %s: every byte of %d tensors right" % (
    rank, c.last_source, len(ref)), flush=True)
fresh = {}
ckpt.load(fresh, 3)
check(fresh, "into {}")
print("rank %d: load into an empty dict: structure, dtypes, shapes and bytes right" % rank,
      flush=True)
bad = {"dtypes": {k: dict(v) for k, v in sd["dtypes"].items()}, "model": {}, "optim": {},
       "meta": {}}
sd["dtypes"]["int16"]["vec"].fill_(5)
bad["dtypes"]["int16"]["vec"] = sd["dtypes"]["int16"]["vec"]
bad["dtypes"]["float32"]["mat"] = torch.zeros(5, 7)
try:
    ckpt.load(bad, 3)
    sys.exit("rank %d: a wrong shape was loaded" % rank)
except ckpt.CheckpointError as e:
    assert "dtypes.float32.mat" in str(e), str(e)
    assert int(sd["dtypes"]["int16"]["vec"][0]) == 5, "a refused load changed a tensor"
    print("rank %d: wrong shape refused: %s" % (rank, e), flush=True)
ckpt.close()
print("rank %d: every dtype round-trips exactly" % rank, flush=True)
