# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""A rank that stops submitting: the collective ends on every other rank
with a RuntimeError naming the rank to blame and the phase, within that
rank's own init_process_group/new_group timeout; the group then refuses
new collectives at once, saying why."""
import datetime
import os
import re
import time

import torch
import torch.distributed as dist

# Ring neighbours of the stuck rank time out first (case 34's staggering):
# its predecessor (it waits for credits) before its successor (it waits
# for data), everyone else later, whatever the emulator's timing.
PRED_TIMEOUT, SUCC_TIMEOUT, OTHER_TIMEOUT = 6, 10, 15


def check_stuck(T, gloo, stuck):
    rank, world = dist.get_rank(), dist.get_world_size()
    pred, succ = (stuck - 1) % world, (stuck + 1) % world
    secs = PRED_TIMEOUT if rank == pred else SUCC_TIMEOUT if rank == succ else OTHER_TIMEOUT
    # The ring: which rank waits for whom is then known.
    os.environ["COLLX_ALGO"] = "ring"
    try:
        g = dist.new_group(backend="collx", timeout=datetime.timedelta(seconds=secs))
    finally:
        del os.environ["COLLX_ALGO"]
    # 1 MiB: more than the staging slots of a connection (4 x 64 KiB), so
    # the stuck rank's predecessor runs out of its credits and waits for
    # it (with less, it waits for its own predecessor's data and names
    # that rank instead), as in case 34.
    x = torch.ones(262144)
    dist.all_reduce(x, group=g)
    T.ok(bool((x == world).all()), "stuck group: works while every rank takes part")
    if rank != stuck:
        t0 = time.time()
        w = dist.all_reduce(x, group=g, async_op=True)
        while not w.is_completed() and time.time() - t0 < 90:
            time.sleep(0.05)
        took = time.time() - t0
        T.ok(w.is_completed(), "stuck: the collective ends", "%.1f s" % took)
        T.ok(not w.is_success(), "stuck: is_success() is False")
        msg = ""
        try:
            w.wait()
            T.ok(False, "stuck: wait() raises", "it returned")
        except RuntimeError as e:
            msg = str(e)
        print("rank %d: after %.1f s (timeout %d s): %s" % (rank, took, secs, msg), flush=True)
        T.ok("phase " in msg and ("failing rank" in msg or "rank " in msg), "stuck: names a rank and a phase", msg)
        # The words torch's own tests (test_barrier_timeout_*) look for.
        T.ok(re.search(" (Timed out|closed|timeout) ", msg) is not None,
             "stuck: says it timed out (or a peer closed), as torch words it", msg)
        if rank in (pred, succ):
            T.ok("failing rank %d" % stuck in msg, "stuck: neighbour names rank %d" % stuck, msg)
        T.ok(took < secs + 20, "stuck: ends within the timeout", "%.1f s for %d s" % (took, secs))
        try:
            w.get_future().wait()
            T.ok(False, "stuck: the future raises too", "it returned")
        except RuntimeError as e:
            T.ok(str(e) == msg, "stuck: the future raises the same error", str(e))
        try:
            dist.all_reduce(x, group=g)
            T.ok(False, "stuck: the failed group refuses the next collective", "it ran")
        except RuntimeError as e:
            T.ok("failed earlier" in str(e) and "phase " in str(e),
                 "stuck: the next collective is refused with the first failure", str(e))
    # The stuck rank waits here (on gloo) until the others are done.
    dist.barrier(group=gloo)
    dist.destroy_process_group(g)
    # The default group is another comm: it still works.
    y = torch.full((16,), float(rank))
    dist.all_reduce(y)
    T.ok(bool((y == sum(range(world))).all()), "stuck: the default group still works")
