# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""What the collx backend tests share: inputs every rank can make for any
rank, element-for-element comparison, and the tally."""
import sys
import traceback

import torch

# Unit roundoff of each float type: a sum of n terms in any order is off
# from the exact sum by at most (n - 1) * u * sum(|x|) (Higham, ch. 4).
UNIT_ROUNDOFF = {
    torch.float16: 2.0 ** -11,
    torch.bfloat16: 2.0 ** -8,
    torch.float32: 2.0 ** -24,
    torch.float64: 2.0 ** -53,
}

INT_TYPES = (torch.int8, torch.uint8, torch.int32, torch.int64)
FLOAT_TYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
ALL_TYPES = INT_TYPES + FLOAT_TYPES


class Tally:
    def __init__(self, rank):
        self.rank = rank
        self.passed = 0
        self.failed = []

    def ok(self, cond, name, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed.append(name)
            print("rank %d: FAIL %s%s" % (self.rank, name, ": " + detail if detail else ""),
                  flush=True)
        return cond

    def run(self, name, fn, *args):
        """Run one check; an unexpected exception fails it, with its trace."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - any error is this check's failure
            self.failed.append(name)
            print("rank %d: FAIL %s raised:\n%s" % (self.rank, name, traceback.format_exc()),
                  flush=True)

    def summary(self, what):
        print("rank %d: %s: %d checks passed, %d failed%s" % (
            self.rank, what, self.passed, len(self.failed),
            (": " + ", ".join(self.failed[:20])) if self.failed else ""), flush=True)
        return 0 if not self.failed else 1


def make(seed, rank, shape, dtype, kind="any"):
    """The input of @rank for the check @seed: the same on every rank that
    asks, so that any rank can compute an exact reference.
    kind: "any" (small integers, exact in every type and sum),
    "pow2" (+-1, +-2: products exact), "uniform" (floats in [-1, 1))."""
    g = torch.Generator().manual_seed(seed * 1009 + rank)
    if kind == "uniform":
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    if kind == "pow2":
        v = torch.tensor([1, 2, -1, -2] if dtype != torch.uint8 else [1, 2, 1, 2])
        return v[torch.randint(0, 4, shape, generator=g)].to(dtype)
    lo, hi = (0, 30) if dtype == torch.uint8 else (-30, 30)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def same(t, a, b):
    """Element for element: exactly, NaNs equal."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False, "shape/dtype %s %s vs %s %s" % (a.shape, a.dtype, b.shape, b.dtype)
    if a.is_floating_point():
        eq = (a == b) | (torch.isnan(a) & torch.isnan(b))
    else:
        eq = a == b
    if bool(eq.all()):
        return True, ""
    i = int((~eq).flatten().nonzero()[0])
    return False, "%d of %d elements differ, first at %d: %s vs %s" % (
        int((~eq).sum()), eq.numel(), i, a.flatten()[i].item(), b.flatten()[i].item())


def within(a, b, bound):
    """|a - b| <= bound element-wise (bound a tensor or a number)."""
    d = (a.double() - b.double()).abs()
    bad = d > bound
    if not bool(bad.any()):
        return True, "max diff %.3g" % float(d.max()) if d.numel() else ""
    i = int(bad.flatten().nonzero()[0])
    bi = bound if not torch.is_tensor(bound) else float(bound.flatten()[i])
    return False, "%d elements beyond the bound, first at %d: %r vs %r (bound %.3g)" % (
        int(bad.sum()), i, a.flatten()[i].item(), b.flatten()[i].item(), bi)


def fail_exit(msg):
    print(msg, flush=True)
    sys.exit(1)
