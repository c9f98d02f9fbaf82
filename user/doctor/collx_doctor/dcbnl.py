# SPDX-License-Identifier: GPL-2.0
"""DCB over rtnetlink (what iproute2's dcb asks): DCB_CMD_IEEE_GET gives the
PFC state (struct ieee_pfc) and the APP table (DSCP -> priority) at once."""
import os
import socket
import struct

RTM_GETDCB = 78
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
DCB_CMD_IEEE_GET = 21
DCB_ATTR_IFNAME = 1
DCB_ATTR_IEEE = 13
DCB_ATTR_IEEE_PFC = 2
DCB_ATTR_IEEE_APP_TABLE = 3
DCB_ATTR_IEEE_APP = 1
NLA_TYPE_MASK = 0x3FFF
APP_SEL_DSCP = 5
# struct ieee_pfc: pfc_cap, pfc_en, mbc, (pad), delay, (pad), requests[8], indications[8]
IEEE_PFC = struct.Struct("=BBBxHxx8Q8Q")
DCB_APP = struct.Struct("=BBH")


def _attrs(buf):
    off = 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from("=HH", buf, off)
        if alen < 4:
            break
        yield atype & NLA_TYPE_MASK, buf[off + 4:off + alen]
        off += (alen + 3) & ~3


def parse_ieee(payload):
    """The attributes of a DCB_CMD_IEEE_GET reply (after struct dcbmsg)."""
    out = {"pfc": None, "app": []}
    for t, v in _attrs(payload):
        if t != DCB_ATTR_IEEE:
            continue
        for it, iv in _attrs(v):
            if it == DCB_ATTR_IEEE_PFC and len(iv) >= IEEE_PFC.size:
                f = IEEE_PFC.unpack_from(iv)
                out["pfc"] = {"pfc_cap": f[0], "pfc_en": f[1], "mbc": f[2], "delay": f[3],
                              "requests": list(f[4:12]), "indications": list(f[12:20])}
            elif it == DCB_ATTR_IEEE_APP_TABLE:
                for at, av in _attrs(iv):
                    if at == DCB_ATTR_IEEE_APP and len(av) >= DCB_APP.size:
                        out["app"].append(list(DCB_APP.unpack_from(av)))
    return out


def ieee_get(dev):
    """{"pfc": {...} or None, "app": [[selector, priority, protocol], ...]};
    raises OSError with the kernel's errno (EOPNOTSUPP: no DCB)."""
    name = dev.encode() + b"\0"
    attr = struct.pack("=HH", 4 + len(name), DCB_ATTR_IFNAME) + name
    attr += b"\0" * (-len(attr) % 4)
    body = struct.pack("=BBH", socket.AF_UNSPEC, DCB_CMD_IEEE_GET, 0) + attr
    msg = struct.pack("=IHHII", 16 + len(body), RTM_GETDCB, NLM_F_REQUEST, 1, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as s:
        s.settimeout(5)
        s.send(msg)
        data = s.recv(65536)
    mlen, mtype = struct.unpack_from("=IH", data, 0)
    if mtype == NLMSG_ERROR:
        err = struct.unpack_from("=i", data, 16)[0]
        if err:
            raise OSError(-err, os.strerror(-err))
        return {"pfc": None, "app": []}
    return parse_ieee(data[16 + 4:mlen])
