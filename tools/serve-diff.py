#!/usr/bin/env python3
"""Check that `ostledb serve` answers as `ostledb query` does, board by board.

Usage: python3 tools/serve-diff.py OSTLEDB DB BOARDS URL

Runs `OSTLEDB query - --db DB` over the boards of the file BOARDS (one per line, as
tools/random-boards.py writes them), asks the server at URL (e.g. http://127.0.0.1:8080,
serving the same database) for GET /api/v1/position?board=B of each over one keep-alive
connection, and compares the two JSON objects (the `input` field of `query -` aside).
Prints the counts and the first differences; exits 1 if any answer differs.
"""
import http.client
import json
import subprocess
import sys
import time
import urllib.parse


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    binary, db, boards_file, url = sys.argv[1:]
    boards = [b.strip() for b in open(boards_file) if b.strip() and not b.startswith("#")]
    t = time.time()
    out = subprocess.run([binary, "query", "-", "--quiet", "--db", db], input="\n".join(boards) + "\n",
                         capture_output=True, text=True)
    cli = [json.loads(line) for line in out.stdout.splitlines() if line]
    if len(cli) != len(boards):
        sys.exit(f"query - answered {len(cli)} of {len(boards)} boards: {out.stderr}")
    cli_s = time.time() - t
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)
    same = differ = 0
    statuses = {}
    t = time.time()
    for board, want in zip(boards, cli):
        conn.request("GET", "/api/v1/position?board=" + urllib.parse.quote(board))
        r = conn.getresponse()
        body = r.read()
        statuses[r.status] = statuses.get(r.status, 0) + 1
        got = json.loads(body)
        want = dict(want)
        want.pop("input", None)
        if got == want:
            same += 1
        else:
            differ += 1
            if differ <= 3:
                print(f"DIFFERS {board}:\n  query: {json.dumps(want)[:300]}\n  serve: {json.dumps(got)[:300]}")
    http_s = time.time() - t
    print(f"{len(boards)} boards: {same} identical, {differ} different; HTTP statuses {statuses}; "
          f"query - {cli_s:.1f} s, HTTP one connection {http_s:.1f} s")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
