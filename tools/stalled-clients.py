#!/usr/bin/env python3
"""Clients that never read, against a running `ostledb serve` (issue 61), and what the
server does with them.

Usage: python3 tools/stalled-clients.py URL BOARD [CLIENTS] [SECONDS] [READERS]

URL is the server (http://127.0.0.1:PORT, loopback only); BOARD a board whose line is
long (a draw: its line runs to max_plies). CLIENTS connections (default 1030) each set
a 4 KiB receive buffer, send 50 pipelined `GET /api/v1/line?max_plies=1000&board=BOARD`
at once and never read. For SECONDS (default 90) it then asks `/api/v1/health` once a
second on a connection of its own (5 s allowed), while READERS threads (default 0) ask
for the same line and the board's position over keep-alive and read the answers.
Prints, at 10, 20, 30, 60 and 90 s, how many of the clients have not seen the server
close their connection, how many connections the server has established on its port
(Linux: from /proc/net/tcp; the clients' and the health checks'), and how `/health`
fared; then the readers' answers by status. The process raises its
own open-file limit (each client is a socket); the server needs one as high
(`ulimit -n 4096` before starting it).
"""
import collections
import http.client
import resource
import select
import socket
import sys
import threading
import time
import urllib.parse


def health(host, port):
    """Seconds /api/v1/health took on a new connection, or None without a 200 in 5 s."""
    t = time.time()
    try:
        h = socket.create_connection((host, port), timeout=5)
        h.settimeout(5)
        h.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            d = h.recv(65536)
            if not d:
                break
            data += d
        h.close()
    except OSError:
        return None
    return time.time() - t if data.startswith(b"HTTP/1.1 200") else None


def established(port):
    """Connections in state ESTABLISHED whose local port is `port` (the server's ends),
    from /proc/net/tcp and tcp6; None where they cannot be read."""
    n = 0
    try:
        for name in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(name) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                        n += 1
    except OSError:
        return None
    return n


def reader(host, port, board, stop, counts, lock):
    c = None
    while not stop.is_set():
        try:
            if c is None:
                c = http.client.HTTPConnection(host, port, timeout=15)
            for path in (f"/api/v1/line?max_plies=1000&board={board}", f"/api/v1/position?board={board}"):
                c.request("GET", path)
                r = c.getresponse()
                r.read()
                with lock:
                    counts[(path.split("?")[0], r.status)] += 1
        except (OSError, http.client.HTTPException) as e:
            with lock:
                counts[type(e).__name__] += 1
            c = None
            time.sleep(0.2)


def main():
    if not 3 <= len(sys.argv) <= 6:
        sys.exit(__doc__)
    u = urllib.parse.urlsplit(sys.argv[1])
    host, port = u.hostname, u.port or 80
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("the clients go to loopback only")
    board = sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1030
    secs = float(sys.argv[4]) if len(sys.argv) > 4 else 90
    readers = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 256)), hard))
    req = (f"GET /api/v1/line?max_plies=1000&board={board} HTTP/1.1\r\nHost: x\r\n\r\n" * 50).encode()
    counts, lock = collections.Counter(), threading.Lock()
    stop = threading.Event()
    threads = [threading.Thread(target=reader, args=(host, port, board, stop, counts, lock)) for _ in range(readers)]
    for t in threads:
        t.start()
    socks = []
    t0 = time.time()
    for i in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(5)
        try:
            s.connect((host, port))
        except OSError as e:
            print(f"client {i}: {e}")
            break
        s.setblocking(False)
        try:
            s.send(req)
        except OSError:
            pass
        socks.append(s)
    print(f"{len(socks)} clients connected and sent their requests in {time.time() - t0:.1f} s", flush=True)
    sent = time.time()
    poll = select.poll()
    for s in socks:
        poll.register(s, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    closed, times, failed = set(), [], 0
    marks = [10, 20, 30, 60, 90]
    while time.time() - sent < secs:
        t = time.time()
        for fd, _ in poll.poll(0):
            closed.add(fd)
        took = health(host, port)
        if took is None:
            failed += 1
        else:
            times.append(took)
        if marks and time.time() - sent >= marks[0]:
            worst = f"{max(times) * 1000:.0f} ms" if times else "none"
            print(f"{time.time() - sent:5.1f} s: {len(socks) - len(closed)} of {len(socks)} not seen closed, "
                  f"the server's established connections {established(port)}; "
                  f"/health answered {len(times)} times (slowest {worst}), unanswered within 5 s {failed} times",
                  flush=True)
            marks.pop(0)
        time.sleep(max(0.0, 1 - (time.time() - t)))
    for s in socks:
        s.close()
    stop.set()
    for t in threads:
        t.join()
    if readers:
        print("readers:", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=str)))


if __name__ == "__main__":
    main()
