# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""Train a small MLP on synthetic data with DistributedDataParallel.

    torchrun --nnodes 4 --nproc_per_node 1 --node_rank $RANK \\
        --master_addr node0 --master_port 29580 \\
        ddp_train.py --backend collx [--steps 30]

--backend collx|gloo trains one model on that backend; --backend compare
trains two copies from the same seed, one on each (collx the default
group, gloo a second group of the same job), step by step on the same
batches, and prints their losses and step times side by side.

Every step, every rank hashes its parameters and the hashes are
all-gathered (through gloo, outside the timed step): they must be equal
on every rank.  With compare, the two losses must agree within
--tolerance (relative to max(1, |loss|)): collx and gloo add the
gradients in different orders, so the float results differ by rounding,
and the difference grows slowly from step to step.  Exit status 0 when
every check held.
"""
import time

T_START = time.time()

import argparse  # noqa: E402
import datetime  # noqa: E402
import faulthandler  # noqa: E402
import hashlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

# Small enough that a step costs well under a second on the lab's
# emulated nodes (25834 parameters, 101 KiB of gradients: the emulator's
# floating point, not the allreduces, set the step time), big enough for
# 3 DDP buckets of at least 16 KiB each (registered, zero copy).
IN, HIDDEN, OUT = 64, 96, 10


def model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, OUT))


def batch(seed, step, rank, size):
    """This rank's batch of a fixed synthetic regression (a random teacher)."""
    g = torch.Generator().manual_seed(seed)
    teacher = torch.randn(IN, OUT, generator=g)
    g.manual_seed(seed * 100003 + step * 1009 + rank)
    x = torch.randn(size, IN, generator=g)
    return x, torch.tanh(x @ teacher) + 0.01 * torch.randn(size, OUT, generator=g)


def param_hash(m):
    h = hashlib.sha256()
    for p in m.parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    return int.from_bytes(h.digest()[:8], "little", signed=True)


class Trainer:
    def __init__(self, name, group, args):
        self.name = name
        self.ddp = DDP(model(args.seed), process_group=group, bucket_cap_mb=args.bucket_mb)
        self.opt = torch.optim.SGD(self.ddp.parameters(), lr=args.lr, momentum=0.9)
        self.times, self.losses = [], []

    def step(self, x, y):
        t0 = time.perf_counter()
        self.opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(self.ddp(x), y)
        loss.backward()  # DDP allreduces the gradient buckets here
        self.opt.step()
        self.times.append(time.perf_counter() - t0)
        return loss.detach()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("collx", "gloo", "compare"), default="collx")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--bucket-mb", type=float, default=0.035,
                    help="DDP bucket size, the first bucket's too (torch's default for it "
                    "is 1 MiB): 3 buckets")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--timeout", type=int, default=60, help="seconds, collx's per-op timeout")
    args = ap.parse_args()
    t_import = time.time() - T_START

    if args.backend != "gloo":
        import collx.torch  # noqa: F401  registers the "collx" backend
    dist.init_process_group("gloo" if args.backend == "gloo" else "collx",
                            timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    # Checks and printed losses go through gloo, outside the timed steps.
    check = dist.new_group(backend="gloo") if args.backend != "gloo" else None
    names = ["collx", "gloo"] if args.backend == "compare" else [args.backend]
    # collx is the default group; gloo too, unless it is compared with collx.
    groups = {"collx": None, "gloo": check if args.backend == "compare" else None}
    # DDP reads its first bucket's size from here (torch's tuning knob).
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.bucket_mb * 2 ** 20)
    trainers = [Trainer(n, groups[n], args) for n in names]
    collx_pg = dist.distributed_c10d._get_default_group() if args.backend != "gloo" else None
    # DDP's first step runs one bucket of everything; the second step's
    # forward rebuilds the buckets in gradient order (and broadcasts the
    # new layout, two small bounced broadcasts): the steady state is from
    # step 3 on.
    STEADY = 3
    paths_steady = regs_steady = None

    failed = []
    if rank == 0:
        cols = "".join("  %-13s" % ("loss(%s)" % n) for n in names)
        cols += "  |diff|/max(1,|l|)" if len(names) == 2 else ""
        cols += "".join("  %10s" % ("ms(%s)" % n) for n in names)
        # Under the lab's emulator the start costs more than the steps.
        print("# torch imported after %.1f s, process groups and DDP ready after %.1f s" % (
            t_import, time.time() - T_START), flush=True)
        print("# DDP, %d ranks, %d parameters, batch %d per rank\nstep%s" % (
            world, sum(p.numel() for p in trainers[0].ddp.parameters()), args.batch, cols),
            flush=True)
    for step in range(1, args.steps + 1):
        # A step that takes longer than twice collx's timeout (which ends
        # any collective that stopped) is stuck outside the collectives:
        # say where every thread is.
        faulthandler.dump_traceback_later(2 * args.timeout)
        x, y = batch(args.seed, step, rank, args.batch)
        losses = [t.step(x, y) for t in trainers]
        if step == STEADY - 1 and collx_pg is not None:
            paths_steady, regs_steady = collx_pg.memory_paths(), collx_pg.registration_stats()
        # The mean loss of all ranks, and every rank's parameter hash.
        mean = torch.stack(losses) / world
        dist.all_reduce(mean, group=check)
        hashes = torch.tensor([param_hash(t.ddp.module) for t in trainers], dtype=torch.int64)
        every = [torch.empty_like(hashes) for _ in range(world)]
        dist.all_gather(every, hashes, group=check)
        for i, t in enumerate(trainers):
            if any(int(h[i]) != int(hashes[i]) for h in every):
                failed.append("step %d: %s parameters differ across ranks" % (step, t.name))
            t.losses.append(float(mean[i]))
        line = "%4d" % step + "".join("  %-13.6e" % float(m) for m in mean)
        if len(names) == 2:
            rel = abs(float(mean[0]) - float(mean[1])) / max(1.0, abs(float(mean[1])))
            line += "  %-18.2e" % rel
            if rel > args.tolerance:
                failed.append("step %d: losses differ by %.2e (tolerance %.0e)" % (
                    step, rel, args.tolerance))
        line += "".join("  %10.1f" % (t.times[-1] * 1e3) for t in trainers)
        if rank == 0:
            print(line, flush=True)
        faulthandler.cancel_dump_traceback_later()

    if rank == 0:
        for t in trainers:
            steady = t.times[STEADY - 1:] or t.times
            print("%s: %.1f ms per step (median of steps %d..%d; mean %.1f), loss %.4e -> %.4e" % (
                t.name, statistics.median(steady) * 1e3, STEADY, args.steps,
                statistics.mean(steady) * 1e3, t.losses[0], t.losses[-1]), flush=True)
        if len(trainers) == 2:
            a, b = (statistics.median(t.times[STEADY - 1:] or t.times) for t in trainers)
            print("step time collx/gloo: %.2f" % (a / b), flush=True)
    if collx_pg is not None and args.steps >= STEADY:
        # Every bucket was registered when it was first used: the steady
        # state runs zero copy, nothing bounced, nothing registered anew.
        end, regs = collx_pg.memory_paths(), collx_pg.registration_stats()
        ops = end["ops"] - paths_steady["ops"]
        zc = end["zero_copy"] - paths_steady["zero_copy"]
        bounced = end["bounced"] - paths_steady["bounced"]
        new_regs = regs["misses"] - regs_steady["misses"]
        if rank == 0:
            print("collx steps %d..%d: %d allreduces, %d zero copy, %d bounced, %d registered anew; "
                  "registrations %s" % (STEADY, args.steps, ops, zc, bounced, new_regs, regs),
                  flush=True)
        if world > 1 and (ops == 0 or zc != ops or bounced or new_regs):
            failed.append("collx steady state not all zero copy on registered buckets: %d ops, "
                          "%d zero copy, %d bounced, %d registered anew" % (ops, zc, bounced, new_regs))
    for f in failed:
        print("rank %d: FAIL %s" % (rank, f), flush=True)
    if rank == 0 and not failed:
        print("parameters identical on all %d ranks at every step%s" % (
            world, ", losses within %.0e" % args.tolerance if len(names) == 2 else ""), flush=True)
    dist.barrier(group=check)
    dist.destroy_process_group()
    if rank == 0:
        print("# done after %.1f s" % (time.time() - T_START), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
