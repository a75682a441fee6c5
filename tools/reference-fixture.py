#!/usr/bin/env python3
"""Make a fixture of tests/data/reference-s8 from a run of the published solver.

    python3 tools/reference-fixture.py RUN_DIR OUT_DIR [--cap D]

RUN_DIR holds what `solver -b -s 8` (eukaryo/ostle_solver) wrote: the files
ostle_8_bfs_output<NNNN>.txt, and its standard output saved as solver.log.
tests/data/reference-s8/README.md says how the runs were made. Writes into OUT_DIR:

- bfs-digests.txt: every BFS file's digest by the published recipe (sha256 of its lines
  with trailing whitespace removed, joined by LF), one a line, file 0000 first (line n
  is file n - 1);
- run.txt: `key value` lines: the files, the lines, the fields with a depth and those
  with -1, the digest of the BFS files alone (sha256 of their digests concatenated),
  the layers (nodes per depth, from the solver's statistics), its unreached count (its
  `-1` line), and the fingerprint it printed;
- samples.txt: some of its lines, `<file> <line number> <line>`: the first three, the
  start's (a depth 0), the first five without a field, the first five with -1, the first
  and a middle line of every 20th file, and the last line.

With --cap D, also prints the digest of every file with each depth past D written -1,
which is what a run stopped at depth D writes: a check of such a run against a whole one.

Standard library only; reads every file once (about 6.7 GB for `-s 8`).
"""

import hashlib
import pathlib
import re
import sys

NAME = re.compile(r"ostle_8_bfs_output(\d{4})\.txt")


def capped(line, cap):
    """The line with every depth past `cap` written -1."""
    parts = line.split(",")
    return ",".join(p if not p.isdigit() or int(p) <= cap else "-1" for p in parts)


def main():
    args = sys.argv[1:]
    cap = None
    if "--cap" in args:
        i = args.index("--cap")
        cap = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    run, out = pathlib.Path(args[0]), pathlib.Path(args[1])
    files = sorted(p for p in run.iterdir() if NAME.fullmatch(p.name))
    if not files:
        print(f"error: no ostle_8_bfs_output files in {run}", file=sys.stderr)
        return 2
    log = (run / "solver.log").read_text()
    digests, capped_digests, samples = [], [], []
    lines = depths_n = minus = empty = with_minus = 0
    last = None
    for k, path in enumerate(files):
        with open(path, "r", encoding="ascii") as f:
            text = [l.rstrip() for l in f]
        digests.append(hashlib.sha256("\n".join(text).encode()).hexdigest())
        if cap is not None:
            c = "\n".join(capped(l, cap) for l in text)
            capped_digests.append(hashlib.sha256(c.encode()).hexdigest())
        for n, line in enumerate(text, 1):
            fields = [x for x in line.split(",")[1:] if x != "checkmate"]
            d = [x for x in fields if x.isdigit()]
            depths_n += len(d)
            m = fields.count("-1")
            minus += m
            keep = (k == 0 and n <= 3) or "0" in d
            if not d and not m and empty < 5:
                empty += 1
                keep = True
            if m and with_minus < 5:
                with_minus += 1
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
    out.mkdir(parents=True, exist_ok=True)
    (out / "bfs-digests.txt").write_text("".join(f"{d}\n" for d in digests))
    facts = [
        "# The published solver's `-b -s 8` run (README.md); tests/reference.rs reads it.",
        f"files {len(files)}",
        f"lines {lines}",
        f"depths {depths_n}",
        f"minus-ones {minus}",
        f"bfs-digest {hashlib.sha256(''.join(digests).encode()).hexdigest()}",
        f"layers {' '.join(layers)}",
        f"unreached {hist.get('-1', '?')}",
        f"fingerprint {fingerprint}",
    ]
    (out / "run.txt").write_text("\n".join(facts) + "\n")
    (out / "samples.txt").write_text("".join(s + "\n" for s in samples))
    print(f"{len(files)} files, {lines} lines, {depths_n} depths, {minus} -1, {len(samples)} samples, fingerprint {fingerprint}")
    if cap is not None:
        print(f"capped at depth {cap}:")
        print("".join(f"{d}\n" for d in capped_digests), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
