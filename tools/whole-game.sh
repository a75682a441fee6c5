#!/usr/bin/env bash
# The whole game from nothing to a checked database, one stage after another, each under
# /usr/bin/time: solve, the whole breadth-first search stored in the database (with its
# node layers, from which the digest reads every node's depth), verify
# --deep, the published digest and the published solver's two fingerprints with the
# statistics of `ostledb stats` counted in the same walk (WORK/stats.json, with the
# longest win of all, its positions and their depths from the start), and the check of
# all of them (digest and fingerprints included) against the published run. Run it again after a kill (or a reboot, or the end of a session) and it
# goes on: a finished stage is skipped, and `solve`, `bfs`, `verify`, `stats` and
# `digest` go on from their own checkpoints inside the stage they were in (`verify`,
# `stats` and `digest` keep theirs in the work directory; the other stages, minutes
# long, start again). `verify`, `stats` and `digest` share the records with every loss
# distance (`--records-dir WORK/records`, 10.9 GB for the whole game), which `solve`
# writes from its phase files as it packs them; a phase whose file is missing or not
# usable is resolved by the first of them, which writes it, and read by the others
# (resolving takes about 25 min of the whole game on 2 cores). Remove WORK/records when
# every stage is done. Every
# attempt of every stage is timed, and the table at the end sums them per stage: wall
# and CPU seconds, peak RSS (of an attempt killed with the script: its wall time from
# its start to its last output, at least).
#
# Usage: tools/whole-game.sh [--db DIR] [--work DIR] [--ostledb BIN] [--max-pieces N]
#                            [--bfs-depth N] [--stages LIST]
#   --db          the database (default ./ostle.db)
#   --work        outputs, timings and stage markers (default DB.work)
#   --ostledb     the binary (default target/release/ostledb beside this script)
#   --max-pieces  10 for the whole game (default); 8 or 9 for a trial run
#   --bfs-depth   the BFS's last depth (default 255: to the end)
#   --stages      comma-separated stages, run in the order given (default: all, in the
#                 order below; e.g. bfs,digest to have the digest before verify)
#
# Stages: solve, bfs, verify, digest, check (check: the whole game only); and, only when
# asked for, stats: the statistics by a walk of their own (`ostledb stats`, about 12 min
# on 2 cores), into WORK/stats.out, to compare with the digest's; longest: the longest
# win of every phase by a read of the value files (`ostledb stats --longest`, about 2 to
# 3 min), into WORK/longest.out (the digest's statistics have the longest of all).
# Exit code: 0 when every stage asked for is done, else that of the first that failed.
set -euo pipefail
# The whole script is one block, read before any of it runs: bash reads a script as it
# goes, so an edit to this file during a run of hours would otherwise change what the
# run does next.
{

here=$(dirname "$(realpath "$0")")
db=./ostle.db
work=
bin="$here/../target/release/ostledb"
max_pieces=10
bfs_depth=255
stages=solve,bfs,verify,digest,check
while (($#)); do
    case $1 in
        --db) db=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --ostledb) bin=$2; shift 2 ;;
        --max-pieces) max_pieces=$2; shift 2 ;;
        --bfs-depth) bfs_depth=$2; shift 2 ;;
        --stages) stages=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "whole-game.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
work=${work:-$db.work}
[[ -x $bin ]] || { echo "whole-game.sh: no ostledb binary at $bin (cargo build --release, or --ostledb)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "whole-game.sh: /usr/bin/time is needed (Debian: apt-get install time)" >&2; exit 2; }
mkdir -p "$work"
known=",solve,bfs,verify,stats,longest,digest,check,"
for s in ${stages//,/ }; do
    [[ $known == *",$s,"* ]] || { echo "whole-game.sh: unknown stage '$s' (stages: ${known:1:-1})" >&2; exit 2; }
done

# The command of a stage, its standard output going to $work/STAGE.out.
command_of() {
    case $1 in
        solve) echo "$bin solve --db $db --max-pieces $max_pieces --records-dir $work/records" ;;
        bfs) echo "$bin bfs --by-positions --store --node-layers --max-depth $bfs_depth --json --db $db" ;;
        verify) echo "$bin verify --deep --json --checkpoint $work/verify.ckpt --records-dir $work/records --db $db" ;;
        stats) echo "$bin stats --json --checkpoint $work/stats.ckpt --records-dir $work/records --db $db" ;;
        longest) echo "$bin stats --longest --json --db $db" ;;
        digest) echo "$bin export --digest --fingerprint --json --stats $work/stats.json --checkpoint $work/digest.ckpt --records-dir $work/records --keep-records --db $db" ;;
        check) echo "python3 $here/check-whole-game.py --db $db --ostledb $bin --stats $work/stats.json --bfs $work/bfs.out --digest $work/digest.out" ;;
    esac
}

# Timed attempts in a stage's $work/STAGE.times: GNU time's "wall user sys peak_kb exit"
# lines (it writes other lines too, e.g. "Command terminated by signal 15").
timed_lines() {
    [[ -e $work/$1.times ]] && awk '$1 ~ /^[0-9.]+$/ && NF == 5' "$work/$1.times"
    return 0
}

# An attempt with no timings was killed together with this script (a kill, a reboot,
# the end of a session). Before anything runs again, keep in $work/STAGE.killed its start
# and the time of its last output (the modification time of $work/STAGE.err, which only
# that attempt wrote since), so that the table counts the wall time it ran at least.
note_killed() {
    local s=$1 tried timed noted last
    [[ -e $work/$s.attempts ]] || return 0
    tried=$(wc -l < "$work/$s.attempts")
    timed=$(timed_lines "$s" | wc -l)
    noted=0
    [[ -e $work/$s.killed ]] && noted=$(wc -l < "$work/$s.killed")
    if ((tried > timed + noted)); then
        last=$(tail -n 1 "$work/$s.attempts")
        echo "$last $(stat -c %Y "$work/$s.err" 2>/dev/null || echo "$last")" >> "$work/$s.killed"
    fi
}

# Run one stage unless done: each attempt appends its start time to $work/STAGE.attempts
# and, when it ends, "wall user sys peak_kb exit" to $work/STAGE.times (an attempt killed
# with this script has no such line; see note_killed); a marker $work/STAGE.done is
# written when it succeeds.
run_stage() {
    local s=$1
    if [[ -e $work/$s.done ]]; then
        echo "== $s: done before, skipped" >&2
        return 0
    fi
    if [[ $s == check && $max_pieces != 10 ]]; then
        echo "== check: skipped (the published figures are of the whole game, --max-pieces 10)" >&2
        return 0
    fi
    local cmd
    cmd=$(command_of "$s")
    echo "== $s: $cmd" >&2
    local code=0
    date +%s >> "$work/$s.attempts"
    # shellcheck disable=SC2086 # the command is words on purpose
    /usr/bin/time -f "%e %U %S %M %x" -a -o "$work/$s.times" $cmd > "$work/$s.out.part" 2> >(tee -a "$work/$s.err" >&2) || code=$?
    if ((code != 0)); then
        echo "== $s failed (exit $code): see $work/$s.err; run the same command again to go on" >&2
        return "$code"
    fi
    mv "$work/$s.out.part" "$work/$s.out"
    touch "$work/$s.done"
}

summary() {
    printf '%-8s %8s %10s %10s %9s  %s\n' stage attempts wall_s cpu_s peak_GB state
    local s total_wall=0
    for s in ${stages//,/ }; do
        local state=pending
        [[ -e $work/$s.done ]] && state=done
        local tried=0 timed=0 last= wall=0 cpu=0 peak=0 killed=0 killed_wall=0
        [[ -e $work/$s.attempts ]] && tried=$(wc -l < "$work/$s.attempts")
        # Timed attempts, the last one's exit code, summed wall and CPU, peak RSS.
        read -r timed last wall cpu peak < <(timed_lines "$s" | awk '{ n++; x = $5; w += $1; c += $2 + $3; if ($4 > p) p = $4 }
            END { printf "%d %s %.1f %.1f %.2f\n", n, n ? x : "-", w, c, p * 1024 / 1e9 }')
        # Killed attempts: from their start to their last output, at least.
        if [[ -e $work/$s.killed ]]; then
            read -r killed killed_wall < <(awk '{ n++; w += $2 - $1 } END { printf "%d %d\n", n, w }' "$work/$s.killed")
        fi
        if [[ $s == check && $max_pieces != 10 ]]; then
            state="skipped (--max-pieces $max_pieces)"
        elif [[ $state == pending && -n $last && $last != - && $last != 0 ]]; then
            state="failed (exit $last)"
        fi
        if ((killed > 0)); then
            state="$state; $killed attempt(s) killed: $killed_wall s of wall in the total, start to last output (CPU and peak not known)"
        fi
        if ((tried > timed + killed)); then
            state="$state; $((tried - timed - killed)) attempt(s) not timed"
        fi
        if ((timed + killed > 0)); then
            wall=$(awk -v a="$wall" -v b="$killed_wall" 'BEGIN { printf "%.1f", a + b }')
            total_wall=$(awk -v a="$total_wall" -v b="$wall" 'BEGIN { printf "%.1f", a + b }')
        fi
        if ((timed > 0)); then
            printf '%-8s %8s %10s %10s %9s  %s\n' "$s" "$tried" "$wall" "$cpu" "$peak" "$state"
        elif ((killed > 0)); then
            printf '%-8s %8s %10s %10s %9s  %s\n' "$s" "$tried" "$wall" - - "$state"
        else
            printf '%-8s %8s %10s %10s %9s  %s\n' "$s" "$tried" - - - "$state"
        fi
    done
    printf '%-8s %8s %10s\n' all "" "$total_wall"
}

for s in ${known//,/ }; do
    note_killed "$s"
done
code=0
for s in ${stages//,/ }; do
    run_stage "$s" || { code=$?; break; }
done
summary | tee "$work/summary.txt"
exit "$code"
}
