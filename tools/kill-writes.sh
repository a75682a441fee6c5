#!/usr/bin/env bash
# SIGKILL during writes, by elapsed time: `pack`, `index` (and with --solve, `solve`) of a
# copy of a (4,4) database are killed after each of several delays; after each kill the
# database must pass `verify` and answer 2,000 boards exactly as before (the write was
# cut before its switch) or exactly as after (the write finished), and running the same
# command again must complete. Prints one line per kill.
#
# Usage: tools/kill-writes.sh OSTLEDB DB [--solve]
# Example: tools/kill-writes.sh target/release/ostledb ostle.db
set -euo pipefail

bin=$(realpath "$1")
src=$2
solve=${3:-}
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/random-boards.py" 2000 5 "4,4" > "$work/boards.txt"

answers() {
    "$bin" query - --db "$1" < "$work/boards.txt" 2>&1 | sha256sum | cut -c1-16
}

# kill_at NAME DELAYS COMMAND...: for each delay, kill COMMAND (run on a fresh copy,
# "DB" replaced by its path) after DELAY seconds and check.
kill_at() {
    local name=$1 delays=$2
    shift 2
    local want
    want=$(answers "$src")
    for d in $delays; do
        rm -rf "$work/db"
        # A solve starts from nothing: before its switch there is no database at all.
        if [ "$name" = solve ]; then mkdir "$work/db"; else cp -r "$src" "$work/db"; fi
        local args=("${@/DB/$work/db}")
        "$bin" "${args[@]}" --quiet > /dev/null 2>&1 &
        local pid=$!
        sleep "$d"
        local state=finished
        kill -9 "$pid" 2> /dev/null && state=killed
        wait "$pid" 2> /dev/null || true
        local verify=ok got rerun=ok
        if [ -e "$work/db/ostledb.meta" ]; then
            "$bin" verify --db "$work/db" --quiet > /dev/null 2>&1 || verify=FAILED
        else
            verify="(no database yet)"
        fi
        got=$(answers "$work/db")
        local same=no
        [ "$got" = "$want" ] && same=yes
        "$bin" "${args[@]}" --quiet > /dev/null 2> "$work/rerun.err" || rerun="FAILED: $(head -c 300 "$work/rerun.err")"
        local after
        after=$(answers "$work/db")
        [ "$after" = "$want" ] || rerun="$rerun, answers differ after the rerun"
        printf '%-6s killed at %5s s (%s): verify %s, answers as before: %s, rerun %s, leftovers after rerun: %s\n' \
            "$name" "$d" "$state" "$verify" "$same" "$rerun" \
            "$(find "$work/db" -name '*.tmp' | wc -l) tmp, $(ls -d "$work/db"/gen-* | wc -l) generations"
    done
}

kill_at pack "0.2 0.5 0.8 1.1 1.4 1.7 2.0 2.3 2.6 3.0 4.0" pack --db DB --level 1
kill_at index "0.5 2 4 6 8 10 12 14 16" index --db DB --backend sorted
if [ "$solve" = --solve ]; then
    kill_at solve "5 30 60 90" solve --db DB --max-pieces 8
fi
