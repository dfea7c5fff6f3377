#!/usr/bin/env python3
"""The test cluster's Ethernet segment: a learning switch for QEMU stream netdevs.

    hub.py SOCKET_PATH HOSTS

Listens on a Unix stream socket at SOCKET_PATH (in the run's private
directory, mode 0700: no other user can reach it), takes the HOSTS hosts'
QEMU connections (`-netdev stream`: every Ethernet frame preceded by its
length, 4 bytes big-endian), then stops listening, so nothing else can join
the segment. It forwards every frame to the host that owns the destination
MAC, or to every other host for broadcast, multicast and not-yet-learned
MACs. The segment has no interface on the host (no bridge, no tap, no
route): no frame of the test network reaches the host's network or leaves it.

Why a stream and not datagrams: a QEMU datagram netdev reads through a
socket with the host's default receive buffer (208 KiB here). An RDMA
read's response is a burst the responder does not pace (1 MiB: about 1,000
frames at rdma_rxe's 1024 B MTU); whenever the emulated reader was a moment
behind, the burst overflowed that buffer and the read waited out its ACK
timeout: reads of 1 MiB moved 0.4 MB/s between the hosts, writes 10 MB/s. A
stream carries back-pressure to the hub, which buffers up to BUF_LIMIT bytes
for a host, as a switch's buffer would, and drops past it, as a switch does.

Runs until its parent (the cluster driver) goes away or it is killed. A host
whose QEMU goes away (powered off in a fault case) is dropped from the segment.
"""
import os
import selectors
import socket
import struct
import sys

BUF_LIMIT = 32 << 20  # bytes queued for one host before frames to it are dropped


class Port:
    """One host's connection: the bytes read but not yet framed, and those to send."""

    def __init__(self, conn):
        self.conn = conn
        self.inbuf = bytearray()
        self.outbuf = bytearray()


def main():
    path, hosts = sys.argv[1], int(sys.argv[2])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(hosts)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    ports = {}  # socket -> Port
    where = {}  # MAC -> Port it was last seen from
    joined = 0
    parent = os.getppid()

    def interest(port):
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if port.outbuf else 0)
        sel.modify(port.conn, events)

    def drop(port):
        sel.unregister(port.conn)
        port.conn.close()
        del ports[port.conn]
        for mac in [m for m, p in where.items() if p is port]:
            del where[mac]

    def flush(port):
        try:
            sent = port.conn.send(port.outbuf)
        except BlockingIOError:
            sent = 0  # the host reads slowly: wait until it can take more
        except OSError:
            drop(port)
            return
        del port.outbuf[:sent]
        interest(port)

    def forward(src, frame):
        if len(frame) < 14:
            return
        dst_mac, src_mac = bytes(frame[0:6]), bytes(frame[6:12])
        where[src_mac] = src
        if not dst_mac[0] & 1 and dst_mac in where:
            targets = [where[dst_mac]]
        else:
            targets = [p for p in ports.values() if p is not src]
        for t in targets:
            if len(t.outbuf) + 4 + len(frame) > BUF_LIMIT:
                continue  # the switch's buffer for that host is full
            t.outbuf += struct.pack(">I", len(frame)) + frame
            flush(t)

    def receive(port):
        try:
            data = port.conn.recv(1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            drop(port)
            return
        port.inbuf += data
        while len(port.inbuf) >= 4:
            (n,) = struct.unpack(">I", port.inbuf[:4])
            if len(port.inbuf) < 4 + n:
                break
            frame = bytes(port.inbuf[4 : 4 + n])
            del port.inbuf[: 4 + n]
            forward(port, frame)

    while True:
        events = sel.select(1.0)
        if not events and os.getppid() != parent:
            return
        for key, mask in events:
            if key.fileobj is listener:
                conn, _ = listener.accept()
                conn.setblocking(False)
                ports[conn] = Port(conn)
                sel.register(conn, selectors.EVENT_READ)
                joined += 1
                if joined == hosts:  # every host is on the segment: no one else joins
                    sel.unregister(listener)
                    listener.close()
                continue
            port = ports.get(key.fileobj)
            if port is not None and mask & selectors.EVENT_WRITE:
                flush(port)
            port = ports.get(key.fileobj)
            if port is not None and mask & selectors.EVENT_READ:
                receive(port)


if __name__ == "__main__":
    main()
