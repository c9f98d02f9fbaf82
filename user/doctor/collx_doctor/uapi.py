# SPDX-License-Identifier: GPL-2.0
"""/dev/collx and libcollx, as a program using them sees them.

COLLX_IOC_VERSION is asked directly (its struct's first fields never
change: the uapi's size-first rule), and libcollx is loaded with ctypes and
asked to open the device itself, which is the real ABI check: the library
refuses a module of another ABI major (-EPROTO)."""
import ctypes
import errno
import fcntl
import os
import struct

COLLX_IOC_VERSION = (ord("X") << 8) | 0x80      # _IO('X', 0x80)
# struct collx_version: size, flags, abi_major, abi_minor, nr_devices,
# __reserved, features, module_version[32]
VERSION = struct.Struct("=IIIIIIQ32s")
# enum collx_dtype / collx_redop values (NCCL's)
INT32, UINT64 = 2, 5
SUM, MAX, MIN = 0, 2, 3


class Version(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("abi_major", ctypes.c_uint32), ("abi_minor", ctypes.c_uint32),
                ("nr_devices", ctypes.c_uint32), ("reserved", ctypes.c_uint32),
                ("features", ctypes.c_uint64), ("module_version", ctypes.c_char * 32)]


def ioctl_version(path="/dev/collx"):
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return {"error": "open %s: %s" % (path, e.strerror), "errno": e.errno}
    try:
        buf = bytearray(VERSION.pack(VERSION.size, 0, 0, 0, 0, 0, 0, b""))
        fcntl.ioctl(fd, COLLX_IOC_VERSION, buf, True)
        f = VERSION.unpack(bytes(buf))
        return {"abi": [f[2], f[3]], "nr_devices": f[4], "features": f[6],
                "module_version": f[7].split(b"\0")[0].decode()}
    except OSError as e:
        return {"error": "COLLX_IOC_VERSION: %s" % e.strerror, "errno": e.errno}
    finally:
        os.close(fd)


def lib_candidates(here):
    """$COLLX_LIB, the dynamic linker's libcollx.so.1, then the build tree's."""
    out = []
    if os.environ.get("COLLX_LIB"):
        out.append(os.environ["COLLX_LIB"])
    out.append("libcollx.so.1")
    out.append(os.path.normpath(os.path.join(here, "..", "lib", "libcollx.so.1")))
    return out


def load_lib(here):
    err = None
    for c in lib_candidates(here):
        try:
            lib = ctypes.CDLL(c)
        except OSError as e:
            err = str(e)
            continue
        _prototypes(lib)
        name = c if "/" in c else _loaded_path(c) or c
        return lib, name, None
    return None, None, err


def _prototypes(lib):
    P, H = ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p
    for name, res, args in (
            ("collx_strerror", ctypes.c_char_p, [ctypes.c_int]),
            ("collx_dev_open", ctypes.c_int, [P]),
            ("collx_dev_version", ctypes.POINTER(Version), [H]),
            ("collx_dev_close", None, [H]),
            ("collx_comm_init_all", ctypes.c_int, [P]),
            ("collx_comm_rank", ctypes.c_int, [H]),
            ("collx_comm_size", ctypes.c_int, [H]),
            ("collx_comm_last_error", ctypes.c_char_p, [H]),
            ("collx_comm_destroy", ctypes.c_int, [H]),
            ("collx_allreduce", ctypes.c_int, [H, H, H, ctypes.c_size_t, ctypes.c_int, ctypes.c_int])):
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def _loaded_path(soname):
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("/" + soname) or ("/" + soname) in line:
            return line.split()[-1]
    return None


def strerror(lib, rc):
    return lib.collx_strerror(rc).decode(errors="replace")


def lib_facts(lib, path):
    """Open the device through the library: rc 0 and the ABI it accepted."""
    dev = ctypes.c_void_p()
    rc = lib.collx_dev_open(ctypes.byref(dev))
    f = {"path": path, "rc": rc}
    if rc:
        f["error"] = "collx_dev_open: %s (%s)" % (strerror(lib, rc), errno.errorcode.get(-rc, rc))
        return f
    v = lib.collx_dev_version(dev).contents
    f["abi"] = [v.abi_major, v.abi_minor]
    lib.collx_dev_close(dev)
    return f


def _allreduce(lib, comm, buf, n, dtype, op):
    return lib.collx_allreduce(comm, ctypes.cast(buf, ctypes.c_void_p), ctypes.cast(buf, ctypes.c_void_p),
                               n, dtype, op)


def collective(lib, params_hash, size=256 << 10, iters=4):
    """A comm from the environment (COLLX_RANK/COLLX_NRANKS/COLLX_MASTER_ADDR,
    torchrun's, ...), then allreduces: a checkable sum, the MIN and MAX of
    every rank's module-parameter hash (equal on all ranks iff MIN == MAX),
    and a timed one of @size bytes."""
    import time
    comm = ctypes.c_void_p()
    rc = lib.collx_comm_init_all(ctypes.byref(comm))
    if rc:
        return {"error": "init: %s: %s" % (strerror(lib, rc),
                                           lib.collx_comm_last_error(None).decode(errors="replace"))}
    out = {"rank": lib.collx_comm_rank(comm), "nranks": lib.collx_comm_size(comm)}
    try:
        n = 1024
        a = (ctypes.c_int32 * n)(*([out["rank"] + 1] * n))
        rc = _allreduce(lib, comm, a, n, INT32, SUM)
        if rc:
            raise RuntimeError("sum", rc)
        want = out["nranks"] * (out["nranks"] + 1) // 2
        out["sum_wrong"] = sum(1 for x in a if x != want)
        lo = (ctypes.c_uint64 * 1)(params_hash)
        hi = (ctypes.c_uint64 * 1)(params_hash)
        for buf, op, what in ((lo, MIN, "min"), (hi, MAX, "max")):
            rc = _allreduce(lib, comm, buf, 1, UINT64, op)
            if rc:
                raise RuntimeError(what, rc)
        out["params_equal"] = lo[0] == hi[0]
        big = (ctypes.c_int32 * (size // 4))()
        t0 = time.monotonic()
        for _ in range(iters):
            rc = _allreduce(lib, comm, big, size // 4, INT32, SUM)
            if rc:
                raise RuntimeError("timed", rc)
        t = (time.monotonic() - t0) / iters
        nr = out["nranks"]
        out["bytes"] = size
        out["time_us"] = t * 1e6
        out["busbw_GBps"] = size / t / 1e9 * (2 * (nr - 1) / nr if nr > 1 else 1)
    except RuntimeError as e:
        what, rc = e.args
        out["error"] = "%s allreduce: %s: %s" % (what, strerror(lib, rc),
                                                lib.collx_comm_last_error(comm).decode(errors="replace"))
    finally:
        lib.collx_comm_destroy(comm)
    return out
