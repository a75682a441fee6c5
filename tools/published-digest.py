#!/usr/bin/env python3
"""The digest of a set of published Ostle text files, by the published recipe.

    python3 tools/published-digest.py DIR [--verbose] [--max-pieces N]

Reads every ostle_<n>_bfs_output<NNNN>.txt and ostle_<n>_retrograde_output<NNNN>.txt in
DIR (all with the same n, or the one given by --max-pieces). Per file: sha256 of its
lines with trailing whitespace removed, joined by LF (so LF and CRLF files agree). Then
sha256 of the hex digests of all BFS files, then all retrograde files, concatenated in
file-name order. Prints that digest (and, with --verbose, each file's) so that it can be
compared with `ostledb export --digest`. Standard library only; reads line by line.
"""

import argparse
import hashlib
import pathlib
import re
import sys

NAME = re.compile(r"ostle_(\d+)_(bfs|retrograde)_output(\d{4})\.txt")


def file_digest(path):
    h = hashlib.sha256()
    first = True
    with open(path, "rb") as f:
        for line in f:
            if not first:
                h.update(b"\n")
            h.update(line.rstrip())
            first = False
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--verbose", "-v", action="store_true", help="print every file's digest")
    ap.add_argument("--max-pieces", type=int, help="only the files of this piece count")
    args = ap.parse_args()
    files = []
    for p in sorted(args.dir.iterdir()):
        m = NAME.fullmatch(p.name)
        if m and (args.max_pieces is None or int(m.group(1)) == args.max_pieces):
            files.append((int(m.group(1)), m.group(2), p))
    if not files:
        print(f"error: no published files in {args.dir}", file=sys.stderr)
        return 2
    counts = {n for n, _, _ in files}
    if len(counts) > 1:
        print(f"error: {args.dir} holds files of several piece counts {sorted(counts)}; give --max-pieces",
              file=sys.stderr)
        return 2
    # BFS files first, then retrograde files, each in file-name order.
    ordered = [p for _, k, p in files if k == "bfs"] + [p for _, k, p in files if k == "retrograde"]
    digests = []
    for p in ordered:
        d = file_digest(p)
        digests.append(d)
        if args.verbose:
            print(f"{d}  {p.name}")
    print(hashlib.sha256("".join(digests).encode("ascii")).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
