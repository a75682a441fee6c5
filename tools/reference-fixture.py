#!/usr/bin/env python3
"""Make the fixture of tests/data/reference-s8 from a run of the published solver.

    python3 tools/reference-fixture.py RUN_DIR OUT_DIR

RUN_DIR holds what `solver -b -s 8` (eukaryo/ostle_solver) wrote: the files
ostle_8_bfs_output<NNNN>.txt and its standard output saved as solver.log. Writes into
OUT_DIR (tests/data/reference-s8):

- bfs-digests.txt: every BFS file's digest by the published recipe (sha256 of its lines
  with trailing whitespace removed, joined by LF), one a line, file 0000 first (the
  names are implied: line n is file n - 1);
- run.txt: `key value` lines: the files, lines and nodes with a depth, the digest of the
  BFS files alone (sha256 of their digests concatenated), the layers (nodes per depth,
  from the solver's statistics), its unreached count (`-1`), the fingerprint it printed,
  and `file0000-to-depth-10`: the digest of file 0000 with every depth past 10 written
  `-1` (what a search stopped at depth 10 writes);
- samples.txt: some of its lines, `<file> <line number> <line>`: the first three, the
  start's (depth 0), every line without a depth, up to five with `-1`, the first and a
  middle line of every 20th file, and the last line.

Standard library only; reads every file once (about 6.7 GB for `-s 8`).
"""

import hashlib
import pathlib
import re
import sys

NAME = re.compile(r"ostle_8_bfs_output(\d{4})\.txt")
DEPTH = 10


def capped(line):
    """The line with every depth past DEPTH written -1."""
    parts = line.split(",")
    return ",".join(p if not p.isdigit() or int(p) <= DEPTH else "-1" for p in parts)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    run, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    files = sorted(p for p in run.iterdir() if NAME.fullmatch(p.name))
    if not files:
        print(f"error: no ostle_8_bfs_output files in {run}", file=sys.stderr)
        return 2
    log = (run / "solver.log").read_text()
    digests, samples = [], []
    lines = nodes = 0
    capped_first = None
    unreached_lines = 0
    last = None
    for k, path in enumerate(files):
        h = hashlib.sha256()
        c = hashlib.sha256() if k == 0 else None
        with open(path, "r", encoding="ascii") as f:
            text = [l.rstrip() for l in f]
        h.update("\n".join(text).encode())
        if c is not None:
            c.update("\n".join(capped(l) for l in text).encode())
            capped_first = c.hexdigest()
        digests.append((h.hexdigest(), path.name))
        for n, line in enumerate(text, 1):
            fields = line.split(",")[1:]
            depths = [x for x in fields if x.isdigit()]
            nodes += len(depths)
            keep = (k == 0 and n <= 3) or "0" in depths and fields[-25] == "0"
            keep = keep or not depths
            if "-1" in fields and unreached_lines < 5:
                unreached_lines += 1
                keep = True
            keep = keep or (k % 20 == 0 and n in (1, len(text) // 2))
            if keep:
                samples.append(f"{path.name} {n} {line}")
            last = f"{path.name} {n} {line}"
        lines += len(text)
    if samples[-1] != last:
        samples.append(last)
    hist = dict(re.findall(r"result: +(-?\d+) : (\d+)", log))
    layers = [hist[str(d)] for d in range(len(hist)) if str(d) in hist]
    fingerprint = re.findall(r"fingerprint = (\d+)", log)[-1]
    (out / "bfs-digests.txt").write_text("".join(f"{d}\n" for d, _ in digests))
    facts = [
        "# The published solver's `-b -s 8` run (README.md); tests/reference.rs reads it.",
        f"files {len(files)}",
        f"lines {lines}",
        f"nodes {nodes}",
        f"bfs-digest {hashlib.sha256(''.join(d for d, _ in digests).encode()).hexdigest()}",
        f"layers {' '.join(layers)}",
        f"unreached {hist.get('-1', '?')}",
        f"fingerprint {fingerprint}",
        f"file0000-to-depth-{DEPTH} {capped_first}",
    ]
    (out / "run.txt").write_text("\n".join(facts) + "\n")
    (out / "samples.txt").write_text("".join(s + "\n" for s in samples))
    print(f"{len(files)} files, {lines} lines, {nodes} nodes, {len(samples)} samples, fingerprint {fingerprint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
