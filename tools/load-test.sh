#!/usr/bin/env bash
# Load test of `ostledb serve` on loopback: GET /api/v1/position for random boards,
# keep-alive, with wrk (Debian package `wrk`) and tools/load-position.lua.
#
# Usage: tools/load-test.sh OSTLEDB DB [SECONDS] [PHASES]
#   SECONDS per run (default 10); PHASES as tools/random-boards.py takes them (default
#   "4,4"). Starts `OSTLEDB serve --db DB` on a free loopback port, runs wrk (one thread)
#   once right after the start (a cold block cache) and then with 4, 16 and 64
#   connections, and prints one row per run: requests per second and latency
#   percentiles. Every run is bounded: wrk stops after SECONDS, the server is stopped at
#   the end. wrk shares the machine's cores with the server, as a client on the same
#   host does.
set -euo pipefail
bin=${1:?usage: tools/load-test.sh OSTLEDB DB [SECONDS] [PHASES]}
db=${2:?usage: tools/load-test.sh OSTLEDB DB [SECONDS] [PHASES]}
secs=${3:-10}
phases=${4:-4,4}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 "$here/random-boards.py" 10000 11 "$phases" >"$work/boards.txt"
"$bin" serve --quiet --db "$db" --bind 127.0.0.1:0 >"$work/out" &
server=$!
for _ in $(seq 100); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$url" ] || { echo "the server did not start" >&2; exit 2; }
echo "server $url ($db), $(nproc) cores, wrk 1 thread, ${secs} s per run, 10,000 random boards of $phases"
printf '| run | connections | requests/s | p50 ms | p90 ms | p99 ms | max ms | errors |\n|---|---|---|---|---|---|---|---|\n'
run() {
    local name=$1 conns=$2 out
    out=$(BOARDS="$work/boards.txt" wrk -t1 -c"$conns" -d"${secs}s" --timeout 10s -s "$here/load-position.lua" "$url")
    local rps p errs
    rps=$(sed -n 's/^Requests\/sec: *//p' <<<"$out")
    p=$(sed -n 's/^latency p50 \([0-9.]*\) ms, p90 \([0-9.]*\) ms, p99 \([0-9.]*\) ms, max \([0-9.]*\) ms/\1 | \2 | \3 | \4/p' <<<"$out")
    errs=$(sed -n 's/^requests [0-9]*, errors: //p' <<<"$out")
    printf '| %s | %s | %.0f | %s | %s |\n' "$name" "$conns" "$rps" "$p" "$errs"
}
run "cold (just started)" 16
for c in 4 16 64; do run warm "$c"; done
