#!/usr/bin/env python3
"""Random Ostle boards, one per line, for `ostledb query -` and differential checks.

Usage: python3 tools/random-boards.py N [SEED] [PHASES]

Prints N boards in the 25-digit notation (rows joined by '-'): a hole, A pieces of the
side to move ('1') and B of the other side ('2') on distinct random squares, the phase
(A,B) drawn uniformly from PHASES (default "4,4 5,4 4,5 5,5"). SEED (default 1) makes
the list repeatable. Example, the same boards through two databases:

    python3 tools/random-boards.py 40000 7 > boards.txt
    ostledb query - --db old.db < boards.txt > old.jsonl
    ostledb query - --db new.db < boards.txt > new.jsonl
    cmp old.jsonl new.jsonl
"""
import random
import sys


def main():
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    spec = sys.argv[3] if len(sys.argv) > 3 else '4,4 5,4 4,5 5,5'
    phases = [tuple(int(x) for x in p.split(',')) for p in spec.split()]
    for _ in range(n):
        a, b = rng.choice(phases)
        squares = rng.sample(range(25), a + b + 1)
        cells = ['0'] * 25
        cells[squares[0]] = '3'
        for s in squares[1:1 + a]:
            cells[s] = '1'
        for s in squares[1 + a:]:
            cells[s] = '2'
        print('-'.join(''.join(cells[r * 5:r * 5 + 5]) for r in range(5)))


if __name__ == '__main__':
    main()
