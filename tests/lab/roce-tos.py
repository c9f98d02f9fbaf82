#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the RoCE v2 packets on an interface by IP type of service.

    roce-tos.py IFACE OUT.json STOPFILE [SECONDS]

Captures (AF_PACKET, both directions) the IPv4 UDP packets to port 4791
until STOPFILE exists, SECONDS pass (60) or 200000 packets were seen,
then writes {"in": {tos: n}, "out": {tos: n}} to OUT.json.  A slow
reader drops packets (the kernel's socket buffer overflows): the counts
are a sample, not a total.  The lab's
traffic-class case (tests/lab/cases/26-traffic-class.sh) runs it on each
node around two comms with two classes.  Only reads: it sends nothing.
"""
import json
import os
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
ROCE_V2_PORT = 4791
MAX_PACKETS = 200000


def main():
    iface, out, stop = sys.argv[1:4]
    secs = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    # Under TCG the reader falls behind: a deep buffer loses fewer.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((iface, 0))
    s.settimeout(0.2)
    counts = {"in": {}, "out": {}}
    seen = 0
    end = time.monotonic() + secs
    # Ready: the case waits for this file before it starts the traffic.
    with open(out + ".ready", "w"):
        pass
    while time.monotonic() < end and seen < MAX_PACKETS and \
            not os.path.exists(stop):
        try:
            frame, addr = s.recvfrom(128)
        except socket.timeout:
            continue
        # Ethernet II, IPv4, UDP to the RoCE v2 port.
        if len(frame) < 14 + 20 + 8 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 0x0f) * 4
        if ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP or \
                len(ip) < ihl + 8:
            continue
        if int.from_bytes(ip[ihl + 2:ihl + 4], "big") != ROCE_V2_PORT:
            continue
        way = "out" if addr[2] == PACKET_OUTGOING else "in"
        tos = str(ip[1])
        counts[way][tos] = counts[way].get(tos, 0) + 1
        seen += 1
    with open(out + ".tmp", "w") as f:
        json.dump(counts, f)
    os.rename(out + ".tmp", out)


if __name__ == "__main__":
    main()
