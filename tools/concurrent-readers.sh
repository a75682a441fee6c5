#!/usr/bin/env bash
# Readers during writes: 8 reader processes x 2,000 queries (`ostledb query -`) against a
# database while `pack` and then `index` rewrite it, for each lookup backend. Every
# answer must equal the one given before the write; prints errors, differing answers and
# each reader's peak memory (max RSS).
#
# Usage: tools/concurrent-readers.sh OSTLEDB DB [READERS] [QUERIES]
#   OSTLEDB  the binary (e.g. target/release/ostledb)
#   DB       a solved (4,4) database; it is copied, never changed
# Example: tools/concurrent-readers.sh target/release/ostledb ostle.db
set -euo pipefail

bin=$(realpath "$1")
src=$2
readers=${3:-8}
queries=${4:-2000}
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

db=$work/db
cp -r "$src" "$db"
python3 "$here/random-boards.py" "$queries" 11 "4,4" > "$work/boards.txt"

backends=(rank sorted levelwise hash mmap)
for b in "${backends[@]:1}"; do
    "$bin" index --db "$db" --backend "$b" --quiet > /dev/null
done
for b in "${backends[@]}"; do
    "$bin" query - --db "$db" --backend "$b" < "$work/boards.txt" > "$work/want-$b.jsonl"
done
cmp -s "$work/want-rank.jsonl" "$work/want-sorted.jsonl" || { echo "backends disagree before any write"; exit 1; }

# run_readers BACKEND WRITER...: keep $readers reader slots busy, each running one
# `query -` process of $queries boards after another, for as long as the writer runs
# (so that processes open the database before, during and after its switch); report.
run_readers() {
    local backend=$1
    shift
    rm -f "$work"/got-* "$work"/err-* "$work"/rss-* "$work/done"
    local pids=()
    for r in $(seq 1 "$readers"); do
        (
            k=0
            while [ ! -e "$work/done" ] || [ "$k" -eq 0 ]; do
                k=$((k + 1))
                # Readers yield to the writer (it is the one to finish).
                nice -n 15 /usr/bin/time -f "%M" -o "$work/rss-$r-$k" \
                    "$bin" query - --db "$db" --backend "$backend" < "$work/boards.txt" \
                    > "$work/got-$r-$k.jsonl" 2> "$work/err-$r-$k" || echo "exit $?" >> "$work/err-$r-$k"
            done
        ) &
        pids+=($!)
    done
    local start=$SECONDS
    "$@" --quiet > /dev/null 2> "$work/writer.err" || { echo "writer failed: $(cat "$work/writer.err")"; exit 1; }
    local writer=$((SECONDS - start))
    touch "$work/done"
    wait "${pids[@]}"
    local runs=0 errors=0 differ=0 peak=0
    for f in "$work"/got-*.jsonl; do
        runs=$((runs + 1))
        local e=${f/got-/err-}
        e=${e%.jsonl}
        errors=$((errors + $(grep -c '"error"' "$f" || true) + $(grep -c . "$e" || true)))
        cmp -s "$f" "$work/want-$backend.jsonl" || differ=$((differ + 1))
    done
    for f in "$work"/rss-*; do
        local rss
        rss=$(tail -1 "$f")
        ((rss > peak)) && peak=$rss
    done
    printf '%-9s during %-5s (%3d s): %4d reader processes x %d queries: %d errors, %d differing outputs; peak RSS per reader %d MB\n' \
        "$backend" "$2" "$writer" "$runs" "$queries" "$errors" "$differ" $((peak / 1024))
}

for b in "${backends[@]}"; do
    run_readers "$b" "$bin" pack --db "$db" --level 1 --backend rank --backend sorted --backend hash
    run_readers "$b" "$bin" index --db "$db" --backend sorted
done
