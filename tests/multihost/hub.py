#!/usr/bin/env python3
"""The test cluster's Ethernet segment: a learning switch for QEMU dgram netdevs.

    hub.py PORT_FILE VM_PORT...

Binds a UDP socket on 127.0.0.1 (port chosen by the kernel, written to
PORT_FILE), and forwards every Ethernet frame it receives from one VM's
QEMU (`-netdev dgram` whose remote is this hub) to the VM that owns the
destination MAC, or to every other VM for broadcast, multicast and
not-yet-learned MACs. Only datagrams from the VM ports named on the command
line are accepted: nothing else on the host can put a frame on the segment,
and the segment has no interface on the host (no bridge, no tap, no route),
so no frame of the test network reaches the host's network or leaves it.

Runs until its parent (the cluster driver) goes away or it is killed.
"""
import os
import select
import socket
import sys


def main():
    port_file = sys.argv[1]
    vm_ports = [int(p) for p in sys.argv[2:]]
    members = {("127.0.0.1", p) for p in vm_ports}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % sock.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)

    parent = os.getppid()
    where = {}  # MAC -> VM address it was last seen from
    while True:
        ready, _, _ = select.select([sock], [], [], 1.0)
        if not ready:
            if os.getppid() != parent:
                return
            continue
        frame, src = sock.recvfrom(65536)
        if src not in members or len(frame) < 14:
            continue
        dst_mac, src_mac = frame[0:6], frame[6:12]
        where[src_mac] = src
        multicast = dst_mac[0] & 1
        if not multicast and dst_mac in where:
            targets = [where[dst_mac]]
        else:
            targets = [m for m in members if m != src]
        for t in targets:
            try:
                sock.sendto(frame, t)
            except OSError:
                pass  # a VM that is gone (powered off in a fault case)


if __name__ == "__main__":
    main()
