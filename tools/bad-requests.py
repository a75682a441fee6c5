#!/usr/bin/env python3
"""Bad requests against a running `ostledb serve`, and what each gets.

Usage: python3 tools/bad-requests.py URL [BOARD]

URL is the server (http://127.0.0.1:PORT, loopback only: the script refuses any other
host); BOARD a board of a phase the database holds (default one of (4,4)). Each case
is sent over a raw socket, so that bytes no HTTP library would send (a raw 0xFF in the
path, half a request, a flood of connections) can be tried; every wait is bounded.
Prints a Markdown table: the case, what was sent, the status and the start of the body
(or what happened to the connection), and the time it took. Ends with a check that
the server still answers. Exits 1 if any answer was a 5xx or the server stopped.
"""
import socket
import sys
import threading
import time
import urllib.parse

BOARD = "22220-00000-00300-00000-11110"


def exchange(host, port, data, wait=15.0, pause=None):
    """Send data (bytes, or a list of chunks sent with `pause` seconds between them),
    read until the server closes or `wait` passes; return (raw reply, seconds, how it ended)."""
    s = socket.create_connection((host, port), timeout=wait)
    t = time.time()
    ended = "closed by the server"
    try:
        chunks = data if isinstance(data, list) else [data]
        for i, c in enumerate(chunks):
            s.sendall(c)
            if pause and i + 1 < len(chunks):
                time.sleep(pause)
        if not pause:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        buf = b""
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                ended = f"still open after {wait:.0f} s"
                break
            except (ConnectionResetError, BrokenPipeError):
                ended = "reset by the server"
                break
            if not b:
                break
            buf += b
    except (ConnectionResetError, BrokenPipeError):
        buf, ended = b"", "reset by the server while sending"
    finally:
        s.close()
    return buf, time.time() - t, ended


def summary(reply):
    if not reply:
        return "no response"
    head, _, body = reply.partition(b"\r\n\r\n")
    status = head.split(b"\r\n")[0].decode("latin-1")
    body = body.decode("utf-8", "replace").replace("|", "\\|").replace("\n", " ")
    return f"`{status}` {body[:150]}"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    u = urllib.parse.urlsplit(sys.argv[1])
    host, port = u.hostname, u.port or 80
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("the bad requests go to loopback only")
    board = sys.argv[2] if len(sys.argv) == 3 else BOARD
    other = board.replace("1", "x").replace("2", "1").replace("x", "2")

    def get(path, extra=b""):
        return b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + extra + b"\r\n"

    cases = [
        ("good request", get(f"/api/v1/position?board={board}".encode())),
        ("malformed board", get(b"/api/v1/position?board=12345")),
        ("two holes", get(b"/api/v1/position?board=33220-00000-00000-00000-11110")),
        ("six pieces a side", get(b"/api/v1/position?board=22222-20000-00300-00000-11111")),
        ("wrong prev", get(f"/api/v1/position?board={board}&prev={board}".encode())),
        ("prev not a board", get(f"/api/v1/position?board={board}&prev=hello".encode())),
        ("phase not in the database", get(b"/api/v1/position?board=22222-00000-00300-00000-11110")),
        ("no board", get(b"/api/v1/position")),
        ("unknown parameter", get(f"/api/v1/position?board={board}&depth=3".encode())),
        ("bad max_plies", get(f"/api/v1/line?board={board}&max_plies=99999".encode())),
        ("unknown level", get(f"/api/v1/play?board={board}&level=god".encode())),
        ("query string of 13 KB", get(b"/api/v1/position?board=" + b"1" * 13_000)),
        ("request line of 100 KB", get(b"/api/v1/position?board=" + b"1" * 100_000)),
        ("percent-encoded non-UTF-8", get(b"/api/v1/position?board=%FF%FE%FD")),
        ("raw non-UTF-8 bytes in the path", get(b"/api/v1/position?board=\xff\xfe\xfd")),
        ("bad percent escape", get(b"/api/v1/position?board=%G0")),
        ("unknown path", get(b"/api/v1/solve")),
        ("POST with a 1 MB body", b"POST /api/v1/position HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
         + b"a" * 1_000_000),
        ("GET with a body", get(f"/api/v1/position?board={board}".encode(), b"Content-Length: 5\r\n") + b"hello"),
        ("parameter of stats", get(b"/api/v1/stats?x=1")),
        ("200 headers", get(b"/api/v1/health", b"".join(b"X-%d: y\r\n" % i for i in range(200)))),
        ("not HTTP", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64),
        ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        ("HEAD", f"HEAD /api/v1/position?board={board} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()),
        ("If-None-Match of the ETag", None),
    ]
    rows = []
    bad = False
    etag = None
    for name, data in cases:
        if data is None:
            data = get(f"/api/v1/position?board={board}".encode(), b"If-None-Match: " + (etag or b"none") + b"\r\n")
        reply, took, ended = exchange(host, port, data)
        if name == "good request":
            for line in reply.split(b"\r\n"):
                if line.lower().startswith(b"etag:"):
                    etag = line.split(b":", 1)[1].strip()
        bad |= reply.startswith(b"HTTP/1.1 5")
        shown = data[:60].decode("latin-1").replace("\r", " ").replace("\n", " ").replace("|", "\\|")
        rows.append((name, shown, summary(reply) + ("" if reply else f" ({ended})"), f"{took * 1000:.0f} ms"))

    # A slow client: the request head one byte a second.
    head = get(f"/api/v1/position?board={board}".encode())
    reply, took, ended = exchange(host, port, [head[i:i + 1] for i in range(len(head))], wait=30, pause=1.0)
    rows.append(("slow client (1 byte/s)", "the head of a good request", (summary(reply) if reply else "") + f" {ended}",
                 f"{took:.1f} s"))
    # Idle keep-alive: connect and send nothing.
    reply, took, ended = exchange(host, port, [b"", b""], wait=30, pause=0.01)
    rows.append(("connect, send nothing", "", ended, f"{took:.1f} s"))

    # Many connections at once, each asking once.
    n = 2000
    results = []
    lock = threading.Lock()

    def one():
        try:
            r, _, _ = exchange(host, port, get(f"/api/v1/position?board={board}".encode()), wait=60)
            ok = r.startswith(b"HTTP/1.1 200")
        except OSError:
            ok = False
        with lock:
            results.append(ok)

    t = time.time()
    threads = [threading.Thread(target=one) for _ in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    rows.append((f"{n} connections at once", "a good request on each",
                 f"{sum(results)} answered 200, {n - sum(results)} failed", f"{time.time() - t:.1f} s"))

    reply, took, _ = exchange(host, port, get(b"/api/v1/health"))
    alive = reply.startswith(b"HTTP/1.1 200")
    rows.append(("afterwards", "GET /api/v1/health", summary(reply), f"{took * 1000:.0f} ms"))

    print("| case | sent | answer | time |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    sys.exit(1 if bad or not alive or not all(results) else 0)


if __name__ == "__main__":
    main()
