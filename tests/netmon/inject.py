#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""collx lab: send crafted congestion frames out of one netdev (AF_PACKET).

Run on the lab's switch side (the namespace holding br0, on a node's tap) to
hit that node's NIC, or inside a node on eth0 to exercise egress.  Every
loop is bounded: --count at most 100000, and the whole run at most
--max-seconds.

  inject.py --iface tap0 pfc --prio 3 --quanta 0xffff --count 100
  inject.py --iface tap0 pfc --prio 5 --quanta 0 --count 10        (resumes)
  inject.py --iface tap0 pause --quanta 0x200 --count 5            (802.3x)
  inject.py --iface tap0 roce --dst-mac 52:54:00:c0:11:01 --src-ip 10.77.0.99 \\
            --dst-ip 10.77.0.10 --qpn 0x11 --ecn 3 --count 25
  inject.py --iface tap0 roce ... --opcode 0x81 --count 7           (CNPs)
  inject.py --iface tap0 roce ... --opcode 0x11 --aeth 0x60 --count 3 (NAKs)
"""
import argparse
import socket
import struct
import sys
import time

PFC_DST = bytes.fromhex("0180c2000001")
SRC_MAC = bytes.fromhex("02c011000099")


def mac(s):
    b = bytes.fromhex(s.replace(":", "").replace("-", ""))
    if len(b) != 6:
        raise argparse.ArgumentTypeError("bad MAC " + s)
    return b


def num(s):
    return int(s, 0)


def pad(frame):
    return frame + b"\0" * max(0, 60 - len(frame))


def pfc_frame(prio, quanta, dst):
    q = [0] * 8
    q[prio] = quanta
    return pad(dst + SRC_MAC + struct.pack("!HHH8H", 0x8808, 0x0101, 1 << prio, *q))


def pause_frame(quanta, dst):
    return pad(dst + SRC_MAC + struct.pack("!HHH", 0x8808, 0x0001, quanta))


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def roce_frame(a, seq):
    bth = struct.pack("!BBHII", a.opcode, 0, 0xFFFF, a.qpn & 0xFFFFFF, seq & 0xFFFFFF)
    if a.aeth is not None:
        bth += struct.pack("!I", (a.aeth << 24) | (seq & 0xFFFFFF))
    payload = bth + b"\0" * a.payload + b"\0" * 4  # ICRC left zero
    udp = struct.pack("!HHHH", a.sport, 4791, 8 + len(payload), 0)
    src = socket.inet_aton(a.src_ip)
    dst = socket.inet_aton(a.dst_ip)
    tot = 20 + len(udp) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, (a.dscp << 2) | a.ecn, tot, seq & 0xFFFF,
                     0x4000, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return a.dst_mac + SRC_MAC + struct.pack("!H", 0x0800) + ip + udp + payload


def main():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--count", type=num, default=1)
    common.add_argument("--interval-us", type=num, default=0, help="pause between frames")
    common.add_argument("--max-seconds", type=float, default=60.0)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--iface", required=True)
    sub = p.add_subparsers(dest="kind", required=True)
    f = sub.add_parser("pfc", parents=[common])
    f.add_argument("--prio", type=num, required=True)
    f.add_argument("--quanta", type=num, required=True)
    f.add_argument("--dst-mac", type=mac, default=PFC_DST)
    f = sub.add_parser("pause", parents=[common])
    f.add_argument("--quanta", type=num, required=True)
    f.add_argument("--dst-mac", type=mac, default=PFC_DST)
    f = sub.add_parser("roce", parents=[common])
    f.add_argument("--dst-mac", type=mac, required=True)
    f.add_argument("--src-ip", required=True)
    f.add_argument("--dst-ip", required=True)
    f.add_argument("--sport", type=num, default=49152)
    f.add_argument("--qpn", type=num, default=0x11)
    f.add_argument("--opcode", type=num, default=0x0A, help="BTH opcode (0x0A RC WRITE ONLY)")
    f.add_argument("--aeth", type=num, default=None, help="AETH syndrome byte (adds an AETH)")
    f.add_argument("--ecn", type=num, default=0)
    f.add_argument("--dscp", type=num, default=0)
    f.add_argument("--payload", type=num, default=32)
    a = p.parse_args()
    if not 0 < a.count <= 100000:
        p.error("--count must be 1..100000")
    if a.kind == "pfc" and not 0 <= a.prio <= 7:
        p.error("--prio must be 0..7")
    if a.kind != "roce" and not 0 <= a.quanta <= 0xFFFF:
        p.error("--quanta must be 0..0xffff")

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    deadline = time.monotonic() + a.max_seconds
    sent = 0
    for i in range(a.count):
        if time.monotonic() > deadline:
            break
        if a.kind == "pfc":
            fr = pfc_frame(a.prio, a.quanta, a.dst_mac)
        elif a.kind == "pause":
            fr = pause_frame(a.quanta, a.dst_mac)
        else:
            fr = roce_frame(a, i)
        s.send(fr)
        sent += 1
        if a.interval_us:
            time.sleep(a.interval_us / 1e6)
    print("sent %d %s frame(s) on %s" % (sent, a.kind, a.iface))
    return 0 if sent == a.count else 1


if __name__ == "__main__":
    sys.exit(main())
