# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""collx.checkpoint: two-phase checkpoints of CPU tensors (issue 38 item 5).

    import collx.checkpoint as ckpt
    c = ckpt.Checkpointer(shard_bytes=ckpt.state_bytes(sd))  # every rank, same point
    h = c.save(sd, step)        # returns after the snapshot: sd is free again
    ...                         # train on; the replication runs behind
    h.wait()                    # committed on every rank (or raises)
    tag, epoch = c.latest()     # the newest checkpoint every rank can restore
    c.load(sd, tag)             # in place, every tensor of sd

A ctypes binding of libcollx_ckpt (user/ckpt, Documentation/checkpoint.md).
@sd is a state_dict (nested dicts and lists, e.g. {"model": m.state_dict(),
"optim": o.state_dict()}): every CPU tensor in it, of any dtype, is saved as
raw bytes in a fixed order (sorted keys); anything that is not a tensor is
not (keep the step in the tag).  Load needs a state_dict of the same
structure, shapes and dtypes (a model and optimizer built the same way,
the optimizer stepped once so its state exists).  Up to 64 tensors go to
the library as regions as they are; more are packed into one staging
buffer first (one more copy in the pause).

The Checkpointer makes its own collx communicator (collx_comm_init_all)
and the area makes the checkpoint's (a second one): every rank must
create it at the same point of its program, as every collective.
Libraries: $COLLX_CKPT_LIB (libcollx_ckpt.so), else the build tree's
user/ckpt, else the system's.
"""
import ctypes
import os

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
_TREE = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))   # user/


def _load_libs():
    lib = os.environ.get("COLLX_CKPT_LIB")
    cands = [lib] if lib else [os.path.join(_TREE, "ckpt", "libcollx_ckpt.so.1"),
                               "libcollx_ckpt.so.1"]
    core = [os.path.join(_TREE, "lib", "libcollx.so.1"), "libcollx.so.1"]
    err = None
    for c in core:
        try:
            # global: libcollx_ckpt's NEEDED libcollx.so.1 resolves to it
            ctypes.CDLL(c, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError as e:
            err = e
    for c in cands:
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            err = e
    raise ImportError("collx.checkpoint: cannot load libcollx_ckpt (%s); build it with "
                      "`make -C user/ckpt` or set COLLX_CKPT_LIB" % err)


_lib = _load_libs()
_vp = ctypes.c_void_p


class _Region(ctypes.Structure):
    _fields_ = [("buf", _vp), ("bytes", ctypes.c_size_t)]


class _Stats(ctypes.Structure):
    _fields_ = [("tag", ctypes.c_uint64), ("seconds", ctypes.c_double),
                ("bytes_local", ctypes.c_uint64), ("bytes_sent", ctypes.c_uint64),
                ("bytes_received", ctypes.c_uint64), ("mem", ctypes.c_uint32),
                ("pause_seconds", ctypes.c_double), ("replicate_seconds", ctypes.c_double),
                ("queued_seconds", ctypes.c_double), ("epoch", ctypes.c_uint64)]


def _sig(name, res, *args):
    f = getattr(_lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_init_all = _sig("collx_comm_init_all", ctypes.c_int, ctypes.POINTER(_vp))
_comm_destroy = _sig("collx_comm_destroy", ctypes.c_int, _vp)
_comm_err = _sig("collx_comm_last_error", ctypes.c_char_p, _vp)
_area_create = _sig("collx_ckpt_area_create", ctypes.c_int, _vp, ctypes.c_size_t, ctypes.c_int,
                    ctypes.POINTER(_vp))
_area_destroy = _sig("collx_ckpt_area_destroy", ctypes.c_int, _vp, ctypes.c_uint)
_last_error = _sig("collx_ckpt_last_error", ctypes.c_char_p, _vp)
_save_async = _sig("collx_ckpt_save_async", ctypes.c_int, _vp, _vp, ctypes.POINTER(_Region),
                   ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(_vp))
_wait = _sig("collx_ckpt_wait", ctypes.c_int, _vp, ctypes.POINTER(_Stats))
_load = _sig("collx_ckpt_load_stats", ctypes.c_int, _vp, _vp, ctypes.POINTER(_Region),
             ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_Stats))
_latest = _sig("collx_ckpt_latest", ctypes.c_int, _vp, _vp, ctypes.POINTER(ctypes.c_uint64),
               ctypes.POINTER(ctypes.c_uint64))

MAX_REGIONS = 64
SOURCES = {0: "none", 1: "local", 2: "peer", 3: "archive"}


class CheckpointError(RuntimeError):
    """A failed checkpoint call: errno and the library's reason."""

    def __init__(self, what, rc, why):
        self.errno = -rc
        # os.strerror: collx_strerror's ENOENT speaks of /dev/collx
        super().__init__("%s: %s: %s" % (what, os.strerror(-rc), why))


def _tensors(sd, prefix=""):
    """(name, tensor) of every tensor in @sd, in a fixed order."""
    if isinstance(sd, torch.Tensor):
        return [(prefix, sd)]
    if isinstance(sd, dict):
        out = []
        for k in sorted(sd, key=str):
            out += _tensors(sd[k], "%s/%s" % (prefix, k))
        return out
    if isinstance(sd, (list, tuple)):
        out = []
        for i, v in enumerate(sd):
            out += _tensors(v, "%s/%d" % (prefix, i))
        return out
    return []


def _check(ts):
    for name, t in ts:
        if t.device.type != "cpu":
            raise ValueError("%s: a %s tensor; collx.checkpoint takes CPU tensors (copy it "
                             "to the host first)" % (name, t.device.type))
        if not t.is_contiguous():
            raise ValueError("%s: not contiguous; call .contiguous() in the state_dict"
                             % name)
        if t.is_sparse:
            raise ValueError("%s: a sparse tensor is not supported" % name)


def state_bytes(sd):
    """Bytes of every tensor of @sd: the shard size its area needs."""
    return sum(t.numel() * t.element_size() for _, t in _tensors(sd))


class _Packed:
    """The regions of @ts, packed into one buffer when there are too many."""

    def __init__(self, ts):
        self.ts = [t for _, t in ts if t.numel()]
        self.stage = None
        if len(self.ts) > MAX_REGIONS:
            n = sum(t.numel() * t.element_size() for t in self.ts)
            self.stage = torch.empty(n, dtype=torch.uint8)
            bufs = [self.stage]
        else:
            bufs = self.ts
        if not bufs:
            raise ValueError("the state_dict holds no tensor bytes")
        self.regions = (_Region * len(bufs))()
        for i, t in enumerate(bufs):
            self.regions[i].buf = t.data_ptr()
            self.regions[i].bytes = t.numel() * t.element_size()

    def _views(self):
        off = 0
        for t in self.ts:
            n = t.numel() * t.element_size()
            yield t, self.stage[off:off + n]
            off += n

    def pack(self):
        if self.stage is not None:
            for t, v in self._views():
                v.copy_(t.reshape(-1).view(torch.uint8))

    def unpack(self):
        if self.stage is not None:
            for t, v in self._views():
                t.reshape(-1).view(torch.uint8).copy_(v)


class SaveHandle:
    """An async save: wait() returns its statistics once it is committed
    on every rank, or raises CheckpointError."""

    def __init__(self, ck, op, step, keep):
        self._ck, self._op, self.step, self._keep = ck, op, step, keep
        self.stats = None

    def wait(self):
        if self._op is None:
            return self.stats
        st = _Stats()
        rc = _wait(self._op, ctypes.byref(st))
        self._op = None
        self._keep = None
        self._ck._inflight = None
        if rc:
            raise CheckpointError("save of step %d" % self.step, rc,
                                  _last_error(self._ck._area).decode())
        self.stats = {"pause_seconds": st.pause_seconds,
                      "replicate_seconds": st.replicate_seconds,
                      "queued_seconds": st.queued_seconds, "seconds": st.seconds,
                      "bytes": st.bytes_local, "epoch": st.epoch}
        return self.stats


class Checkpointer:
    """A rank's checkpoint area (shards of at most @shard_bytes, @k replicas;
    k < 0: $COLLX_CKPT_K, else 1) and the communicator its loads use."""

    def __init__(self, shard_bytes, k=-1):
        self._comm = _vp()
        self._area = _vp()
        self._inflight = None
        rc = _init_all(ctypes.byref(self._comm))
        if rc:
            raise CheckpointError("collx_comm_init_all", rc, _comm_err(None).decode())
        rc = _area_create(self._comm, shard_bytes, k, ctypes.byref(self._area))
        if rc:
            why = _last_error(None).decode()
            _comm_destroy(self._comm)
            raise CheckpointError("collx_ckpt_area_create", rc, why)

    def save(self, state_dict, step):
        """Snapshot every tensor of @state_dict as checkpoint @step (> 0) and
        return a SaveHandle; the tensors may change as soon as this returns.
        A save while the previous one replicates waits for it first."""
        if self._inflight is not None:
            self._inflight.wait()
        ts = _tensors(state_dict)
        _check(ts)
        p = _Packed(ts)
        p.pack()
        op = _vp()
        rc = _save_async(self._comm, self._area, p.regions, len(p.regions), step,
                         ctypes.byref(op))
        if rc:
            raise CheckpointError("save of step %d" % step, rc,
                                  _last_error(self._area).decode())
        # p (and its staging buffer) needed no longer: the snapshot holds it
        self._inflight = SaveHandle(self, op, step, None)
        return self._inflight

    def load(self, state_dict, step):
        """Restore checkpoint @step into the tensors of @state_dict, in place;
        returns where it came from ("local", "peer", "archive")."""
        if self._inflight is not None:
            self._inflight.wait()
        ts = _tensors(state_dict)
        _check(ts)
        p = _Packed(ts)
        src = ctypes.c_int(0)
        st = _Stats()
        rc = _load(self._comm, self._area, p.regions, len(p.regions), step,
                   ctypes.byref(src), ctypes.byref(st))
        if rc:
            raise CheckpointError("load of step %d" % step, rc,
                                  _last_error(self._area).decode())
        p.unpack()
        return SOURCES.get(src.value, "unknown")

    def latest(self):
        """(step, epoch) of the newest checkpoint every rank can restore from
        memory, or None."""
        if self._inflight is not None:
            self._inflight.wait()
        tag, epoch = ctypes.c_uint64(0), ctypes.c_uint64(0)
        rc = _latest(self._comm, self._area, ctypes.byref(tag), ctypes.byref(epoch))
        if rc == -2:    # ENOENT
            return None
        if rc:
            raise CheckpointError("latest", rc, _last_error(self._area).decode())
        return tag.value, epoch.value

    def close(self):
        if self._inflight is not None:
            self._inflight.wait()
        if self._area:
            _area_destroy(self._area, 0)
            self._area = _vp()
        if self._comm:
            _comm_destroy(self._comm)
            self._comm = _vp()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
