# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""Lab test of collx.checkpoint (tests/lab/cases/96-ckpt-torch.sh), one
process per node, no torch.distributed: a model's and an Adam optimizer's
state_dict plus tensors of other dtypes saved async; every tensor changed
as soon as save returns; wait; latest names the step; load restores every
byte in place (compared with a copy taken before the save).  Then a state
of 80 tensors (more than the library's 64 regions: the packed path) the
same way, from the peer when the own copy is dropped is not reachable from
Python, so from the own area."""
import os
import sys

import torch

import collx.checkpoint as ckpt

rank = int(os.environ["COLLX_RANK"])
torch.manual_seed(1 + rank)


def clone(sd):
    return [(n, t.clone()) for n, t in ckpt._tensors(sd)]


def same(sd, ref, what):
    now = ckpt._tensors(sd)
    assert [n for n, _ in now] == [n for n, _ in ref], what + ": structure changed"
    for (n, t), (_, r) in zip(now, ref):
        a = t.reshape(-1).view(torch.uint8)
        b = r.reshape(-1).view(torch.uint8)
        if not torch.equal(a, b):
            sys.exit("rank %d: %s: %s differs from the saved bytes" % (rank, what, n))


def scribble(sd):
    with torch.no_grad():
        for _, t in ckpt._tensors(sd):
            t.reshape(-1).view(torch.uint8).fill_(0x5a)


model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
model(torch.randn(16, 32)).pow(2).mean().backward()
opt.step()
extra = {"f64": torch.randn(100, dtype=torch.float64), "i32": torch.arange(77, dtype=torch.int32),
         "bf16": torch.randn(33).to(torch.bfloat16), "bool": torch.rand(50) > 0.5,
         "i8": torch.randint(-100, 100, (31,), dtype=torch.int8),
         "c64": torch.randn(9, dtype=torch.complex64), "empty": torch.empty(0)}
sd = {"model": model.state_dict(), "optim": opt.state_dict(), "extra": extra}
many = {"t%02d" % i: torch.randn(i + 1) for i in range(80)}
cap = max(ckpt.state_bytes(sd), ckpt.state_bytes(many))
with ckpt.Checkpointer(cap) as c:
    ref = clone(sd)
    h = c.save(sd, 1)
    scribble(sd)            # free as soon as save returned
    st = h.wait()
    print("rank %d: save step 1: %d bytes, %d tensors, pause %.4f s, replication %.4f s, epoch %d"
          % (rank, st["bytes"], len(ref), st["pause_seconds"], st["replicate_seconds"],
             st["epoch"]))
    latest = c.latest()
    assert latest is not None and latest[0] == 1, "latest: %r" % (latest,)
    src = c.load(sd, 1)
    same(sd, ref, "step 1")
    print("rank %d: load step 1 from %s: every byte of %d tensors (model, Adam state, 7 dtypes) right"
          % (rank, src, len(ref)))
    ref = clone(many)
    c.save(many, 2).wait()
    scribble(many)
    src = c.load(many, 2)
    same(many, ref, "step 2")
    print("rank %d: load step 2 from %s: 80 tensors (packed) right; latest %r"
          % (rank, src, c.latest()))
    try:
        c.load(sd, 99)
        sys.exit("rank %d: a load of an unknown step succeeded" % rank)
    except ckpt.CheckpointError as e:
        assert e.errno == 2, str(e)
        print("rank %d: unknown step refused: %s" % (rank, e))
print("rank %d: done" % rank)
