#!/usr/bin/env bash
# The bad inputs of issue 14, tried again: concurrent writers, writes killed or out of
# space, damaged and unusual files, hostile `query -` input, tight resource limits. Each
# runs on a fresh copy of a solved (4,4) database and prints what it gets (exit codes,
# messages cut to a few hundred bytes). README.md, "Guarantees", tabulates the results.
#
# Usage: tools/bad-inputs.sh OSTLEDB DB
# Example: tools/bad-inputs.sh target/release/ostledb ostle.db
set -u
BIN=$(realpath "$1")
SRC=$2
here=$(dirname "$(realpath "$0")")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
python3 "$here/random-boards.py" 2000 5 "4,4" > "$W/boards.txt"
B=22220-00000-00300-00000-11110
fresh() { rm -rf "$W/db"; cp -a "$SRC" "$W/db"; }
short() { head -c "${2:-300}" "$1" | tr '\n' ' '; }
# two_writers DELAY FIRST SECOND: on a fresh copy, start the command FIRST (its arguments,
# one string), and SECOND after DELAY seconds while FIRST runs; print both exit codes.
two_writers() {
    fresh
    $BIN $2 --db $W/db --quiet > $W/a.out 2>&1 & p1=$!
    sleep "$1"
    $BIN $3 --db $W/db --quiet > $W/b.out 2>&1; e2=$?
    wait $p1; e1=$?
    echo "$2: exit $e1; $3: exit $e2: $(head -c 300 $W/b.out)"
}
echo "== 1a: pack --level 3 and pack --level 1 at once"
two_writers 0.3 "pack --level 3" "pack --level 1"
$BIN verify --db $W/db --quiet > $W/v.out 2>&1; echo "verify exit $? $(tail -c 200 $W/v.out)"
echo "== 1b: index --backend hash and index --backend sorted at once"
two_writers 0.3 "index --backend hash" "index --backend sorted"
$BIN verify --db $W/db --quiet > $W/v.out 2>&1; echo "verify exit $? $(tail -c 200 $W/v.out)"
echo "== 1c: index, then pack 3 s later"
two_writers 3 "index --backend sorted" "pack --level 1"
$BIN query $B --db $W/db > $W/q.out 2>&1; echo "query exit $? $(head -c 100 $W/q.out)"
echo "== 2a: pack killed by SIGKILL at 0.5, 1, 2 s"
for d in 0.5 1 2; do
  fresh
  $BIN pack --db $W/db --level 9 --quiet > /dev/null 2>&1 & p=$!
  sleep $d; kill -9 $p 2>/dev/null && st=killed || st=finished; wait $p 2>/dev/null
  tmps=$(find $W/db -name '*.tmp' | wc -l)
  $BIN query $B --db $W/db > $W/q.out 2>&1; q=$?
  $BIN verify --db $W/db --quiet > $W/v.out 2>&1; v=$?
  echo "at $d s ($st): $tmps tmp files; query exit $q; verify exit $v $(grep -i 'not part' $W/v.out | head -c 200)"
  /usr/bin/time -f '%e s' $BIN pack --db $W/db --level 9 --quiet > $W/p.out 2>&1; echo "  pack again: exit $? $(tail -c 200 $W/p.out | tr '\n' ' ')"
  echo "  after: $(find $W/db -name '*.tmp' | wc -l) tmp, $(ls -d $W/db/gen-* | tr '\n' ' ')"
done
echo "== 2b: pack out of space (ulimit -f 20000 KB)"
fresh
(ulimit -f 20000; $BIN pack --db $W/db --level 1 --quiet) > $W/p.out 2>&1; echo "pack exit $?: $(head -c 300 $W/p.out)"
$BIN query $B --db $W/db > $W/q.out 2>&1; echo "query exit $?"; $BIN verify --db $W/db --quiet > /dev/null 2>&1; echo "verify exit $?; tmp: $(find $W/db -name '*.tmp' | wc -l)"
echo "== 2c: pack of a damaged block"
fresh
vf=$(ls $W/db/gen-*/values-*.zst $W/db/values-*.zst 2>/dev/null | head -1); sz=$(stat -c %s $vf)
printf '\xff' | dd of=$vf bs=1 seek=$((sz/2)) conv=notrunc status=none
$BIN pack --db $W/db --level 1 --quiet > $W/p.out 2>&1; echo "pack exit $?: $(head -c 400 $W/p.out)"
ls $W/db | tr '\n' ' '; echo
echo "== 3: leftovers: a stale tmp file and an unlisted index file"
fresh
g=$(ls -d $W/db/gen-* 2>/dev/null | head -1); g=${g:-$W/db}
head -c 1000000 /dev/zero > $g/values-4-4.zst.tmp; head -c 1000 /dev/zero > $W/db/keys-4-4.hash
$BIN verify --db $W/db > $W/v.out 2>&1; echo "verify exit $?: $(grep -i -A3 'not part' $W/v.out | head -c 400)"
$BIN index --db $W/db --backend rank > $W/i.out 2>&1; echo "index exit $?: $(grep -i remov $W/i.out | head -c 300)"
echo "after: $(find $W/db -name '*.tmp' | wc -l) tmp; $(ls $W/db | tr '\n' ' ')"
echo "== 4a: 2,000 good lines + 1 invalid UTF-8 line"
(head -1000 $W/boards.txt; printf '\xff\xfe22220\n'; tail -1000 $W/boards.txt) > $W/in.txt
$BIN query - --db $SRC < $W/in.txt > $W/out.jsonl 2> $W/err; e=$?
echo "exit $e; $(wc -l < $W/out.jsonl) lines out, $(grep -c '"error"' $W/out.jsonl) error lines; stderr: $(short $W/err)"
grep '"error"' $W/out.jsonl | head -c 300; echo
echo "== 4b: one board written, answer awaited with stdin open"
python3 - "$BIN" "$SRC" <<'PY'
import subprocess, sys, time, select
p = subprocess.Popen([sys.argv[1], "query", "-", "--db", sys.argv[2]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
t = time.time(); p.stdin.write(b"22220-00000-00300-00000-11110\n"); p.stdin.flush()
r, _, _ = select.select([p.stdout], [], [], 30)
print("answer after %.2f s: %s" % (time.time() - t, p.stdout.readline()[:80] if r else "none within 30 s"))
p.stdin.close(); p.wait()
PY
echo "== 4c: a 10 MB line"
head -c 10000000 /dev/zero | tr '\0' '1' > $W/big.txt; echo >> $W/big.txt
$BIN query - --db $SRC < $W/big.txt > $W/out.jsonl 2> $W/err; e=$?
echo "exit $e; stdout $(stat -c %s $W/out.jsonl) bytes, stderr $(stat -c %s $W/err) bytes: $(short $W/out.jsonl 250)"
echo "== 5a: ostledb.meta a symlink to /dev/zero"
fresh; rm $W/db/ostledb.meta; ln -s /dev/zero $W/db/ostledb.meta
timeout 20 /usr/bin/time -f '%e s %M KB' $BIN query $B --db $W/db > $W/out 2> $W/err; echo "exit $?: $(short $W/err 400)"
echo "== 5b: a FIFO in place of the value file"
fresh; vf=$(ls $W/db/gen-*/values-*.zst | head -1); rm $vf; mkfifo $vf
timeout 20 $BIN query $B --db $W/db > $W/out 2> $W/err; echo "query exit $?: $(short $W/err 300)"
timeout 20 $BIN verify --db $W/db > $W/out 2> $W/err; echo "verify exit $?: $(short $W/err 300)"
echo "== 5c: ulimit -v 200000"
(ulimit -v 200000; $BIN query - --db $SRC < $W/boards.txt > $W/out.jsonl 2> $W/err); echo "query - exit $?: $(wc -l < $W/out.jsonl) lines; $(short $W/err 300)"
(ulimit -v 200000; $BIN query $B --db $SRC > $W/out 2> $W/err); echo "query exit $?: $(short $W/out 60) $(short $W/err 300)"
echo "== 5d: solve --threads 0"
timeout 10 $BIN solve --db $W/t0 --threads 0 > $W/out 2> $W/err; echo "exit $?: $(short $W/err 300)"
echo "== 5e: hash backend, one query (3 runs)"
fresh; $BIN index --db $W/db --backend hash --quiet
for i in 1 2 3; do /usr/bin/time -f '%e s %M KB' $BIN query $B --db $W/db --backend hash > /dev/null 2> $W/err; tail -1 $W/err; done
echo "== 6a: a version flip in the metadata"
fresh; printf '\x07' | dd of=$W/db/ostledb.meta bs=1 seek=8 conv=notrunc status=none
$BIN query $B --db $W/db > $W/out 2> $W/err; echo "exit $?: $(short $W/err 400)"
echo "== 6b: a damaged key index"
fresh; $BIN index --db $W/db --backend sorted --quiet; kf=$(ls $W/db/gen-*/keys-*sorted* | head -1); sz=$(stat -c %s $kf)
printf '\xff' | dd of=$kf bs=1 seek=$((sz/2)) conv=notrunc status=none
$BIN query - --db $W/db --backend sorted < $W/boards.txt > $W/out 2> $W/err; echo "exit $?: $(short $W/err 400)"
$BIN verify --db $W/db > $W/out 2> $W/err; echo "verify exit $?: $(short $W/out 300) $(short $W/err 300)"
echo "== 6c: verify --json on damage"
$BIN verify --db $W/db --json > $W/out 2> $W/err; echo "exit $?; stdout: $(short $W/out 400); stderr: $(short $W/err 200)"
