# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""DDP step time while a checkpoint replicates (make bench-ckpt, issue 38).

    torchrun --nnodes N --nproc_per_node 1 ... ddp_ckpt_bench.py --steps 8

One DDP model on the collx backend (an MLP of --layers x --hidden, Adam),
trained --steps steps without a checkpoint (phase A), then --steps steps
with collx.checkpoint.save() of the model's and Adam's state after every
optimizer step (phase B: async, so the replicas to other nodes' memory and
the commit run while the next steps compute and allreduce; a save while the
previous one still replicates waits for it, inside the step, as a user's
loop would).  Each step is timed from zero_grad to the save's return; the
first --warmup steps of each phase are left out.  Prints rank 0's mean step
time of each phase, their ratio against the issue's 1.2 target, each
save's pause and replication, and the state's size.  A benchmark: the
ratio never fails it; a failed save or collective does.
"""
import time

T_START = time.time()

import argparse  # noqa: E402
import datetime  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import collx.checkpoint as ckpt  # noqa: E402
import collx.torch  # noqa: E402,F401  registers the "collx" backend


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8, help="timed steps per phase")
    ap.add_argument("--warmup", type=int, default=2, help="steps per phase left out")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--timeout", type=int, default=120, help="seconds, collx's per-op timeout")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("collx", timeout=datetime.timedelta(seconds=args.timeout))
    rank = dist.get_rank()
    torch.manual_seed(1234)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU()]
    ddp = DDP(torch.nn.Sequential(*layers))
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(args.batch, args.hidden, generator=g)
    y = torch.randn(args.batch, args.hidden, generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()

    def state():
        return {"model": ddp.module.state_dict(), "optim": opt.state_dict()}

    n = args.warmup + args.steps
    plain = []
    for i in range(n):
        t0 = time.perf_counter()
        step()
        plain.append(time.perf_counter() - t0)
    saving, handles = [], []
    for i in range(n):
        t0 = time.perf_counter()
        step()
        handles.append(ckpt.save(state(), 1000 + i))
        saving.append(time.perf_counter() - t0)
    stats = [h.wait() for h in handles]
    a = statistics.mean(plain[args.warmup:])
    b = statistics.mean(saving[args.warmup:])
    nbytes = sum(t.numel() * t.element_size() for t in ddp.module.state_dict().values())
    if rank == 0:
        world = dist.get_world_size()
        print(f"ddp-ckpt: {world} ranks, MLP {args.layers} x {args.hidden} "
              f"({nbytes / 2 ** 20:.1f} MiB of parameters, with Adam's state "
              f"{3 * nbytes / 2 ** 20:.1f} MiB a rank), batch {args.batch}, "
              f"{args.steps} timed steps a phase after {args.warmup}")
        print(f"ddp-ckpt: step without a checkpoint   {a * 1e3:9.1f} ms "
              f"(min {min(plain[args.warmup:]) * 1e3:.1f}, max {max(plain[args.warmup:]) * 1e3:.1f})")
        print(f"ddp-ckpt: step saving every step      {b * 1e3:9.1f} ms "
              f"(min {min(saving[args.warmup:]) * 1e3:.1f}, max {max(saving[args.warmup:]) * 1e3:.1f})")
        pause = [s["pause_seconds"] for s in stats[args.warmup:]]
        rep = [s["replicate_seconds"] for s in stats[args.warmup:]]
        queued = [s.get("queued_seconds", 0.0) for s in stats[args.warmup:]]
        print(f"ddp-ckpt: save pause {statistics.mean(pause) * 1e3:.1f} ms, "
              f"waited for the previous save {statistics.mean(queued) * 1e3:.1f} ms, "
              f"replication {statistics.mean(rep) * 1e3:.1f} ms (means)")
        ratio = b / a
        print(f"ddp-ckpt: ratio {ratio:.2f} (target <= 1.2: {'PASS' if ratio <= 1.2 else 'MISS'})")
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
