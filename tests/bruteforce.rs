//! A brute-force oracle for small boards, and the differential test of the fast solver
//! against it.
//!
//! The oracle shares nothing with the fast solver but the naive reference rules
//! ([`ArrayBoard`]: moves by walking squares, `play`, codes and canonical codes built from
//! all 8 images). It
//!
//! 1. enumerates every live position by trying all placements of the hole and both sides'
//!    pieces, keeping those whose code is the smallest of their 8 images (canonical);
//! 2. builds the explicit node graph: node (P, j), j = 0 (nothing forbidden) or the
//!    1-based index in `P.moves()` of the forbidden move; the options of a node are the
//!    outcomes of all moves of P but move j;
//! 3. solves it by retrograde levels: at level d every undecided node whose options,
//!    judged by the nodes decided at levels below d, give it a win in d or a loss in d is
//!    decided; what is never decided is a draw (infinite play).
//!
//! Its self-checks re-derive every node from its options (a consistent assignment with
//! distances is the unique solution: see `oracle_values_satisfy_the_minimax_equations`),
//! recount positions per phase with Burnside's lemma, and recompute wins and losses in one
//! ply directly from the rules.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use ostledb::game::naive::{ArrayBoard, Cell};
use ostledb::game::{Geometry, Position};
use rayon::prelude::*;

/// A node's value for the side to move, with plies until the game ends (counting the
/// ending move). Deliberately the oracle's own type, not the fast solver's `Outcome`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Value {
    Win(u32),
    Loss(u32),
    Draw,
}

use Value::{Draw, Loss, Win};

impl Value {
    /// The value one ply earlier, for the side that made the move.
    fn parent(self) -> Value {
        match self {
            Win(n) => Loss(n + 1),
            Loss(n) => Win(n + 1),
            Draw => Draw,
        }
    }

    /// Preference order: faster wins, then draws, then slower losses.
    fn rank(self) -> i64 {
        match self {
            Win(n) => 1_000_000 - n as i64,
            Draw => 0,
            Loss(n) => -1_000_000 + n as i64,
        }
    }
}

/// The best option for the side to move; no option at all is a loss in 0.
fn best(options: impl Iterator<Item = Value>) -> Value {
    options.fold(Loss(0), |acc, v| if v.rank() > acc.rank() { v } else { acc })
}

/// What one move of a position leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    /// The game ends with this move: `Win(1)` (the opponent is down to start-2 pieces)
    /// or `Loss(1)` (suicide: the mover is).
    Ends(Value),
    /// The node (id) reached, seen from the opponent.
    Child(usize),
}

fn count(b: &ArrayBoard, c: Cell) -> usize {
    b.cells.iter().filter(|&&x| x == c).count()
}

/// All k-element subsets of `items`, in lexicographic order.
fn combinations(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        for mut rest in combinations(&items[i + 1..], k - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

fn binomial(n: usize, k: usize) -> usize {
    if k > n {
        return 0;
    }
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

struct Oracle {
    geom: Geometry,
    n: usize,
    start: usize,
    /// Canonical positions, ascending by code.
    boards: Vec<ArrayBoard>,
    codes: Vec<u64>,
    by_code: HashMap<u64, usize>,
    /// Node id of (position p, j) is `first_node[p] + j`, j in 0..=moves.
    first_node: Vec<usize>,
    /// Per position, one option per move in `moves()` order.
    options: Vec<Vec<Opt>>,
    /// Immediate-win ("checkmate") positions: the opponent has start-1 pieces and some
    /// move removes one of them.
    mate: Vec<bool>,
    /// Per node.
    values: Vec<Value>,
    /// Number of retrograde levels that decided something.
    levels: u32,
}

impl Oracle {
    fn build(n: u32, start: u32) -> Oracle {
        let clock = std::time::Instant::now();
        let geom = Geometry::new(n, start).expect("small geometry");
        let (n, start) = (n as usize, start as usize);
        let squares = n * n;

        // 1. Every placement; keep the canonical ones.
        let mut found: Vec<(u64, ArrayBoard)> = (0..squares)
            .into_par_iter()
            .flat_map_iter(|hole| {
                let mut found = Vec::new();
                let free: Vec<usize> = (0..squares).filter(|&s| s != hole).collect();
                for a in [start - 1, start] {
                    for mine in combinations(&free, a) {
                        let rest: Vec<usize> = free.iter().copied().filter(|s| !mine.contains(s)).collect();
                        for b in [start - 1, start] {
                            for theirs in combinations(&rest, b) {
                                let mut cells = vec![Cell::Empty; squares];
                                cells[hole] = Cell::Hole;
                                for &s in &mine {
                                    cells[s] = Cell::Player;
                                }
                                for &s in &theirs {
                                    cells[s] = Cell::Opponent;
                                }
                                let board = ArrayBoard { n, cells };
                                let code = board.code();
                                if code == board.canonical_code() {
                                    found.push((code, board));
                                }
                            }
                        }
                    }
                }
                found
            })
            .collect();
        found.sort_by_key(|(c, _)| *c);
        let codes: Vec<u64> = found.iter().map(|(c, _)| *c).collect();
        let boards: Vec<ArrayBoard> = found.into_iter().map(|(_, b)| b).collect();
        let by_code: HashMap<u64, usize> = codes.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        assert_eq!(by_code.len(), codes.len(), "canonical codes are distinct");

        // 2. Per position: its moves' results (canonical code, own lost, opponent lost).
        let results: Vec<Vec<(u64, usize, usize)>> = boards
            .par_iter()
            .map(|b| {
                b.moves()
                    .into_iter()
                    .map(|m| {
                        let (child, own, opp) = b.play(m);
                        (child.canonical_code(), own, opp)
                    })
                    .collect()
            })
            .collect();
        let mut first_node = Vec::with_capacity(boards.len());
        let mut total = 0;
        for r in &results {
            first_node.push(total);
            total += r.len() + 1;
        }

        // 3. The options of every move.
        let lost = start - 2;
        let mut options = Vec::with_capacity(boards.len());
        let mut mate = Vec::with_capacity(boards.len());
        for (p, b) in boards.iter().enumerate() {
            let mine = count(b, Cell::Player);
            let theirs = count(b, Cell::Opponent);
            let mut opts = Vec::new();
            for &(child, own, opp) in &results[p] {
                assert!(own + opp <= 1, "at most one piece falls per move");
                let c = || *by_code.get(&child).expect("a live child is a listed canonical position");
                let opt = if opp == 1 && theirs - 1 == lost {
                    Opt::Ends(Win(1))
                } else if own == 1 && mine - 1 == lost {
                    Opt::Ends(Loss(1))
                } else if opp == 1 || own == 1 {
                    // Removals cannot be undone: nothing is forbidden in the child.
                    Opt::Child(first_node[c()])
                } else {
                    // The child's forbidden move: its first move that leads back to an
                    // image of this position.
                    let ci = c();
                    let j = results[ci].iter().position(|r| r.0 == codes[p]).map_or(0, |i| i + 1);
                    Opt::Child(first_node[ci] + j)
                };
                opts.push(opt);
            }
            mate.push(theirs == start - 1 && results[p].iter().any(|r| r.2 == 1));
            options.push(opts);
        }

        let mut oracle =
            Oracle { geom, n, start, boards, codes, by_code, first_node, options, mate, values: Vec::new(), levels: 0 };
        let built = clock.elapsed();
        oracle.solve();
        eprintln!(
            "oracle {n}x{n} with {start} pieces: graph built in {built:.2?}, solved in {:.2?}",
            clock.elapsed() - built
        );
        oracle
    }

    fn node_count(&self) -> usize {
        self.first_node.last().map_or(0, |&f| f + self.options.last().map_or(0, |o| o.len()) + 1)
    }

    fn node(&self, p: usize, j: usize) -> usize {
        assert!(j <= self.options[p].len());
        self.first_node[p] + j
    }

    /// The options of node (p, j): all moves but move j.
    fn node_options(&self, p: usize, j: usize) -> impl Iterator<Item = Opt> + '_ {
        self.options[p].iter().enumerate().filter(move |(i, _)| i + 1 != j).map(|(_, &o)| o)
    }

    /// Retrograde by levels.
    fn solve(&mut self) {
        let mut val: Vec<Option<Value>> = vec![None; self.node_count()];
        // Level 0: a node with no option at all cannot move and has lost.
        for p in 0..self.boards.len() {
            for j in 0..=self.options[p].len() {
                if !self.mate[p] && self.node_options(p, j).next().is_none() {
                    val[self.node(p, j)] = Some(Loss(0));
                }
            }
        }
        // Level d decides Win(d) (an option is a win in d) and Loss(d) (every option is
        // a known loss, the slowest in d), judging only by nodes decided below level d.
        // A win in d needs a child decided at level d-1 (or d = 1), and so does a loss
        // whose slowest option takes d plies (a node whose options were all known losses
        // earlier was decided at the level of its slowest one). So level d only needs to
        // look at positions with a move into a node decided at level d-1 (level 1 looks
        // at all), and once a level decides nothing, no later level can: stop there.
        let mut into: Vec<(usize, usize)> = Vec::new(); // (child node, parent position)
        for (p, opts) in self.options.iter().enumerate() {
            for opt in opts {
                if let Opt::Child(c) = *opt {
                    into.push((c, p));
                }
            }
        }
        into.sort_unstable();
        into.dedup();
        let parents_of = |c: usize| {
            let lo = into.partition_point(|&(x, _)| x < c);
            let hi = into.partition_point(|&(x, _)| x <= c);
            into[lo..hi].iter().map(|&(_, p)| p)
        };
        let mut candidates: Vec<usize> = (0..self.boards.len()).collect();
        let mut d = 1;
        loop {
            let mut decided = Vec::new();
            for &p in &candidates {
                for j in 0..=self.options[p].len() {
                    let id = self.node(p, j);
                    if val[id].is_some() {
                        continue;
                    }
                    if self.mate[p] {
                        assert_eq!(d, 1, "immediate wins are decided at level 1");
                        decided.push((id, Win(1)));
                        continue;
                    }
                    let (mut win, mut all_lost, mut slowest) = (false, true, 0);
                    for opt in self.node_options(p, j) {
                        let v = match opt {
                            Opt::Ends(v) => Some(v),
                            Opt::Child(c) => val[c].map(Value::parent),
                        };
                        match v {
                            Some(Win(k)) => {
                                assert_eq!(k, d, "a faster win would have been found at level {k}");
                                win = true;
                            }
                            Some(Loss(k)) => slowest = slowest.max(k),
                            Some(Draw) => unreachable!("no draws while solving"),
                            None => all_lost = false,
                        }
                    }
                    if win {
                        decided.push((id, Win(d)));
                    } else if all_lost {
                        assert_eq!(slowest, d, "a loss is decided at the level of its slowest option");
                        decided.push((id, Loss(d)));
                    }
                }
            }
            if decided.is_empty() {
                break;
            }
            candidates.clear();
            for &(id, v) in &decided {
                val[id] = Some(v);
                candidates.extend(parents_of(id));
            }
            candidates.sort_unstable();
            candidates.dedup();
            self.levels = d;
            d += 1;
        }
        self.values = val.into_iter().map(|v| v.unwrap_or(Draw)).collect();
    }

    fn value(&self, p: usize, j: usize) -> Value {
        self.values[self.node(p, j)]
    }

    fn option_value(&self, opt: Opt) -> Value {
        match opt {
            Opt::Ends(v) => v,
            Opt::Child(c) => self.values[c].parent(),
        }
    }

    fn phase(&self, p: usize) -> (usize, usize) {
        (count(&self.boards[p], Cell::Player), count(&self.boards[p], Cell::Opponent))
    }

    fn position(&self, p: usize) -> Position {
        self.boards[p].to_position()
    }

    fn board_text(&self, p: usize) -> String {
        ostledb::game::notation::format_board(&self.geom, &self.position(p))
    }

    /// Wins, losses and draws over all nodes.
    fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for v in &self.values {
            match v {
                Win(_) => t.0 += 1,
                Loss(_) => t.1 += 1,
                Draw => t.2 += 1,
            }
        }
        t
    }

    /// Nodes that some move of some position leads to (the source's own forbidden move
    /// ignored).
    fn non_trivial(&self) -> HashSet<usize> {
        self.options.iter().flatten().filter_map(|o| if let Opt::Child(c) = o { Some(*c) } else { None }).collect()
    }

    fn report(&self) {
        let reached = self.non_trivial();
        for p in 0..self.boards.len() {
            for j in 0..=self.options[p].len() {
                if matches!(self.value(p, j), Loss(0) | Loss(1)) {
                    let reached = if reached.contains(&self.node(p, j)) { "" } else { "not " };
                    eprintln!(
                        "forced loss: {} j={j} is {:?} ({reached}reached by a move)",
                        self.board_text(p),
                        self.value(p, j)
                    );
                }
            }
        }
        let (w, l, d) = self.tally();
        let mut phases: Vec<((usize, usize), usize)> = Vec::new();
        for p in 0..self.boards.len() {
            let ph = self.phase(p);
            match phases.iter_mut().find(|(q, _)| *q == ph) {
                Some(e) => e.1 += 1,
                None => phases.push((ph, 1)),
            }
        }
        phases.sort();
        let longest_win = self.values.iter().filter_map(|v| if let Win(n) = v { Some(*n) } else { None }).max();
        let suicides = self.values.iter().filter(|&&v| v == Loss(1)).count();
        let stuck = self.values.iter().filter(|&&v| v == Loss(0)).count();
        let longest_loss = self.values.iter().filter_map(|v| if let Loss(n) = v { Some(*n) } else { None }).max();
        let initial = self.by_code[&ArrayBoard::from_position(self.n, &Position::initial(&self.geom)).canonical_code()];
        eprintln!(
            "oracle {}x{} with {} pieces: {} canonical positions {:?}, {} immediate-win positions, {} nodes \
             ({} non-trivial): {} wins, {} losses, {} draws; longest win {:?}, longest loss {:?}, {} levels; {} nodes lose in 1 (forced suicide), {} in 0 (no move); \
             initial position {} (canonical {}) is {:?}",
            self.n,
            self.n,
            self.start,
            self.boards.len(),
            phases,
            self.mate.iter().filter(|&&m| m).count(),
            self.values.len(),
            reached.len(),
            w,
            l,
            d,
            longest_win,
            longest_loss,
            self.levels,
            suicides,
            stuck,
            ostledb::game::notation::format_board(&self.geom, &Position::initial(&self.geom)),
            self.board_text(initial),
            self.value(initial, 0),
        );
    }
}

fn oracle_3x3() -> &'static Oracle {
    static O: OnceLock<Oracle> = OnceLock::new();
    O.get_or_init(|| Oracle::build(3, 3))
}

fn oracle_4x4() -> &'static Oracle {
    static O: OnceLock<Oracle> = OnceLock::new();
    O.get_or_init(|| Oracle::build(4, 3))
}

fn small_oracles() -> [&'static Oracle; 2] {
    [oracle_3x3(), oracle_4x4()]
}

// ---------------------------------------------------------------------------------------
// Self-checks of the oracle.
// ---------------------------------------------------------------------------------------

/// Every node's value equals the best of its options' values (with the immediate-win
/// rule), draws included: a draw has no winning option and some drawing option.
///
/// This proves the solution right independently of the level loop: an assignment
/// satisfying these equations with finite distances is unique. By induction on n, a node
/// assigned Win(n) has an option Loss(n-1) leading towards a forced end, a node assigned
/// Loss(n) has only options ending within n plies, and conversely every true win or loss
/// in n is assigned exactly that; so only true draws are left as draws.
fn check_minimax_equations(o: &Oracle) {
    let mut bad = 0;
    for p in 0..o.boards.len() {
        for j in 0..=o.options[p].len() {
            let want = if o.mate[p] { Win(1) } else { best(o.node_options(p, j).map(|opt| o.option_value(opt))) };
            let got = o.value(p, j);
            if got != want {
                bad += 1;
                if bad <= 5 {
                    eprintln!("node {} j={j}: solved {got:?}, re-derived {want:?}", o.board_text(p));
                }
            }
        }
    }
    assert_eq!(bad, 0, "{bad} nodes disagree with their options");
}

#[test]
fn oracle_values_satisfy_the_minimax_equations() {
    for o in small_oracles() {
        check_minimax_equations(o);
    }
}

/// Number of symmetry classes of positions per phase (a, b), by Burnside's lemma: the
/// average over the 8 symmetries of the placements each leaves fixed. A placement is
/// fixed when it is constant on every cycle of the symmetry's square permutation.
fn burnside_counts(n: usize, start: usize) -> HashMap<(usize, usize), usize> {
    let squares = n * n;
    let mut perms: Vec<Vec<usize>> = Vec::new();
    for rotate in 0..4 {
        for mirror in [false, true] {
            let perm = (0..squares)
                .map(|s| {
                    let (mut r, mut c) = (s / n, s % n);
                    if mirror {
                        c = n - 1 - c;
                    }
                    for _ in 0..rotate {
                        // A quarter turn.
                        (r, c) = (c, n - 1 - r);
                    }
                    r * n + c
                })
                .collect();
            perms.push(perm);
        }
    }
    let mut out = HashMap::new();
    for a in [start - 1, start] {
        for b in [start - 1, start] {
            let mut fixed_total = 0;
            for perm in &perms {
                let mut seen = vec![false; squares];
                let mut cycles = Vec::new();
                for s in 0..squares {
                    let mut len = 0;
                    let mut t = s;
                    while !seen[t] {
                        seen[t] = true;
                        t = perm[t];
                        len += 1;
                    }
                    if len > 0 {
                        cycles.push(len);
                    }
                }
                // ways[h][x][y]: colourings of the cycles so far with h hole squares,
                // x player and y opponent pieces.
                let mut ways = vec![vec![vec![0usize; b + 1]; a + 1]; 2];
                ways[0][0][0] = 1;
                for &len in &cycles {
                    let mut next = ways.clone();
                    for h in 0..2 {
                        for x in 0..=a {
                            for y in 0..=b {
                                let w = ways[h][x][y];
                                if w == 0 {
                                    continue;
                                }
                                if h + len <= 1 {
                                    next[h + len][x][y] += w;
                                }
                                if x + len <= a {
                                    next[h][x + len][y] += w;
                                }
                                if y + len <= b {
                                    next[h][x][y + len] += w;
                                }
                            }
                        }
                    }
                    ways = next;
                }
                fixed_total += ways[1][a][b];
            }
            assert_eq!(fixed_total % 8, 0);
            out.insert((a, b), fixed_total / 8);
        }
    }
    out
}

#[test]
fn oracle_enumerates_every_symmetry_class_once() {
    for o in small_oracles() {
        let squares = o.n * o.n;
        let burnside = burnside_counts(o.n, o.start);
        let mut counted: HashMap<(usize, usize), usize> = HashMap::new();
        let mut images = 0;
        for p in 0..o.boards.len() {
            *counted.entry(o.phase(p)).or_default() += 1;
            let distinct: HashSet<u64> = (0..8).map(|k| o.boards[p].image(k).code()).collect();
            images += distinct.len();
        }
        assert_eq!(counted, burnside, "{}x{}: canonical positions per phase", o.n, o.n);
        // The classes' images cover every placement exactly once.
        let placements: usize = [o.start - 1, o.start]
            .iter()
            .flat_map(|&a| [o.start - 1, o.start].map(|b| (a, b)))
            .map(|(a, b)| squares * binomial(squares - 1, a) * binomial(squares - 1 - a, b))
            .sum();
        assert_eq!(images, placements);
        assert_eq!(counted[&(o.start - 1, o.start)], counted[&(o.start, o.start - 1)]);
        for (p, &c) in o.codes.iter().enumerate() {
            assert_eq!(o.by_code[&c], p);
        }
    }
}

/// Win(1) and Loss(1), recomputed straight from the rules for every node: a win in one
/// is exactly a position whose opponent is down to start-1 pieces and which has a move
/// that removes an opponent piece; a loss in one is a node whose every allowed move
/// drops the mover's own piece while it is down to start-1 pieces.
#[test]
fn oracle_decides_one_ply_ends_exactly_as_the_rules_say() {
    for o in small_oracles() {
        let mut wins = 0;
        for (p, b) in o.boards.iter().enumerate() {
            let plays: Vec<(usize, usize)> = b.moves().into_iter().map(|m| (b.play(m).1, b.play(m).2)).collect();
            let mine = count(b, Cell::Player);
            let theirs = count(b, Cell::Opponent);
            let checkmate = theirs == o.start - 1 && plays.iter().any(|&(_, opp)| opp == 1);
            assert_eq!(checkmate, o.mate[p]);
            for j in 0..=plays.len() {
                let allowed: Vec<(usize, usize)> =
                    plays.iter().enumerate().filter(|(i, _)| i + 1 != j).map(|(_, &x)| x).collect();
                let suicide_only =
                    !allowed.is_empty() && mine == o.start - 1 && allowed.iter().all(|&(own, _)| own == 1);
                let v = o.value(p, j);
                assert_eq!(v == Win(1), checkmate, "{} j={j}: {v:?}", o.board_text(p));
                assert_eq!(v == Loss(1), !checkmate && suicide_only, "{} j={j}: {v:?}", o.board_text(p));
                wins += usize::from(v == Win(1));
            }
        }
        assert!(wins > 0);
    }
}

/// The forbidden move of a child node undoes the move that led there: playing it from the
/// child gives back an image of the parent, and no earlier move of the child does.
#[test]
fn oracle_child_nodes_forbid_the_first_move_back() {
    for o in small_oracles() {
        let mut forbidden = 0;
        // Per position, the canonical codes its moves lead to (computed when first needed).
        let mut results: Vec<Option<Vec<u64>>> = vec![None; o.boards.len()];
        for (p, b) in o.boards.iter().enumerate() {
            for (m, opt) in b.moves().into_iter().zip(&o.options[p]) {
                let (child, own, opp) = b.play(m);
                let Opt::Child(id) = *opt else { continue };
                let c = o.by_code[&child.canonical_code()];
                let j = id - o.first_node[c];
                let back = results[c].get_or_insert_with(|| {
                    o.boards[c].moves().into_iter().map(|cm| o.boards[c].play(cm).0.canonical_code()).collect()
                });
                if own + opp == 1 {
                    assert_eq!(j, 0, "nothing is forbidden after a removal");
                } else if j == 0 {
                    assert!(!back.contains(&o.codes[p]));
                } else {
                    forbidden += 1;
                    assert_eq!(back[j - 1], o.codes[p]);
                    assert!(!back[..j - 1].contains(&o.codes[p]));
                }
            }
        }
        assert!(forbidden > 0);
    }
}

#[test]
fn oracle_finds_wins_losses_and_draws_on_4x4() {
    oracle_3x3().report();
    let o = oracle_4x4();
    o.report();
    let (w, l, d) = o.tally();
    assert!(w > 0 && l > 0 && d > 0, "wins {w}, losses {l}, draws {d}");
    assert!(o.values.iter().any(|v| matches!(v, Loss(n) if *n > 1)), "some loss is not a suicide");
    assert_eq!(o.values.len(), o.node_count());
}

/// The self-checks and the differential test on 4x4 with four pieces a side (slow:
/// about two million positions).
#[test]
#[cfg_attr(debug_assertions, ignore = "slow in debug; cargo test --release runs it")]
fn oracle_and_fast_solver_agree_on_4x4_with_four_pieces() {
    let o = Oracle::build(4, 4);
    o.report();
    check_minimax_equations(&o);
    let (w, l, d) = o.tally();
    assert!(w > 0 && l > 0 && d > 0, "wins {w}, losses {l}, draws {d}");
    assert_fast_solver_agrees(&o, 2 * o.start as u32, &PLAIN_KINDS);
}

// ---------------------------------------------------------------------------------------
// Differential test: the fast solver (src/solve) against the oracle, on every node.
// It uses only the fast solver's public API: `ostledb::solve::solve(&geom, max_pieces,
// &SolveOptions::default())` and `Solution::node(&canonical_position, j) -> Outcome`.
// ---------------------------------------------------------------------------------------

fn to_outcome(v: Value) -> ostledb::record::Outcome {
    match v {
        Win(n) => ostledb::record::Outcome::Win(n),
        Loss(n) => ostledb::record::Outcome::Loss(n),
        Draw => ostledb::record::Outcome::Draw,
    }
}

/// The kinds of node, to tell apart in a failure summary.
const KINDS: [&str; 4] = [
    "nothing forbidden",
    "forbids a move that removes nothing, some move leads here",
    "forbids a move that removes nothing, no move leads here",
    "forbids a move that removes a piece (not a node: forbidden moves never remove)",
];

fn describe_move(m: ostledb::game::naive::NaiveMove) -> String {
    let dir = match m.1 {
        (-1, 0) => "up",
        (1, 0) => "down",
        (0, -1) => "left",
        _ => "right",
    };
    match m.0 {
        Some((r, c)) => format!("piece at row {r} col {c} {dir}"),
        None => format!("hole {dir}"),
    }
}

/// Compare every node of the given kinds (indices into [`KINDS`]) of the positions with
/// at most `max_pieces` pieces; print and return the number of mismatches and a summary.
fn compare_with_fast_solver(o: &Oracle, max_pieces: u32, kinds: &[usize]) -> (usize, String) {
    let solution = ostledb::solve::solve(&o.geom, max_pieces, &ostledb::solve::SolveOptions::default())
        .expect("the fast solver solves a small board");
    let reached = o.non_trivial();
    let (mut checked, mut bad) = ([0usize; 4], [0usize; 4]);
    // Mismatches where the fast solver gave the value of the same position with nothing
    // forbidden (a hint at the cause).
    let mut as_if_unforbidden = 0;
    for p in 0..o.boards.len() {
        let (a, b) = o.phase(p);
        if (a + b) as u32 > max_pieces {
            continue;
        }
        let pos = o.position(p);
        let moves = o.boards[p].moves();
        for j in 0..=moves.len() {
            let kind = if j == 0 {
                0
            } else {
                let (_, own, opp) = o.boards[p].play(moves[j - 1]);
                if own + opp > 0 {
                    3
                } else if reached.contains(&o.node(p, j)) {
                    1
                } else {
                    2
                }
            };
            if !kinds.contains(&kind) {
                continue;
            }
            // A node no move leads to does not exist: no game can ask for it, and the
            // solver (like the store) answers it with the value of nothing forbidden.
            let want = to_outcome(o.value(p, if kind == 2 { 0 } else { j }));
            let got = solution.node(&pos, j);
            checked[kind] += 1;
            if got != want {
                bad[kind] += 1;
                as_if_unforbidden += usize::from(got == to_outcome(o.value(p, 0)));
                if bad.iter().sum::<usize>() <= 10 {
                    let forbidden = if j == 0 { "nothing".to_string() } else { describe_move(moves[j - 1]) };
                    eprintln!(
                        "{}x{} max {max_pieces}: node {} (code {}) j={j} ({} forbidden; {}): fast solver {got:?}, oracle {want:?} (oracle with nothing forbidden: {:?})",
                        o.n,
                        o.n,
                        o.board_text(p),
                        o.codes[p],
                        forbidden,
                        KINDS[kind],
                        o.value(p, 0),
                    );
                }
            }
        }
    }
    assert!(kinds.iter().all(|&k| checked[k] > 0), "every kind of node is compared");
    let summary: Vec<String> =
        kinds.iter().map(|&k| format!("{}: {} of {} differ", KINDS[k], bad[k], checked[k])).collect();
    let mut summary = format!("{}x{} max {max_pieces}: {}", o.n, o.n, summary.join("; "));
    if bad.iter().sum::<usize>() > 0 {
        summary +=
            &format!(" ({as_if_unforbidden} of the differing values are the oracle's value with nothing forbidden)");
    }
    eprintln!("{summary}");
    (bad.iter().sum(), summary)
}

fn assert_fast_solver_agrees(o: &Oracle, max_pieces: u32, kinds: &[usize]) {
    let (bad, summary) = compare_with_fast_solver(o, max_pieces, kinds);
    assert_eq!(bad, 0, "{summary}");
}

/// Nodes that a game can reach, or that forbid a move which removes nothing.
const PLAIN_KINDS: [usize; 3] = [0, 1, 2];

#[test]
fn fast_solver_agrees_with_bruteforce_on_every_plain_node_3x3() {
    let o = oracle_3x3();
    assert_fast_solver_agrees(o, 2 * o.start as u32, &PLAIN_KINDS);
}

#[test]
fn fast_solver_agrees_with_bruteforce_on_every_plain_node_4x4() {
    let o = oracle_4x4();
    assert_fast_solver_agrees(o, 2 * o.start as u32, &PLAIN_KINDS);
}

/// Piece counts never grow, so solving only the phases with fewer pieces must give the
/// same values there as the whole game.
#[test]
fn fast_solver_partial_games_agree_with_bruteforce_4x4() {
    let o = oracle_4x4();
    for max in [2 * o.start as u32 - 2, 2 * o.start as u32 - 1] {
        assert_fast_solver_agrees(o, max, &PLAIN_KINDS);
    }
}
