#!/usr/bin/env python3
"""Attack a database as a hostile user, a failing disk and a bad client would, and judge
every outcome: one row per attack (what must happen, what happened, held or defect).

Usage: tools/attack.py OSTLEDB DB [--quick] [--side N --start-pieces K] [--phase A,B]
                       [--python PY] [--only TEXT] [--keep]

  OSTLEDB   the binary to attack
  DB        a solved database; it is never written: every attack runs on a fresh copy
  --quick   only the attacks that take a few seconds each (CI runs these on a small
            database, tests/attack.rs)
  --side, --start-pieces  the board of a test database (default 5 and 5, Ostle's; on
            another board the attacks on `pack`, which packs only Ostle's, are skipped)
  --phase   the phase of the random boards (default 4,4, that of `ostledb solve`'s)
  --python  an interpreter with the `ostledb` package installed, for the Python rows
            (default: this one; the rows are skipped, and said so, when it has none)
  --only    run only the attacks whose name contains TEXT
  --keep    keep the scratch directory (printed) for a look afterwards

Before and after every attack that writes, `query -` of 2,000 random boards of the
phase must answer byte for byte as the untouched database does. Exit code: 0 when every
attack held, 1 when one found a defect, 2 on a bad argument.

Example: the full table on a (4,4) database

    target/release/ostledb solve --db /tmp/p44
    tools/attack.py target/release/ostledb /tmp/p44
"""
import argparse
import json
import os
import random
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))


class Ctx:
    def __init__(self, args):
        self.bin = os.path.realpath(args.ostledb)
        self.src = os.path.realpath(args.db)
        self.quick = args.quick
        self.side = args.side
        self.start_pieces = args.start_pieces
        # `import` reads the board from these (hidden) flags; 5x5 is its default.
        self.board_args = [] if args.side == 5 else ["--side", str(args.side), "--start-pieces", str(args.start_pieces)]
        self.phase = tuple(int(x) for x in args.phase.split(","))
        self.python = args.python
        self.work = tempfile.mkdtemp(prefix="ostledb-attack-")
        os.chmod(self.work, 0o755)  # the attacks run as another user must reach the copy
        self.db = os.path.join(self.work, "db")
        self.boards = os.path.join(self.work, "boards.txt")
        rng = random.Random(1)
        with open(self.boards, "w") as f:
            for _ in range(2000):
                f.write(random_board(rng, self.side, self.phase) + "\n")
        rc, out, err, _ = self.run(["query", "-", "--db", self.src], stdin_file=self.boards)
        if rc != 0:
            sys.exit(f"attack.py: the untouched database does not answer `query -` (exit {rc}): {err[:300]}")
        self.baseline = out

    def drawn_board(self):
        """A drawn board of the random ones (its line goes on until a limit stops it)."""
        for line in self.baseline.splitlines():
            row = json.loads(line)
            if row.get("verdict") == "draw":
                return row["board"]
        raise SystemExit("attack.py: no drawn board among the 2,000")

    def run(self, args, stdin_file=None, timeout=120, limits=None, env=None, user=None):
        """Run the binary: (exit code or 'killed by SIG...'/'timeout', stdout, stderr, seconds)."""
        cmd = [self.bin] + args
        if user:
            import pwd
            u = pwd.getpwnam(user)
            cmd = ["setpriv", f"--reuid={u.pw_uid}", f"--regid={u.pw_gid}", "--clear-groups"] + cmd
        return run_cmd(cmd, stdin_file, timeout, limits, env)

    def fresh(self):
        if os.path.exists(self.db):
            make_writable(self.db)
            shutil.rmtree(self.db)
        shutil.copytree(self.src, self.db, symlinks=True)
        return self.db

    def answers_equal(self, db=None):
        rc, out, err, _ = self.run(["query", "-", "--db", db or self.db], stdin_file=self.boards)
        return rc == 0 and out == self.baseline

    def values_file(self):
        for root, _, files in sorted(os.walk(self.db)):
            for f in sorted(files):
                if f.startswith("values-") and f.endswith(".zst"):
                    return os.path.join(root, f)
        raise SystemExit("attack.py: the database has no value file")


def run_cmd(cmd, stdin_file=None, timeout=120, limits=None, env=None):
    def pre():
        for res, v in (limits or {}).items():
            resource.setrlimit(res, (v, v))

    stdin = open(stdin_file, "rb") if stdin_file else subprocess.DEVNULL
    t = time.time()
    try:
        p = subprocess.run(cmd, stdin=stdin, capture_output=True, timeout=timeout, preexec_fn=pre,
                           env=dict(os.environ, **(env or {})))
        rc = p.returncode if p.returncode >= 0 else f"killed by {signal.Signals(-p.returncode).name}"
        return rc, p.stdout, p.stderr.decode(errors="replace"), time.time() - t
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or b"", (e.stderr or b"").decode(errors="replace"), time.time() - t
    finally:
        if stdin_file:
            stdin.close()


def random_board(rng, side, phase):
    squares = rng.sample(range(side * side), 1 + phase[0] + phase[1])
    cells = ["0"] * (side * side)
    cells[squares[0]] = "3"
    for s in squares[1:1 + phase[0]]:
        cells[s] = "1"
    for s in squares[1 + phase[0]:]:
        cells[s] = "2"
    return "-".join("".join(cells[r * side:(r + 1) * side]) for r in range(side))


def make_writable(d):
    for root, dirs, files in os.walk(d):
        os.chmod(root, 0o755)
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p) and os.path.isfile(p):
                os.chmod(p, 0o644)


def snapshot(d):
    """Every entry under d with its kind and size, and the bytes' hash for small files
    (the lock and readers files, which every command may touch, left out)."""
    import hashlib
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = os.path.join(root, name)
            if name in ("ostledb.lock", "ostledb.readers"):
                continue
            m = os.lstat(p)
            h = ""
            if stat.S_ISREG(m.st_mode) and m.st_size < (256 << 20):
                try:
                    with open(p, "rb") as f:
                        h = hashlib.sha256(f.read()).hexdigest()
                except PermissionError:
                    h = "unreadable"
            out[os.path.relpath(p, d)] = (stat.S_IFMT(m.st_mode), m.st_size, h)
    return out


def short(text, n=160):
    text = text.decode(errors="replace") if isinstance(text, bytes) else text
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "..."


# Every attack: (name, quick, expected, function(ctx) -> (observed, held)).
ATTACKS = []


def attack(name, expected, quick=True, ostle_only=False):
    """Register an attack; `ostle_only` for one that needs Ostle's 5x5 board (`pack`
    and `solve` write only its phases), skipped on a test database of another."""
    def reg(f):
        def run(ctx):
            return None if ostle_only and (ctx.side, ctx.start_pieces) != (5, 5) else f(ctx)
        ATTACKS.append((name, quick, expected, run))
        return f
    return reg


def two_writers(ctx, first, second, delay):
    db = ctx.fresh()
    p = subprocess.Popen([ctx.bin] + first + ["--db", db, "--quiet"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    time.sleep(delay)
    rc2, _, err2, _ = ctx.run(second + ["--db", db, "--quiet"])
    _, err1 = p.communicate(timeout=600)
    rc1 = p.returncode
    refused = rc2 == 2 and "being written" in err2
    both_ran = rc1 == 0 and rc2 == 0
    same = ctx.answers_equal()
    v, _, _, _ = ctx.run(["verify", "--quiet", "--db", db])
    obs = f"first exit {rc1}, second exit {rc2} ({short(err2, 100) or 'ran after the first'}); answers {'equal' if same else 'DIFFER'}; verify exit {v}"
    return obs, (refused or both_ran) and same and v == 0


@attack("pack and pack at once", "the second refused (exit 2, 'being written') or run after; answers equal; verify 0", ostle_only=True)
def _(ctx):
    return two_writers(ctx, ["pack", "--level", "3"], ["pack", "--level", "1"], 0.3)


@attack("index and index at once", "the second refused (exit 2) or run after; answers equal; verify 0")
def _(ctx):
    return two_writers(ctx, ["index", "--backend", "hash"], ["index", "--backend", "sorted"], 0.3)


@attack("index, then pack while it runs", "pack refused or run after; answers equal; verify 0", ostle_only=True)
def _(ctx):
    return two_writers(ctx, ["index", "--backend", "sorted"], ["pack", "--level", "1"], 1.0)


def pack_killed(ctx, at):
    db = ctx.fresh()
    p = subprocess.Popen([ctx.bin, "pack", "--db", db, "--level", "9", "--quiet"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(at)
    killed = p.poll() is None
    if killed:
        p.kill()
    p.wait()
    same = ctx.answers_equal()
    rc, _, err, _ = ctx.run(["pack", "--db", db, "--level", "9", "--quiet"], timeout=900)
    again = ctx.answers_equal()
    tmps = sum(f.endswith(".tmp") for _, _, fs in os.walk(db) for f in fs)
    obs = f"{'killed' if killed else 'had finished'}; answers {'equal' if same else 'DIFFER'}; pack again exit {rc}, answers {'equal' if again else 'DIFFER'}, {tmps} .tmp left"
    return obs, same and rc == 0 and again and tmps == 0


for _at in (0.2, 0.5, 1.0, 2.0):
    attack(f"pack killed (SIGKILL) at {_at} s", "the old or new database answers as before; pack again completes, no .tmp left",
           quick=_at == 0.2, ostle_only=True)(lambda ctx, at=_at: pack_killed(ctx, at))


@attack("pack out of space (ulimit -f 20000)", "an error exit, not SIGXFSZ; answers equal; no .tmp left", ostle_only=True)
def _(ctx):
    db = ctx.fresh()
    rc, _, err, _ = ctx.run(["pack", "--db", db, "--level", "1", "--quiet"],
                            limits={resource.RLIMIT_FSIZE: 20000 * 1024})
    tmps = sum(f.endswith(".tmp") for _, _, fs in os.walk(db) for f in fs)
    same = ctx.answers_equal()
    obs = f"exit {rc}: {short(err, 100)}; answers {'equal' if same else 'DIFFER'}; {tmps} .tmp"
    return obs, rc in (0, 1, 2) and same and tmps == 0


@attack("pack of a value file with a damaged block", "exit 1 naming the file and 'checksum'; nothing changed", ostle_only=True)
def _(ctx):
    ctx.fresh()
    vf = ctx.values_file()
    size = os.path.getsize(vf)
    with open(vf, "r+b") as f:
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0xFF]))
    before = snapshot(ctx.db)
    rc, _, err, _ = ctx.run(["pack", "--db", ctx.db, "--level", "1", "--quiet"])
    unchanged = snapshot(ctx.db) == before
    obs = f"exit {rc}: {short(err, 120)}; directory {'unchanged' if unchanged else 'CHANGED'}"
    return obs, rc == 1 and "checksum" in err and os.path.basename(vf) in err and unchanged


@attack("a stale .tmp and an unlisted index file", "verify lists both; the next write removes them; answers equal")
def _(ctx):
    db = ctx.fresh()
    gen = os.path.dirname(ctx.values_file())
    with open(os.path.join(gen, "values-9-9.zst.tmp"), "wb") as f:
        f.write(b"\0" * 100000)
    with open(os.path.join(db, "keys-4-4.hash"), "wb") as f:
        f.write(b"\0" * 1000)
    rc, out, err, _ = ctx.run(["verify", "--db", db])
    listed = (out.decode(errors="replace") + err).count("not part of the database")
    rc2, _, err2, _ = ctx.run(["index", "--db", db, "--backend", "sorted", "--quiet"])
    left = [f for _, _, fs in os.walk(db) for f in fs if f.endswith(".tmp") or f == "keys-4-4.hash"]
    same = ctx.answers_equal()
    obs = f"verify exit {rc}, {listed} listed; index exit {rc2}; left {left}; answers {'equal' if same else 'DIFFER'}"
    return obs, listed >= 1 and rc2 == 0 and not left and same


# Damaged metadata (issue 61, defect 1): every writer refuses and touches nothing; repair
# gives the database back.
def flip(at):
    def damage(path):
        with open(path, "r+b") as f:
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([b[0] ^ 1]))
    return damage


def truncate(n):
    def damage(path):
        with open(path, "r+b") as f:
            f.truncate(n)
    return damage


def grow(path):
    with open(path, "r+b") as f:
        f.truncate(5 << 30)


def link_zero(path):
    os.remove(path)
    os.symlink("/dev/zero", path)


def fifo(path):
    os.remove(path)
    os.mkfifo(path)


def unreadable(path):
    os.chmod(path, 0)


DAMAGES = [
    ("a flipped byte in the body", flip(40)),
    ("a flipped byte in the version field", flip(8)),
    ("truncated to 10 bytes", truncate(10)),
    ("truncated to nothing", truncate(0)),
    ("grown to 5 GB (sparse)", grow),
    ("a link to /dev/zero", link_zero),
    ("a FIFO", fifo),
    ("unreadable to the user", unreadable),
    ("deleted", os.remove),
]


def writers(ctx):
    """The commands that write a database, each with what it needs."""
    fake = os.path.join(ctx.work, "published")
    os.makedirs(fake, exist_ok=True)
    # Names suffice: import takes the lock (and refuses) before it reads a line.
    n = ctx.phase[0] + ctx.phase[1]
    open(os.path.join(fake, f"ostle_{n}_retrograde_output0000.txt"), "w").close()
    return [
        ("pack", ["pack", "--level", "1"]),
        ("index", ["index", "--backend", "sorted"]),
        ("solve", ["solve"]),
        ("bfs --store", ["bfs", "--store", "--max-depth", "2"]),
        ("import", ["import", "--from", fake] + ctx.board_args),
    ]


def can_drop_root():
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def metadata_attack(ctx, kind, damage, writer, args):
    db = ctx.fresh()
    user = None
    if kind == "unreadable to the user":
        if not can_drop_root():
            return None
        # The user is nobody, who may write the directory but not read the metadata.
        for root, dirs, files in os.walk(db):
            os.chmod(root, 0o777)
            for f in files:
                os.chmod(os.path.join(root, f), 0o666)
        user = "nobody"
    damage(os.path.join(db, "ostledb.meta"))
    before = snapshot(db)
    rc, _, err, secs = ctx.run(args + ["--db", db, "--quiet"], user=user, timeout=60)
    after = snapshot(db)
    held = rc == 2 and "nothing was written or removed" in err and before == after
    obs = f"exit {rc} in {secs:.1f} s: {short(err, 110)}; directory {'unchanged' if before == after else 'CHANGED'}"
    return obs, held


def repair_attack(ctx, kind, damage):
    db = ctx.fresh()
    if kind == "unreadable to the user":
        if not can_drop_root():
            return None
        for root, dirs, files in os.walk(db):
            os.chmod(root, 0o777)
    damage(os.path.join(db, "ostledb.meta"))
    rc, out, err, _ = ctx.run(["query", "-", "--db", db], stdin_file=ctx.boards,
                              user="nobody" if kind == "unreadable to the user" else None)
    advised = "ostledb repair" in err or rc == 0
    if kind == "unreadable to the user":
        os.chmod(os.path.join(db, "ostledb.meta"), 0o644)
        # As root the file is readable again: repair has nothing to do, and says so.
    rc, out, err, _ = ctx.run(["repair", "--db", db], timeout=600)
    same = ctx.answers_equal()
    v, _, _, _ = ctx.run(["verify", "--quiet", "--db", db])
    obs = f"query advises repair: {advised}; repair exit {rc}: {short(out + err.encode(), 90)}; answers {'equal' if same else 'DIFFER'}; verify exit {v}"
    return obs, advised and rc == 0 and same and v == 0


for _kind, _damage in DAMAGES:
    for _w in ("pack", "index", "solve", "bfs --store", "import"):
        attack(f"metadata {_kind}, then {_w}", "exit 2 'nothing was written or removed'; directory unchanged")(
            lambda ctx, k=_kind, d=_damage, w=_w: metadata_attack(ctx, k, d, w, dict(writers(ctx))[w]))
    attack(f"metadata {_kind}, then repair", "queries advise `ostledb repair`; repair exits 0; answers equal; verify 0")(
        lambda ctx, k=_kind, d=_damage: repair_attack(ctx, k, d))


@attack("query -: 2,000 boards and one invalid UTF-8 line", "2,001 lines out, one an error; exit 2")
def _(ctx):
    path = os.path.join(ctx.work, "in.txt")
    lines = open(ctx.boards, "rb").read().splitlines(keepends=True)
    with open(path, "wb") as f:
        f.write(b"".join(lines[:1000]) + b"\xff\xfe22220\n" + b"".join(lines[1000:]))
    rc, out, err, _ = ctx.run(["query", "-", "--db", ctx.src], stdin_file=path)
    rows = out.splitlines()
    errors = sum(b'"error"' in r for r in rows)
    return f"exit {rc}; {len(rows)} lines, {errors} error lines", rc == 2 and len(rows) == 2001 and errors == 1


@attack("query -: one board, stdin left open", "its answer within 5 s")
def _(ctx):
    p = subprocess.Popen([ctx.bin, "query", "-", "--db", ctx.src], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    t = time.time()
    p.stdin.write(open(ctx.boards, "rb").readline())
    p.stdin.flush()
    import select
    r, _, _ = select.select([p.stdout], [], [], 30)
    took = time.time() - t
    line = p.stdout.readline() if r else b""
    p.stdin.close()
    p.wait(timeout=30)
    return f"answer after {took:.2f} s: {short(line, 60)}", bool(r) and took < 5


@attack("query -: a 10 MB line", "a short error line (under 1 KB), exit 2")
def _(ctx):
    path = os.path.join(ctx.work, "big.txt")
    with open(path, "wb") as f:
        f.write(b"1" * 10_000_000 + b"\n")
    rc, out, err, _ = ctx.run(["query", "-", "--db", ctx.src], stdin_file=path)
    return f"exit {rc}; {len(out)} bytes out", rc == 2 and 0 < len(out) < 1024


@attack("a FIFO in place of the value file", "query and verify exit 2 at once ('FIFO')")
def _(ctx):
    ctx.fresh()
    vf = ctx.values_file()
    os.remove(vf)
    os.mkfifo(vf)
    rc, _, err, _ = ctx.run(["query", "-", "--db", ctx.db], stdin_file=ctx.boards, timeout=20)
    rc2, _, err2, _ = ctx.run(["verify", "--db", ctx.db], timeout=20)
    return f"query exit {rc}, verify exit {rc2}: {short(err, 90)}", rc == 2 and rc2 == 2 and "FIFO" in err


@attack("query - under ulimit -v 200000", "all 2,000 answered as without the limit, or exit 2 with advice; never an abort")
def _(ctx):
    rc, out, err, _ = ctx.run(["query", "-", "--db", ctx.src], stdin_file=ctx.boards,
                              limits={resource.RLIMIT_AS: 200000 * 1024})
    same = out == ctx.baseline
    return f"exit {rc}; answers {'equal' if same else 'differ'}; {short(err, 90)}", (rc == 0 and same) or rc == 2


@attack("solve --threads 0", "refused by the argument parser, exit 2")
def _(ctx):
    rc, _, err, _ = ctx.run(["solve", "--db", os.path.join(ctx.work, "t0"), "--threads", "0"], timeout=20)
    return f"exit {rc}: {short(err, 100)}", rc == 2 and not os.path.exists(os.path.join(ctx.work, "t0"))


@attack("a damaged key index", "exit 1 naming `ostledb index`; verify --json lists the file, exit 1")
def _(ctx):
    db = ctx.fresh()
    rc, _, err, _ = ctx.run(["index", "--db", db, "--backend", "sorted", "--quiet"])
    keys = [os.path.join(r, f) for r, _, fs in os.walk(db) for f in fs if f.startswith("keys-")]
    if rc != 0 or not keys:
        return f"index exit {rc}: {short(err)}", False
    size = os.path.getsize(keys[0])
    with open(keys[0], "r+b") as f:
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0xFF]))
    rc, _, err, _ = ctx.run(["query", "-", "--db", db, "--backend", "sorted"], stdin_file=ctx.boards, timeout=600)
    rv, out, _, _ = ctx.run(["verify", "--db", db, "--json"], timeout=600)
    try:
        failures = json.loads(out)["checksums"]["failures"]
    except (ValueError, KeyError, TypeError):
        failures = None
    obs = f"query exit {rc}: {short(err, 80)}; verify --json exit {rv}, {len(failures or [])} failure(s)"
    return obs, rc == 1 and "ostledb index" in err and rv == 1 and bool(failures)


# Issue 61's new defects.
def serve_until_health(ctx, limits):
    port = free_port()
    p = subprocess.Popen([ctx.bin, "serve", "--db", ctx.src, "--bind", f"127.0.0.1:{port}", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=lambda: [resource.setrlimit(r, (v, v)) for r, v in limits.items()])
    deadline = time.time() + 60
    ok = False
    while time.time() < deadline and p.poll() is None:
        if http_get(port, "/api/v1/health", 2)[0] == 200:
            ok = True
            break
        time.sleep(0.2)
    if p.poll() is None:
        p.terminate()
    _, err = p.communicate(timeout=30)
    rc = p.returncode if p.returncode >= 0 else f"killed by {signal.Signals(-p.returncode).name}"
    return ok, rc, err.decode(errors="replace")


for _kb in (200000, 400000):
    def _serve_capped(ctx, kb=_kb):
        ok, rc, err = serve_until_health(ctx, {resource.RLIMIT_AS: kb * 1024})
        held = ok or (rc == 2 and "--cache-mb" in err and len(err.strip().splitlines()) <= 2)
        return (f"answered /health" if ok else f"exit {rc}: {short(err, 120)}"), held
    attack(f"serve under ulimit -v {_kb}", "serves /health, or exit 2 in one sentence naming --cache-mb; never an abort")(
        _serve_capped)


@attack("import of a FIFO in place of a published file", "exit 2 at once, naming the file")
def _(ctx):
    src = os.path.join(ctx.work, "fifo-published")
    os.makedirs(src, exist_ok=True)
    n = ctx.phase[0] + ctx.phase[1]
    path = os.path.join(src, f"ostle_{n}_retrograde_output0000.txt")
    if not os.path.exists(path):
        os.mkfifo(path)
    target = os.path.join(ctx.work, "fifo-import.db")
    rc, _, err, secs = ctx.run(["import", "--from", src, "--db", target, "--quiet"] + ctx.board_args, timeout=60)
    return f"exit {rc} in {secs:.1f} s: {short(err, 100)}", rc == 2 and "FIFO" in err


@attack("query --line --max-plies 4294967295 under ulimit -v 400000", "a bounded line or exit 2; never an abort")
def _(ctx):
    board = ctx.drawn_board()
    rc, out, err, secs = ctx.run(["query", board, "--line", "--max-plies", "4294967295", "--db", ctx.src],
                                 limits={resource.RLIMIT_AS: 400000 * 1024}, timeout=60)
    return f"exit {rc} in {secs:.1f} s: {short(err or out, 100)}", rc in (0, 2)


def exported(ctx):
    out = os.path.join(ctx.work, "exported")
    if not os.path.isdir(out):
        rc, _, err, _ = ctx.run(["export", "--format", "published", "--db", ctx.src, "--out", out, "--quiet"],
                                timeout=1800)
        if rc != 0:
            raise SystemExit(f"attack.py: export failed (exit {rc}): {err[:300]}")
    return out


def import_changed(ctx, name, change):
    """Import the exported files with the first line whose fields share one non-zero
    value changed by `change(line, value)`: (exit, stderr, seconds)."""
    src = exported(ctx)
    dst = os.path.join(ctx.work, name)
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    done = False
    for f in sorted(os.listdir(src)):
        if done or "retrograde" not in f:
            os.symlink(os.path.join(src, f), os.path.join(dst, f))
            continue
        lines = open(os.path.join(src, f), "rb").read().split(b"\n")
        for k, line in enumerate(lines):
            vals = [v for v in line.split(b",")[1:] if v]
            if vals and vals[0] not in (b"0", b"checkmate") and all(v == vals[0] for v in vals):
                lines[k] = change(line, int(vals[0]))
                done = True
                break
        with open(os.path.join(dst, f), "wb") as out:
            out.write(b"\n".join(lines))
    target = os.path.join(ctx.work, name + ".db")
    if os.path.exists(target):
        shutil.rmtree(target)
    rc, _, err, secs = ctx.run(["import", "--from", dst, "--db", target, "--quiet"] + ctx.board_args, timeout=3600)
    return rc, err, secs, os.path.exists(os.path.join(target, "ostledb.meta"))


def every_value(line, to):
    parts = line.split(b",")
    return b",".join([parts[0]] + [str(to).encode() if v else v for v in parts[1:]])


@attack("import of a field of 301", "exit 2 naming the file, line and 'out of range'; no database", quick=True)
def _(ctx):
    rc, err, secs, made = import_changed(ctx, "import-301", lambda line, v: every_value(line, 301))
    return f"exit {rc} in {secs:.1f} s: {short(err, 110)}", rc == 2 and "out of range" in err and not made


@attack("import of a value 4 plies too long", "exit 2: the value is not what its moves give; no database", quick=True)
def _(ctx):
    rc, err, secs, made = import_changed(ctx, "import-wrong", lambda line, v: every_value(line, v + 4))
    return f"exit {rc} in {secs:.1f} s: {short(err, 110)}", rc == 2 and "do not give" in err and not made


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, timeout):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), body
    except (OSError, IndexError, ValueError):
        return None, b""


class Server:
    def __init__(self, ctx):
        self.port = free_port()
        self.p = subprocess.Popen([ctx.bin, "serve", "--db", ctx.src, "--bind", f"127.0.0.1:{self.port}", "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline and http_get(self.port, "/api/v1/health", 2)[0] != 200:
            time.sleep(0.2)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.p.terminate()
        self.p.wait(timeout=30)


@attack("HTTP: an unknown parameter on stats and health", "400 with a whole sentence (the endpoint takes no parameters)")
def _(ctx):
    with Server(ctx) as s:
        rows = []
        held = True
        for path in ("/api/v1/stats?x=1", "/api/v1/health?x=1"):
            code, body = http_get(s.port, path, 10)
            text = body.decode(errors="replace")
            ok = code == 400 and "takes " in text and not text.rstrip('"}\n ').endswith("takes")
            held &= ok
            rows.append(f"{path}: {code} {short(text, 80)}")
        return "; ".join(rows), held


@attack("HTTP: 1,030 clients pipeline /line and never read", "/health answers another client within 1 s, though the stalled ones outnumber --max-connections (1,024)")
def _(ctx):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    board = ctx.drawn_board()
    req = f"GET /api/v1/line?board={board}&max_plies=1000 HTTP/1.1\r\nHost: x\r\n\r\n".encode() * 50
    with Server(ctx) as s:
        socks = []
        for _ in range(1030):
            try:
                c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
                c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                c.setblocking(False)
                try:
                    c.send(req)
                except OSError:
                    pass
                socks.append(c)
            except OSError:
                break
        time.sleep(3)
        worst = 0.0
        answered = 0
        for _ in range(5):
            t = time.time()
            code, _ = http_get(s.port, "/api/v1/health", 10)
            worst = max(worst, time.time() - t)
            answered += code == 200
            time.sleep(0.5)
        wait = 15 if ctx.quick else 30
        time.sleep(wait)
        still = 0
        for c in socks:
            try:
                c.setblocking(True)
                c.settimeout(0.01)
                while c.recv(65536):
                    pass
            except socket.timeout:
                still += 1
            except OSError:
                pass
            c.close()
    return (f"{len(socks)} stalled clients; /health {answered}/5 answered, slowest {worst:.2f} s; "
            f"{still} stalled connections still open after {wait} s more"), answered == 5 and worst < 1.0


PY_PRELUDE = "import sys, ostledb\ndb = ostledb.open(sys.argv[1])\n"


def python_attack(ctx, code, limit_mb=None):
    py = ctx.python or sys.executable
    if run_cmd([py, "-c", "import ostledb"], timeout=30)[0] != 0:
        return None
    return run_cmd([py, "-c", PY_PRELUDE + code, ctx.src], timeout=120,
                   limits={resource.RLIMIT_AS: limit_mb << 20} if limit_mb else None)


def py_row(ctx, code, limit_mb=None):
    r = python_attack(ctx, code, limit_mb)
    if r is None:
        return None
    rc, out, err, secs = r
    text = out.decode(errors="replace").strip()
    return f"exit {rc} in {secs:.1f} s: {short(text or err, 120)}", rc == 0 and text.endswith("HELD")


@attack("Python probe_many of a big-endian array", "answers as the native array does, or TypeError")
def _(ctx):
    return py_row(ctx, """
import numpy as np
codes = np.array(db.sample(db.phases[-1], 128), dtype=np.uint64)
native = db.probe_many(codes)
try:
    big = db.probe_many(codes.astype('>u8'))
    print('equal' if list(big) == list(native) else 'DIFFER', 'HELD' if list(big) == list(native) else '')
except TypeError as e:
    print('TypeError:', e, 'HELD')
""")


@attack("Python line(max_plies=2**31) under 2 GB", "a bounded line or a typed error; never killed")
def _(ctx):
    return py_row(ctx, f"""
b = '{ctx.drawn_board()}'
try:
    l = db.line(b, max_plies=2**31)
    print('line of', len(l), 'HELD')
except (ValueError, OverflowError) as e:
    print(type(e).__name__, e, 'HELD')
""", limit_mb=2048)


@attack("Python sample(phase, 10**11) and 2**61", "a typed error; never an abort or PanicException")
def _(ctx):
    return py_row(ctx, """
out = []
for n in (10**11, 2**61):
    try:
        db.sample(db.phases[-1], n)
        out.append('returned')
    except BaseException as e:
        out.append(type(e).__name__)
ok = all(x not in ('returned', 'PanicException') for x in out)
print(out, 'HELD' if ok else '')
""", limit_mb=2048)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ostledb")
    ap.add_argument("db")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--side", type=int, default=5)
    ap.add_argument("--start-pieces", type=int, default=5)
    ap.add_argument("--phase", default="4,4")
    ap.add_argument("--python")
    ap.add_argument("--only")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if not os.access(args.ostledb, os.X_OK) or not os.path.isfile(os.path.join(args.db, "ostledb.meta")):
        print("attack.py: give the ostledb binary and a solved database", file=sys.stderr)
        return 2
    ctx = Ctx(args)
    rows = []
    try:
        for name, quick, expected, f in ATTACKS:
            if (ctx.quick and not quick) or (args.only and args.only not in name):
                continue
            t = time.time()
            try:
                r = f(ctx)
            except Exception as e:  # an attack that cannot run is a defect of the tool, said so
                r = (f"the attack failed: {type(e).__name__}: {e}", False)
            verdict = "skipped" if r is None else ("held" if r[1] else "DEFECT")
            observed = "not available here" if r is None else r[0]
            rows.append((name, expected, observed, verdict))
            print(f"| {name} | {expected} | {observed} | {verdict} ({time.time() - t:.1f} s) |", flush=True)
    finally:
        if args.keep:
            print(f"scratch: {ctx.work}", file=sys.stderr)
        else:
            if os.path.exists(ctx.db):
                make_writable(ctx.db)
            shutil.rmtree(ctx.work, ignore_errors=True)
    held = sum(r[3] == "held" for r in rows)
    defects = sum(r[3] == "DEFECT" for r in rows)
    skipped = sum(r[3] == "skipped" for r in rows)
    print(f"\n{len(rows)} attacks: {held} held, {defects} defects, {skipped} skipped")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
