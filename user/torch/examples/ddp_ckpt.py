# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""DDP on collx with collx.checkpoint: train, checkpoint, die, resume.

    torchrun --nnodes 2 --nproc_per_node 1 --node_rank $RANK --max_restarts 1 \\
        --master_addr node0 --master_port 29580 \\
        ddp_ckpt.py --steps 8 --every 2 --kill-step 6 --kill-rank 1

A small MLP from a fixed seed, Adam, DDP on the collx backend, a batch per
rank and step from a fixed seed.  Every --every steps the model's and the
optimizer's state_dict go to collx.checkpoint.save() (async: training goes
on while it replicates; the handle is waited for at the next save).  In the
first attempt (TORCHELASTIC_RESTART_COUNT=0), at --kill-step, every rank
waits for its last save and rank --kill-rank SIGKILLs itself; the other
ranks' next allreduce fails (within the process group's timeout) and they
exit, and torchrun (--max_restarts 1) restarts every worker.  A restarted
worker asks collx.checkpoint.latest() for the newest committed step, loads
it into a fresh model and optimizer, and trains on to --steps.

Then, in the same process, an uninterrupted run: the same model from the
same seed trained from step 1 to --steps with the same DDP, optimizer and
batches and no checkpoint.  Its parameters right after the committed step
and at the end must be bitwise equal to the resumed run's (fp32 on the CPU,
one thread, 2 ranks: DDP's allreduce of two addends is exact in either
order, so nothing is left to rounding); the optimizer's state too.  Exit
status 0 when they are, and when the resume came from --expect-step.
"""
import time

T_START = time.time()

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import collx.checkpoint as ckpt  # noqa: E402
import collx.torch  # noqa: E402,F401  registers the "collx" backend

IN, HIDDEN, OUT = 32, 64, 8


def build(seed, lr):
    torch.manual_seed(seed)
    m = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                            torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                            torch.nn.Linear(HIDDEN, OUT))
    return m, torch.optim.Adam(m.parameters(), lr=lr)


def batch(seed, step, rank, size):
    g = torch.Generator().manual_seed(seed)
    teacher = torch.randn(IN, OUT, generator=g)
    g.manual_seed(seed * 100003 + step * 1009 + rank)
    x = torch.randn(size, IN, generator=g)
    return x, torch.tanh(x @ teacher)


def train_step(ddp, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    opt.step()
    return float(loss)


def snapshot(model, opt):
    """Copies of the parameters and the optimizer's state tensors."""
    st = opt.state_dict()["state"]
    return ([p.detach().clone() for p in model.parameters()],
            [(i, k, v.clone()) for i in sorted(st) for k, v in sorted(st[i].items())
             if isinstance(v, torch.Tensor)])


def bits(t):
    return t.reshape(-1).view(torch.uint8)


def differ(a, b):
    """Names of what is not bitwise equal between two snapshots."""
    bad = ["param %d" % i for i, (p, q) in enumerate(zip(a[0], b[0]))
           if not torch.equal(bits(p), bits(q))]
    if [(i, k) for i, k, _ in a[1]] != [(i, k) for i, k, _ in b[1]]:
        bad.append("optimizer state keys")
    else:
        bad += ["optimizer state %d.%s" % (i, k) for (i, k, u), (_, _, v) in zip(a[1], b[1])
                if not torch.equal(bits(u), bits(v))]
    return bad


def rendezvous(rank, world, attempt):
    """Every worker of this attempt is up (the restarted ones import torch
    at different times): wait for them on torchrun's own store with a long
    timeout, so that the process group's timeout (which is also collx's
    per-collective timeout) can stay short."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), None,
                          False, datetime.timedelta(seconds=600))
    store = dist.PrefixStore("ddp_ckpt/attempt_%d" % attempt, store)
    store.set("up%d" % rank, b"1")
    store.wait(["up%d" % r for r in range(world)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--every", type=int, default=2, help="checkpoint every N steps")
    ap.add_argument("--kill-step", type=int, default=0,
                    help="first attempt: a rank SIGKILLs itself before this step (0: never)")
    ap.add_argument("--kill-rank", type=int, default=1)
    ap.add_argument("--expect-step", type=int, default=0,
                    help="a restarted worker must resume from this step")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--timeout", type=int, default=30,
                    help="seconds: the process group's and collx's per-op timeout")
    args = ap.parse_args()
    torch.set_num_threads(1)
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    t_import = time.time() - T_START
    rendezvous(rank, world, attempt)
    dist.init_process_group("collx", timeout=datetime.timedelta(seconds=args.timeout))
    tag = "rank %d attempt %d" % (rank, attempt)
    print("%s: torch imported after %.1f s, process group after %.1f s" % (
        tag, t_import, time.time() - T_START), flush=True)

    model, opt = build(args.seed, args.lr)
    start = ckpt.latest()            # collective: every rank, same point
    loaded = None
    if start is not None:
        t0 = time.perf_counter()
        sd = {"model": model.state_dict(), "optim": opt.state_dict()}
        ckpt.load(sd, start)         # the model's tensors in place; Adam's state added
        opt.load_state_dict(sd["optim"])
        loaded = snapshot(model, opt)
        c = ckpt.default_checkpointer()
        print("%s: resumed from committed step %d (epoch %s, from its %s copy, %.3f s)" % (
            tag, start, c.last_load_stats["epoch"], c.last_source, time.perf_counter() - t0),
            flush=True)
        if args.expect_step and start != args.expect_step:
            print("%s: FAIL resumed from step %d, expected %d" % (tag, start, args.expect_step),
                  flush=True)
            return 1
    else:
        start = 0
        print("%s: no checkpoint, training from the seed" % tag, flush=True)
    ddp = DDP(model)

    handle = None
    step = start
    try:
        for step in range(start + 1, args.steps + 1):
            if attempt == 0 and step == args.kill_step:
                if handle is not None:
                    st = handle.wait()
                    print("%s: step %d committed (pause %.4f s, replication %.3f s)" % (
                        tag, handle.step, st["pause_seconds"], st["replicate_seconds"]),
                        flush=True)
                if rank == args.kill_rank:
                    print("%s: SIGKILL myself before step %d" % (tag, step), flush=True)
                    os.kill(os.getpid(), signal.SIGKILL)
            x, y = batch(args.seed, step, rank, args.batch)
            loss = train_step(ddp, opt, x, y)
            if rank == 0:
                print("%s: step %d loss %.6e" % (tag, step, loss), flush=True)
            if step % args.every == 0:
                if handle is not None:
                    handle.wait()    # the previous one: committed by now, as a rule
                sd = {"model": model.state_dict(), "optim": opt.state_dict()}
                handle = ckpt.save(sd, step)   # returns after the snapshot
        if handle is not None:
            st = handle.wait()
            print("%s: last checkpoint, step %d, committed (pause %.4f s)" % (
                tag, handle.step, st["pause_seconds"]), flush=True)
    except Exception:
        # the peer died: say so and go, without waiting at exit for
        # anything that involves it (torchrun restarts this worker)
        print("%s: step %d failed:\n%s" % (tag, step, traceback.format_exc()), flush=True)
        sys.stdout.flush()
        os._exit(1)
    resumed = snapshot(model, opt)

    # The uninterrupted run, in this process: same seed, DDP, batches.
    rmodel, ropt = build(args.seed, args.lr)
    rddp = DDP(rmodel)
    bad = []
    for s in range(1, args.steps + 1):
        x, y = batch(args.seed, s, rank, args.batch)
        train_step(rddp, ropt, x, y)
        if loaded is not None and s == start:
            bad += ["at step %d: %s" % (s, d) for d in differ(loaded, snapshot(rmodel, ropt))]
    bad += ["at step %d: %s" % (args.steps, d) for d in differ(resumed, snapshot(rmodel, ropt))]
    for b in bad:
        print("%s: FAIL differs from the uninterrupted run %s" % (tag, b), flush=True)
    if not bad:
        print("%s: parameters and Adam state bitwise equal to an uninterrupted run's at "
              "step %d%s" % (tag, args.steps, " and at the committed step %d" % start
                             if loaded is not None else ""), flush=True)
    ckpt.close()
    dist.barrier()
    dist.destroy_process_group()
    print("%s: done after %.1f s" % (tag, time.time() - T_START), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
