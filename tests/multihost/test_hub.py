#!/usr/bin/env python3
"""The multi-host bed's segment (hub.py) alone, with no VM: two fake hosts
connect as QEMU's stream netdev does (a frame: its length in 4 bytes
big-endian, then the bytes) and check what a switch must do:

  - a frame to a learned MAC reaches that host only, a broadcast every other;
  - a burst of 2,000 frames to a host that does not read meanwhile arrives
    whole and in order once it reads (the datagram hub lost such bursts:
    an RDMA read's response);
  - once the expected hosts are on, no one else can join;
  - a host that goes away is dropped, and the others go on.

    test_hub.py HUB_PY
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(10)
    return s


def frame(dst, src, payload):
    body = dst + src + b"\x08\x00" + payload
    return struct.pack(">I", len(body)) + body


def read_frame(s):
    head = b""
    while len(head) < 4:
        chunk = s.recv(4 - len(head))
        if not chunk:
            raise EOFError
        head += chunk
    (n,) = struct.unpack(">I", head)
    body = b""
    while len(body) < n:
        chunk = s.recv(n - len(body))
        if not chunk:
            raise EOFError
        body += chunk
    return body


def fail(why):
    print("FAIL hub: " + why)
    sys.exit(1)


def main():
    hub_py = sys.argv[1]
    a_mac, b_mac, c_mac = b"\x52\x54\x00\x00\x00\x01", b"\x52\x54\x00\x00\x00\x02", b"\x52\x54\x00\x00\x00\x03"
    bcast = b"\xff" * 6
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "hub.sock")
        hub = subprocess.Popen([sys.executable, hub_py, path, "3"])
        try:
            for _ in range(100):
                if os.path.exists(path):
                    break
                time.sleep(0.05)
            a, b, c = connect(path), connect(path), connect(path)
            # The segment is full: a fourth connection is refused (or never served).
            time.sleep(0.3)
            try:
                x = connect(path)
                x.settimeout(1)
                x.sendall(frame(bcast, b"\x52\x54\x00\x00\x00\x09", b"intruder"))
                for s in (a, b):
                    s.settimeout(0.5)
                    try:
                        got = read_frame(s)
                        fail("a fourth connection put a frame on the segment: %r" % got[:20])
                    except socket.timeout:
                        pass
                    s.settimeout(10)
            except (ConnectionRefusedError, FileNotFoundError):
                pass
            # Broadcast from each host: every other one gets it, and the hub learns the MACs.
            for s, mac in ((a, a_mac), (b, b_mac), (c, c_mac)):
                s.sendall(frame(bcast, mac, b"hello"))
            for s, others in ((a, 2), (b, 2), (c, 2)):
                for _ in range(others):
                    if read_frame(s)[12:] != b"\x08\x00hello":
                        fail("a broadcast arrived changed")
            # Unicast to a learned MAC: b only.
            a.sendall(frame(b_mac, a_mac, b"to-b"))
            if read_frame(b)[14:] != b"to-b":
                fail("a unicast frame did not reach its host")
            c.settimeout(0.5)
            try:
                read_frame(c)
                fail("a unicast frame reached a third host")
            except socket.timeout:
                pass
            c.settimeout(10)
            # A burst to a host that is not reading: all of it, in order, once it reads.
            burst = 2000
            payload = b"x" * 1050
            for i in range(burst):
                a.sendall(frame(b_mac, a_mac, struct.pack(">I", i) + payload))
            time.sleep(0.5)
            for i in range(burst):
                body = read_frame(b)
                (k,) = struct.unpack(">I", body[14:18])
                if k != i:
                    fail("frame %d of a burst arrived as %d: frames were lost or reordered" % (i, k))
            # A host that goes away is dropped; the others still talk.
            c.close()
            time.sleep(0.2)
            b.sendall(frame(a_mac, b_mac, b"still"))
            if read_frame(a)[14:] != b"still":
                fail("the segment stopped when a host went away")
            if hub.poll() is not None:
                fail("the hub exited")
        finally:
            hub.kill()
            hub.wait()
    print("ok hub: forwarding, learning, a 2,000-frame burst whole, no fourth host, a host gone")


if __name__ == "__main__":
    main()
