# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""collx.checkpoint: two-phase checkpoints of a PyTorch state_dict (issue 38 item 5).

    import collx.checkpoint as ckpt
    sd = {"model": model.state_dict(), "optim": opt.state_dict()}
    step = ckpt.latest()            # newest committed step, or None
    if step is not None:
        ckpt.load(sd)               # in place: the model's tensors, the optimizer's state
        opt.load_state_dict(sd["optim"])
    ...
    h = ckpt.save(sd, step)         # returns after the snapshot: train on at once
    h.done(); h.wait()              # committed on every rank (or CheckpointError)

Every rank calls save, load and latest at the same point of its program
(they are collective, as libcollx_ckpt's calls are: Documentation/
checkpoint.md).  The state_dict is any nesting of dicts, lists and tuples
holding CPU tensors (every dtype: bool, uint8, int8, int16, int32, int64,
float16, bfloat16, float32, float64, complex64, complex128; any shape,
strides or 0-d) and plain picklable values (an optimizer's param_groups).

How it is stored: one shard per rank, one region of the area's shard size:
a header (magic, length, a pickled description of the state_dict: its
keys, each tensor's dtype, shape and offset, and every value that is not
a tensor), then every tensor's bytes, 64-byte aligned.  save packs the
tensors into a staging buffer and hands it to collx_ckpt_save_async(),
which copies it into the rank's area (the snapshot) and returns; the
replication runs behind it.  The pause is those two copies.  load fetches
the shard (from the rank's own area, a replica holder's, or the archive),
checks every tensor's dtype and shape against the state_dict it is given
(CheckpointError naming the key) and copies into its tensors in place;
keys the state_dict lacks (an optimizer that has not stepped has no
state) are added with new tensors, values that are not tensors are
replaced by the saved ones: load the optimizer's part with
opt.load_state_dict() afterwards.

The area's shard size is fixed when it is created: max_bytes if given
(Checkpointer(max_bytes=...) or configure()), else from the first save
(its bytes plus 1/16 and 64 KiB of room, the maximum over the ranks), and
written beside the area (<area>.torch, JSON) so that a restarted process
reopens the same area before it has a state_dict to size it from.  A later
save that does not fit raises CheckpointError: pass max_bytes.

The Checkpointer makes a collx communicator of its own with
collx_comm_init_all() (COLLX_RANK/COLLX_NRANKS/COLLX_MASTER_ADDR, else
torchrun's RANK/WORLD_SIZE/MASTER_ADDR with MASTER_PORT + 1, ...; see
libcollx) at its first call, and the area makes the checkpoint's
(a second init_all); it needs no torch.distributed process group and works
beside one (collx's c10d backend makes its comms with collx_comm_init_rank
and does not take part in init_all's pairing).

Libraries, by ctypes: libcollx_ckpt.so.1 and libcollx.so.1 from the build
tree next to this package (user/ckpt and user/lib, when the package is
used from user/torch/python), else from the system's library path (an
installed libcollx1); $COLLX_CKPT_LIB and $COLLX_LIB name them explicitly.
"""
import atexit
import ctypes
import errno as _errno
import io
import json
import os
import pickle
import struct
import time

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
_USER = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))   # user/ in the tree

MAGIC = b"COLLXTS1"
_ALIGN = 64
_HDR = struct.Struct("<8sQ")


def _load_libs():
    err = []

    def first(env, names):
        cands = [os.environ[env]] if os.environ.get(env) else names
        for c in cands:
            try:
                # global: libcollx_ckpt's NEEDED libcollx.so.1 is this one
                return ctypes.CDLL(c, mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                err.append(str(e))
        return None

    core = first("COLLX_LIB", [os.path.join(_USER, "lib", "libcollx.so.1"), "libcollx.so.1"])
    ck = first("COLLX_CKPT_LIB", [os.path.join(_USER, "ckpt", "libcollx_ckpt.so.1"),
                                  "libcollx_ckpt.so.1"])
    if core is None or ck is None:
        raise ImportError("collx.checkpoint: cannot load libcollx/libcollx_ckpt (%s); build "
                          "them (make -C user && make -C user/ckpt) or install libcollx1"
                          % "; ".join(err))
    return core, ck


_core, _lib = _load_libs()
_vp = ctypes.c_void_p
_u64 = ctypes.c_uint64


class _Region(ctypes.Structure):
    _fields_ = [("buf", _vp), ("bytes", ctypes.c_size_t)]


class _Stats(ctypes.Structure):
    # struct collx_ckpt_stats, minor 1
    _fields_ = [("tag", _u64), ("seconds", ctypes.c_double),
                ("bytes_local", _u64), ("bytes_sent", _u64),
                ("bytes_received", _u64), ("mem", ctypes.c_uint32),
                ("pause_seconds", ctypes.c_double), ("replicate_seconds", ctypes.c_double),
                ("queued_seconds", ctypes.c_double), ("epoch", _u64)]


def _sig(lib, name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_c_int, _c_size = ctypes.c_int, ctypes.c_size_t
_init_all = _sig(_core, "collx_comm_init_all", _c_int, ctypes.POINTER(_vp))
_comm_destroy = _sig(_core, "collx_comm_destroy", _c_int, _vp)
_comm_rank = _sig(_core, "collx_comm_rank", _c_int, _vp)
_comm_size = _sig(_core, "collx_comm_size", _c_int, _vp)
_comm_err = _sig(_core, "collx_comm_last_error", ctypes.c_char_p, _vp)
_strerror = _sig(_core, "collx_strerror", ctypes.c_char_p, _c_int)
_allreduce = _sig(_core, "collx_allreduce", _c_int, _vp, _vp, _vp, _c_size, _c_int, _c_int)
_area_create = _sig(_lib, "collx_ckpt_area_create", _c_int, _vp, _c_size, _c_int,
                    ctypes.POINTER(_vp))
_area_destroy = _sig(_lib, "collx_ckpt_area_destroy", _c_int, _vp, ctypes.c_uint)
_area_path = _sig(_lib, "collx_ckpt_area_path", ctypes.c_char_p, _vp)
_last_error = _sig(_lib, "collx_ckpt_last_error", ctypes.c_char_p, _vp)
_save_async = _sig(_lib, "collx_ckpt_save_async", _c_int, _vp, _vp, ctypes.POINTER(_Region),
                   _c_int, _u64, ctypes.POINTER(_vp))
_wait = _sig(_lib, "collx_ckpt_wait", _c_int, _vp, ctypes.POINTER(_Stats))
_test = _sig(_lib, "collx_ckpt_test", _c_int, _vp, ctypes.POINTER(_c_int), ctypes.POINTER(_Stats))
_load = _sig(_lib, "collx_ckpt_load_stats", _c_int, _vp, _vp, ctypes.POINTER(_Region), _c_int,
             _u64, ctypes.POINTER(_c_int), ctypes.POINTER(_Stats))
_latest = _sig(_lib, "collx_ckpt_latest", _c_int, _vp, _vp, ctypes.POINTER(_u64),
               ctypes.POINTER(_u64))

_COLLX_UINT64, _COLLX_OP_MAX = 5, 2          # include/uapi/linux/collx.h
SOURCES = {0: "none", 1: "local", 2: "peer", 3: "archive"}

# Every dtype collx's backend knows (user/torch/csrc/types.cpp), and bool.
DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64,
          torch.complex64, torch.complex128)
_DTYPE_BY_NAME = {str(d): d for d in DTYPES}


class CheckpointError(RuntimeError):
    """A failed checkpoint call: .errno (positive) and the reason."""

    def __init__(self, what, rc=0, why=""):
        self.errno = -rc if rc < 0 else rc
        msg = what
        if rc:
            msg += ": " + _strerror(-abs(rc)).decode()
        if why:
            msg += ": " + why
        super().__init__(msg)


def _round(n, a):
    return (n + a - 1) // a * a


class _TRef:
    """A tensor's place in the description: dtype, shape, byte offset."""
    __slots__ = ("dtype", "shape", "off", "nbytes")

    def __init__(self, dtype, shape, off, nbytes):
        self.dtype, self.shape, self.off, self.nbytes = dtype, shape, off, nbytes

    def __getstate__(self):
        return (self.dtype, self.shape, self.off, self.nbytes)

    def __setstate__(self, s):
        self.dtype, self.shape, self.off, self.nbytes = s

    def what(self):
        return "%s%s" % (self.dtype.replace("torch.", ""), list(self.shape))


def _tname(t):
    return "%s%s" % (str(t.dtype).replace("torch.", ""), list(t.shape))


def _describe(obj, name, tensors):
    """@obj with every tensor replaced by a _TRef (offsets relative to the
    data start); appends (name, tensor, ref) to @tensors."""
    if isinstance(obj, torch.Tensor):
        if obj.device.type != "cpu":
            raise CheckpointError("%s: a %s tensor: collx.checkpoint saves CPU tensors (copy "
                                  "it to the host first)" % (name, obj.device.type))
        if obj.layout != torch.strided:
            raise CheckpointError("%s: a %s tensor is not supported" % (name, obj.layout))
        if obj.dtype not in DTYPES:
            raise CheckpointError("%s: dtype %s is not supported" % (name, obj.dtype))
        off = _round(tensors[-1][2].off + tensors[-1][2].nbytes, _ALIGN) if tensors else 0
        ref = _TRef(str(obj.dtype), tuple(obj.shape), off, obj.numel() * obj.element_size())
        tensors.append((name, obj, ref))
        return ref
    if isinstance(obj, dict):
        # a plain dict (OrderedDict's _metadata, as model.state_dict() has it,
        # is kept as an attribute-free copy: load fills the caller's dict)
        return {k: _describe(v, "%s.%s" % (name, k) if name else str(k), tensors)
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_describe(v, "%s.%d" % (name, i), tensors) for i, v in enumerate(obj)]
    if isinstance(obj, tuple) and type(obj) is tuple:
        return tuple(_describe(v, "%s.%d" % (name, i), tensors) for i, v in enumerate(obj))
    return obj


def _typed(buf, off, dtype, shape):
    """A tensor of @dtype/@shape over the bytes of @buf at @off (a view)."""
    d = _DTYPE_BY_NAME[dtype]
    n = 1
    for s in shape:
        n *= s
    esz = torch.empty(0, dtype=d).element_size()
    return buf[off:off + n * esz].view(d).reshape(shape)


def state_bytes(state_dict):
    """The shard bytes @state_dict needs (description and tensors)."""
    tensors = []
    desc = _describe(state_dict, "", tensors)
    head = _round(_HDR.size + len(pickle.dumps(desc, protocol=4)), _ALIGN)
    return head + (_round(tensors[-1][2].off + tensors[-1][2].nbytes, _ALIGN) if tensors else 0)


def _restore(desc, target, name, buf, base, dry=False):
    """The value for @name: @desc applied to @target (tensors copied in
    place, dicts and lists filled in place, new values where missing);
    @dry: only check, change nothing."""
    if isinstance(desc, _TRef):
        src = _typed(buf, base + desc.off, desc.dtype, desc.shape)
        if target is None:
            return None if dry else src.clone()
        if not isinstance(target, torch.Tensor):
            raise CheckpointError("%s: the checkpoint holds a tensor %s, the state_dict a %s"
                                  % (name, desc.what(), type(target).__name__))
        if str(target.dtype) != desc.dtype or tuple(target.shape) != tuple(desc.shape):
            raise CheckpointError("%s: the checkpoint holds %s, the state_dict %s"
                                  % (name, desc.what(), _tname(target)))
        if target.device.type != "cpu":
            raise CheckpointError("%s: a %s tensor: collx.checkpoint loads into CPU tensors"
                                  % (name, target.device.type))
        if not dry:
            target.copy_(src)
        return target
    if isinstance(desc, dict):
        if target is None:
            if dry:
                return None
            target = {}
        if not isinstance(target, dict):
            raise CheckpointError("%s: the checkpoint holds a dict, the state_dict a %s"
                                  % (name, type(target).__name__))
        extra = [k for k in target if k not in desc]
        if extra:
            raise CheckpointError("%s: the state_dict has key(s) the checkpoint lacks: %s"
                                  % (name or "state_dict", ", ".join(map(str, extra[:8]))))
        for k, v in desc.items():
            sub = "%s.%s" % (name, k) if name else str(k)
            v = _restore(v, target.get(k), sub, buf, base, dry)
            if not dry:
                target[k] = v
        return target
    if isinstance(desc, (list, tuple)):
        kind = type(desc)
        if target is not None and not isinstance(target, (list, tuple)):
            raise CheckpointError("%s: the checkpoint holds a %s, the state_dict a %s"
                                  % (name, kind.__name__, type(target).__name__))
        if target is not None and len(target) != len(desc):
            raise CheckpointError("%s: the checkpoint holds %d items, the state_dict %d"
                                  % (name, len(desc), len(target)))
        items = [_restore(v, target[i] if target is not None else None, "%s.%d" % (name, i),
                          buf, base, dry) for i, v in enumerate(desc)]
        if dry:
            return target
        if isinstance(target, list):
            target[:] = items
            return target
        return kind(items)
    return desc


class SaveHandle:
    """A save in flight: done() polls, wait() blocks until the checkpoint is
    committed on every rank and returns its statistics (a dict), or raises
    CheckpointError (the previous checkpoint stays restorable)."""

    def __init__(self, ck, op, step, pack_seconds):
        self._ck, self._op, self.step = ck, op, step
        self.pack_seconds = pack_seconds
        self.stats = None
        self._rc = 0

    def _finish(self, rc, st):
        self._op = None
        self._ck._pending.discard(self)
        self._rc = rc
        if rc:
            self._why = _last_error(self._ck._area).decode()
        else:
            self.stats = {"step": self.step, "epoch": st.epoch, "bytes": st.bytes_local,
                          "pack_seconds": self.pack_seconds,
                          "pause_seconds": self.pack_seconds + st.pause_seconds,
                          "snapshot_seconds": st.pause_seconds,
                          "replicate_seconds": st.replicate_seconds,
                          "queued_seconds": st.queued_seconds, "seconds": st.seconds}

    def done(self):
        """True once the save ended (wait() then returns at once)."""
        if self._op is None:
            return True
        d, st = _c_int(0), _Stats()
        rc = _test(self._op, ctypes.byref(d), ctypes.byref(st))
        if d.value:
            self._finish(rc, st)
        return bool(d.value)

    def wait(self):
        if self._op is not None:
            st = _Stats()
            rc = _wait(self._op, ctypes.byref(st))
            self._finish(rc, st)
        if self._rc:
            raise CheckpointError("save of step %d" % self.step, self._rc, self._why)
        return self.stats


def _sidecar_guess(rank):
    d = os.environ.get("COLLX_CKPT_SHM_DIR") or "/dev/shm"
    job = (os.environ.get("COLLX_CKPT_NAME") or os.environ.get("TORCHELASTIC_RUN_ID") or
           os.environ.get("SLURM_JOB_ID") or "job")
    return os.path.join(d, "collx-ckpt-%s-r%d.torch" % (job, rank))


class Checkpointer:
    """One rank's checkpoint area and the communicator its calls use.

    max_bytes: the shard size (None: from the first save, or from a
    previous run's area); k: replicas per shard (< 0: $COLLX_CKPT_K, else
    1).  Nothing collective happens before the first save/load/latest.
    """

    def __init__(self, max_bytes=None, k=-1):
        self.max_bytes = max_bytes
        self.k = k
        self._comm = _vp()
        self._area = _vp()
        self._stage = None
        self._pending = set()
        self.bytes_per_shard = None
        self.rank = self.nranks = None
        self.last_source = None      # "local", "peer" or "archive" after load
        self.last_load_stats = None
        self.epoch = None             # of the last latest()/load

    # ---- setup -------------------------------------------------------
    def _need_comm(self):
        if self._comm:
            return
        rc = _init_all(ctypes.byref(self._comm))
        if rc:
            self._comm = _vp()
            raise CheckpointError("collx_comm_init_all", rc, _comm_err(None).decode())
        self.rank, self.nranks = _comm_rank(self._comm), _comm_size(self._comm)

    def _max(self, n):
        """The maximum of @n over the ranks (collective)."""
        a, b = _u64(n), _u64(0)
        rc = _allreduce(self._comm, ctypes.byref(a), ctypes.byref(b), 1, _COLLX_UINT64,
                        _COLLX_OP_MAX)
        if rc:
            raise CheckpointError("agreeing on the shard size", rc,
                                  _comm_err(self._comm).decode())
        return b.value

    def _remembered(self):
        try:
            with open(_sidecar_guess(self.rank)) as f:
                return int(json.load(f)["bytes_per_shard"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def _need_area(self, want):
        """Create (or reopen) the area, sized by max_bytes, else @want,
        else a previous run's; False when no rank knows a size."""
        if self._area:
            return True
        self._need_comm()
        n = self.max_bytes or want or self._remembered()
        n = self._max(n)
        if not n:
            return False
        rc = _area_create(self._comm, n, self.k, ctypes.byref(self._area))
        if rc:
            self._area = _vp()
            raise CheckpointError("collx_ckpt_area_create(%d bytes per shard)" % n, rc,
                                  _last_error(None).decode())
        self.bytes_per_shard = n
        self._stage = torch.zeros(n, dtype=torch.uint8)
        path = _area_path(self._area)
        side = path.decode() + ".torch" if path else _sidecar_guess(self.rank)
        tmp = side + ".tmp%d" % os.getpid()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump({"bytes_per_shard": n, "k": self.k}, f)
            os.replace(tmp, side)
        except OSError:
            pass                        # a restart then needs max_bytes
        return True

    def _drain(self):
        for h in list(self._pending):
            try:
                h.wait()
            except CheckpointError:
                pass                    # the handle keeps it for its owner

    def _region(self):
        r = (_Region * 1)()
        r[0].buf = self._stage.data_ptr()
        r[0].bytes = self.bytes_per_shard
        return r

    # ---- the calls ---------------------------------------------------
    def save(self, state_dict, step):
        """Snapshot @state_dict as checkpoint @step (an int > 0, increasing)
        on every rank; returns a SaveHandle as soon as the snapshot is taken:
        the tensors may change at once."""
        step = int(step)
        if step <= 0:
            raise CheckpointError("save: step must be > 0, not %d" % step)
        t0 = time.perf_counter()
        tensors = []
        desc = _describe(state_dict, "", tensors)
        head = pickle.dumps(desc, protocol=4)
        base = _round(_HDR.size + len(head), _ALIGN)
        need = base + (_round(tensors[-1][2].off + tensors[-1][2].nbytes, _ALIGN)
                       if tensors else 0)
        self._need_area(need + need // 16 + 65536 if self.max_bytes is None else 0)
        if need > self.bytes_per_shard:
            raise CheckpointError("save of step %d: the state_dict needs %d bytes, the area "
                                  "holds %d per shard: pass max_bytes (Checkpointer or "
                                  "configure) of at least that" % (step, need,
                                                                   self.bytes_per_shard))
        st = self._stage
        with torch.no_grad():
            st[:_HDR.size].copy_(torch.frombuffer(bytearray(_HDR.pack(MAGIC, len(head))),
                                                  dtype=torch.uint8))
            if head:
                st[_HDR.size:_HDR.size + len(head)].copy_(
                    torch.frombuffer(bytearray(head), dtype=torch.uint8))
            for _, t, ref in tensors:
                if ref.nbytes:
                    _typed(st, base + ref.off, ref.dtype, ref.shape).copy_(t)
        pack = time.perf_counter() - t0
        op = _vp()
        rc = _save_async(self._comm, self._area, self._region(), 1, step, ctypes.byref(op))
        if rc:
            raise CheckpointError("save of step %d" % step, rc, _last_error(self._area).decode())
        h = SaveHandle(self, op, step, pack)
        self._pending.add(h)
        return h

    def latest(self):
        """The newest step every rank can restore (committed everywhere), or None."""
        self._drain()
        if not self._need_area(0):
            return None
        tag, epoch = _u64(0), _u64(0)
        rc = _latest(self._comm, self._area, ctypes.byref(tag), ctypes.byref(epoch))
        if rc == -_errno.ENOENT:
            return None
        if rc:
            raise CheckpointError("latest", rc, _last_error(self._area).decode())
        self.epoch = epoch.value
        return tag.value

    def load(self, state_dict, step=None):
        """Restore checkpoint @step (None: latest()) into @state_dict in place
        and return the step.  CheckpointError (errno ENOENT) when there is none."""
        self._drain()
        if step is None:
            step = self.latest()
            if step is None:
                raise CheckpointError("load", -_errno.ENOENT, "no committed checkpoint")
        elif not self._need_area(0):
            raise CheckpointError("load of step %d" % step, -_errno.ENOENT,
                                  "no area and no size known (pass max_bytes)")
        src, st = _c_int(0), _Stats()
        rc = _load(self._comm, self._area, self._region(), 1, int(step), ctypes.byref(src),
                   ctypes.byref(st))
        if rc:
            raise CheckpointError("load of step %d" % step, rc, _last_error(self._area).decode())
        self.last_source = SOURCES.get(src.value, "unknown")
        self.last_load_stats = {"seconds": st.seconds, "bytes": st.bytes_local,
                                "epoch": st.epoch, "source": self.last_source}
        buf = self._stage
        magic, n = _HDR.unpack(bytes(buf[:_HDR.size].numpy()))
        if magic != MAGIC or _HDR.size + n > self.bytes_per_shard:
            raise CheckpointError("load of step %d: the shard is not a collx.checkpoint "
                                  "state_dict (magic %r)" % (step, magic))
        desc = pickle.load(io.BytesIO(bytes(buf[_HDR.size:_HDR.size + n].numpy())))
        if not isinstance(state_dict, dict) or not isinstance(desc, dict):
            raise CheckpointError("load: the state_dict and the checkpoint must be dicts")
        base = _round(_HDR.size + n, _ALIGN)
        with torch.no_grad():
            _restore(desc, state_dict, "", buf, base, dry=True)   # all checks first
            _restore(desc, state_dict, "", buf, base)
        return int(step)

    def close(self):
        """Wait for the save in flight, close the area (its file and its
        checkpoints stay) and the communicator."""
        self._drain()
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


_default = None


def configure(max_bytes=None, k=-1):
    """Set the default Checkpointer's shard size and replicas (before its
    first call); returns it."""
    global _default
    if _default is not None and (_default._comm or _default._area):
        raise CheckpointError("configure: the default Checkpointer is in use already")
    _default = Checkpointer(max_bytes, k)
    return _default


def default_checkpointer():
    global _default
    if _default is None:
        _default = Checkpointer()
    return _default


def save(state_dict, step):
    """Checkpointer.save() of the default Checkpointer."""
    return default_checkpointer().save(state_dict, step)


def load(state_dict, step=None):
    """Checkpointer.load() of the default Checkpointer."""
    return default_checkpointer().load(state_dict, step)


def latest():
    """Checkpointer.latest() of the default Checkpointer."""
    return default_checkpointer().latest()


def close():
    global _default
    if _default is not None:
        _default.close()
        _default = None


atexit.register(close)
