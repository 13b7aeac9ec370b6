#!/usr/bin/env python3
"""A TCP transfer over loopback between two processes: the parent listens
and receives, a forked child connects and sends MIB mebibytes. Prints
sender_pid, receiver_pid and the byte counts each side saw."""
import os
import socket
import sys

mib = int(sys.argv[1])
total = mib << 20
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
port = srv.getsockname()[1]
child = os.fork()
if child == 0:
    srv.close()
    c = socket.create_connection(("127.0.0.1", port))
    chunk = b"x" * 65536
    sent = 0
    while sent < total:
        sent += c.send(chunk[: min(len(chunk), total - sent)])
    c.shutdown(socket.SHUT_WR)
    c.close()
    os._exit(0)
conn, _ = srv.accept()
got = 0
while True:
    b = conn.recv(1 << 20)
    if not b:
        break
    got += len(b)
os.waitpid(child, 0)
print(f"sender_pid {child}")
print(f"receiver_pid {os.getpid()}")
print(f"received {got}")
sys.exit(0 if got == total else 3)
