# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""Register collx as the torch.distributed backend "collx".

    import collx.torch
    torch.distributed.init_process_group("collx")   # torchrun's env://

The process group takes the store init_process_group made (torchrun's
TCPStore, a FileStore...) and exchanges collx's unique id through it;
init_process_group(timeout=...) becomes collx's timeout on every
collective's progress.  See Documentation/pytorch.md.
"""
import torch.distributed as _dist

try:
    from collx import _c10d
except ImportError as e:  # pragma: no cover - a build problem, said plainly
    raise ImportError(
        "collx.torch: the compiled extension collx/_c10d*.so is missing or "
        "does not load (%s); build it with `make -C user/torch`" % e) from e

ProcessGroupCollx = _c10d.ProcessGroupCollx


def _create(store, rank, size, timeout):
    return ProcessGroupCollx(store, rank, size, timeout)


# Importing twice (or a reload) must not register twice: torch asserts.
if "COLLX" not in _dist.Backend._plugins:
    _dist.Backend.register_backend("collx", _create)
