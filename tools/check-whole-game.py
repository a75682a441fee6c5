#!/usr/bin/env python3
"""Compare a whole-game ostledb database with the published full run.

Usage:
    tools/check-whole-game.py [--db ./ostle.db] [--stats stats.json] [--ostledb target/release/ostledb]
    tools/check-whole-game.py --bfs bfs.json [--bfs-only]
    tools/check-whole-game.py --digest digest.json [--digest-only]

Runs `ostledb stats --json` on the database (about 20 minutes for the whole game on 2
cores; or reads a saved copy given with --stats) and `ostledb query` on the initial
position, then checks them against tools/published-whole-game.json: position and
immediate-win counts, non-trivial node counts, the value histogram of the non-trivial
nodes (every distance), the longest win (and prints the positions that have it, with
their depths from the start), and the value of the initial position. With --bfs, also the
`--json` output of `ostledb bfs --by-positions --max-depth 255` against the published
BFS layers (new nodes at every depth, the last depth, the total) and its count of
positions no node of which is reachable; --bfs-only checks that alone. With --digest,
also the `--json` output of `ostledb export --digest --fingerprint`: the whole-game
digest by the published recipe and the two fingerprints the published log prints;
--digest-only checks that alone. Prints every difference and exits with 1 if there is any.
"""

import argparse
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", default="./ostle.db")
    ap.add_argument("--stats", help="a saved `ostledb stats --json` output instead of running it")
    ap.add_argument("--ostledb", default=str(HERE.parent / "target" / "release" / "ostledb"))
    ap.add_argument("--bfs", help="the --json output of `ostledb bfs --by-positions --max-depth 255`")
    ap.add_argument("--bfs-only", action="store_true", help="check only the --bfs output")
    ap.add_argument("--digest", help="the --json output of `ostledb export --digest --fingerprint`")
    ap.add_argument("--digest-only", action="store_true", help="check only the --digest output")
    args = ap.parse_args()

    pub = json.loads((HERE / "published-whole-game.json").read_text())
    bad = []
    if args.bfs:
        bad += check_bfs(pub, json.loads(pathlib.Path(args.bfs).read_text()))
        if args.bfs_only:
            print("all equal" if not bad else f"differences: {', '.join(bad)}")
            return 1 if bad else 0
    if args.digest:
        bad += check_digest(pub, json.loads(pathlib.Path(args.digest).read_text()))
        if args.digest_only:
            print("all equal" if not bad else f"differences: {', '.join(bad)}")
            return 1 if bad else 0
    if args.stats:
        stats = json.loads(pathlib.Path(args.stats).read_text())
    else:
        out = subprocess.run([args.ostledb, "stats", "--json", "--quiet", "--db", args.db], check=True,
                             capture_output=True, text=True).stdout
        stats = json.loads(out)
    if stats["max_pieces"] != 10:
        print(f"the database holds phases up to {stats['max_pieces']} pieces; the published run is the whole game (10)")
        return 1
    total = stats["total"]

    def check(what, ours, theirs):
        status = "ok" if ours == theirs else "DIFFERENT"
        print(f"{what:<45} ours {ours:>16,}  published {theirs:>16,}  {status}")
        if ours != theirs:
            bad.append(what)

    c = total["counts"]
    check("positions", c["positions"], pub["positions"])
    check("immediate-win positions", c["immediate_wins"], pub["immediate_win_positions"])
    check("non-trivial nodes", c["nontrivial_nodes"], pub["nontrivial_nodes"])
    check("non-trivial nodes with a forbidden move", c["nontrivial_with_forbidden"],
          pub["nontrivial_nodes_with_forbidden_move"])

    # Published value v: 0 draw, else the game ends in N = v + 1 plies (even v: a win).
    nodes = total["nodes"]
    hist = pub["node_histogram"]
    check("draw nodes", nodes["draw"], hist[0])
    check("win nodes", nodes["win"], sum(hist[2::2]))
    check("loss nodes", nodes["loss"], sum(hist[1::2]))
    wins, losses = nodes["win_by_distance"], nodes["loss_by_distance"]
    longest = max(len(wins), len(losses), len(hist) + 1)
    differ = 0
    for n in range(1, longest):
        ours = (wins[n] if n < len(wins) else 0) if n % 2 == 1 else (losses[n] if n < len(losses) else 0)
        # (v = 0 is the draw: no non-trivial node wins in 1 ply, immediate wins are apart.)
        theirs = hist[n - 1] if 2 <= n <= len(hist) else 0
        if ours != theirs:
            differ += 1
            kind = "win" if n % 2 == 1 else "loss"
            print(f"  nodes that {kind} in {n} plies: ours {ours:,}, published {theirs:,}")
        # A win in an even number of plies (or a loss in an odd one) cannot happen.
        wrong = (wins[n] if n < len(wins) else 0) if n % 2 == 0 else (losses[n] if n < len(losses) else 0)
        if wrong:
            differ += 1
            print(f"  {wrong:,} nodes end in {n} plies for the wrong side")
    print(f"{'node histogram, plies 1..' + str(longest - 1):<45} {differ} differences")
    if differ:
        bad.append("node histogram")

    # The longest win of all (published: the last value of the histogram, v = N - 1) and
    # the positions that have it, with their distance from the start.
    if "longest_win" in total:
        check("longest win, plies", total["longest_win"]["plies"], len(hist))
        for row in stats.get("longest_wins", []):
            which = "base value" if row["special_node"] is None else f"node {row['special_node']}"
            depth = row["position_depth"]
            reached = "not reached from the start" if depth is None else f"first reached at depth {depth}"
            print(f"  {row['board']} ({row['base64']}) {which}, {reached}")
    else:
        print("longest win: not in these statistics (an earlier build's)")

    board = "22222-00000-00300-00000-11111"
    q = subprocess.run([args.ostledb, "query", board, "--json", "--db", args.db], capture_output=True, text=True)
    if q.returncode != 0:
        print(f"query of the initial position failed: {q.stderr.strip()}")
        bad.append("initial position")
    else:
        verdict = json.loads(q.stdout).get("text", "")
        ok = "draw" in verdict.lower()
        print(f"{'initial position':<45} ours {verdict!r}  published 'draw'  {'ok' if ok else 'DIFFERENT'}")
        if not ok:
            bad.append("initial position")

    print("all equal" if not bad else f"differences: {', '.join(bad)}")
    return 1 if bad else 0


def check_digest(pub, out):
    """The digest and fingerprints of a whole-game export against the published ones."""
    bad = []
    prints = out.get("fingerprints") or {}
    for what, ours, theirs in [
        ("digest", out.get("digest"), pub["digest"]),
        ("fingerprint of the retrograde files", prints.get("retrograde"), pub["fingerprint_retrograde"]),
        ("fingerprint of the BFS files", prints.get("bfs"), pub["fingerprint_bfs"]),
    ]:
        status = "ok" if ours == theirs else "DIFFERENT"
        print(f"{what:<37} ours {ours}  published {theirs}  {status}")
        if ours != theirs:
            bad.append(what)
    return bad


def check_bfs(pub, bfs):
    """The layers of a whole-game BFS against the published ones; returns what differs."""
    bad = []
    theirs = pub["bfs_layers_published_convention"]
    ours = [layer["nodes"] for layer in bfs["layers"]]
    if bfs.get("convention") != "published" or not bfs.get("expand_checkmates", False):
        print("the BFS is not of the published convention (checkmates expanded)")
        return ["BFS convention"]
    for d in range(max(len(ours), len(theirs))):
        a = ours[d] if d < len(ours) else 0
        b = theirs[d] if d < len(theirs) else 0
        status = "ok" if a == b else "DIFFERENT"
        print(f"BFS depth {d:>3}: new nodes ours {a:>16,}  published {b:>16,}  {status}")
        if a != b:
            bad.append(f"BFS depth {d}")
    stop = bfs.get("stop", {}).get("reason")
    print(f"BFS stop: {stop} (last depth {len(ours) - 1}, published {len(theirs) - 1})")
    if stop != "exhausted":
        bad.append("BFS not run to exhaustion")
    total = bfs.get("total_nodes")
    print(f"BFS nodes in all: ours {total:,}, published {sum(theirs):,}")
    if total != sum(theirs):
        bad.append("BFS total")
    reached, positions = bfs.get("positions_reached") or (None, None)
    if reached is not None:
        print(f"positions with a reachable node: {reached:,} of {positions:,}; unreachable: {positions - reached:,}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
