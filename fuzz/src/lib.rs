//! What the fuzz targets share: the geometries they parse boards on, the checks every
//! parsed board must pass, and a small solved database (3x3 board, 3 pieces a side, every
//! phase up to 6 pieces, every default backend's key index, a stored BFS) built once per
//! process in a temporary directory, with the solver's in-memory solution as its oracle.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ostledb::game::forbidden::{forbidden_move, node_index, published_node_index};
use ostledb::game::moves::{Removal, moves, play};
use ostledb::game::naive::ArrayBoard;
use ostledb::game::notation::{base64_to_code, code_to_base64, format_board, parse_board};
use ostledb::game::symmetry::{canonical, canonical_code, is_canonical};
use ostledb::game::{Geometry, Position};
use ostledb::index::GameIndex;
use ostledb::solve::SolveOptions;
use ostledb::solve::retrograde::{Solution, solve, solve_into};
use ostledb::store::keys::Backend;
use ostledb::working::pack::{PackOptions, pack};
use ostledb::store::values::WriteOptions;

/// The board every target starts from: 3x3, 3 pieces a side, up to 6 pieces.
pub const SIDE: u32 = 3;
/// Pieces per side at the start of the small board.
pub const START: u32 = 3;
/// The small database holds every phase with at most this many pieces.
pub const MAX_PIECES: u32 = 6;

/// The geometries a board target parses on, chosen by the input's first byte: the real
/// 5x5 board, and the small boards the tests solve (4x4 with 4 and 3 pieces, 3x3).
pub fn geometry(selector: u8) -> &'static Geometry {
    static SMALL: OnceLock<[Geometry; 3]> = OnceLock::new();
    let small = SMALL.get_or_init(|| {
        [Geometry::new(4, 4).unwrap(), Geometry::new(4, 3).unwrap(), Geometry::new(SIDE, START).unwrap()]
    });
    match selector % 4 {
        0 => Geometry::standard(),
        k => &small[k as usize - 1],
    }
}

/// The position index of every phase of a geometry (built once per geometry).
pub fn index_of(g: &Geometry) -> &'static GameIndex {
    static INDEXES: OnceLock<Vec<(u32, u32, GameIndex)>> = OnceLock::new();
    let all = INDEXES.get_or_init(|| {
        (0..4)
            .map(|k| {
                let g = geometry(k);
                (g.side(), g.start_pieces(), GameIndex::build(g, 2 * g.start_pieces()).unwrap())
            })
            .collect()
    });
    &all.iter().find(|(n, s, _)| (*n, *s) == (g.side(), g.start_pieces())).expect("a fuzzed geometry").2
}

/// Everything that must hold of a board `parse_board` accepted: it validates, prints
/// and parses back to itself, its code and base-64 code round-trip, its canonical form
/// agrees with the naive one, is canonical and idempotent, and the position index maps
/// it to the index of its canonical form, which unranks to that form.
pub fn check_board(g: &Geometry, pos: &Position) {
    pos.validate(g).expect("a parsed board is a valid position");
    let text = format_board(g, pos);
    assert_eq!(parse_board(g, &text).expect("a printed board parses"), *pos, "{text}");
    assert_eq!(format_board(g, &parse_board(g, &text.replace('-', "")).unwrap()), text);
    assert_eq!(Position::from_code(pos.code()), *pos, "{text}: code round trip");
    let b64 = code_to_base64(pos.code());
    assert_eq!(base64_to_code(&b64).unwrap(), pos.code(), "{text}: base 64 round trip");
    let (canon, k) = canonical(g, pos);
    assert_eq!(pos.transformed(g, k), canon, "{text}: the canonical symmetry");
    assert!(is_canonical(g, &canon), "{text}");
    assert_eq!(canonical(g, &canon).0, canon, "{text}: canonical form is idempotent");
    assert_eq!(canonical_code(g, pos), canon.code(), "{text}");
    let naive = ArrayBoard::from_position(g.side() as usize, pos);
    assert_eq!(naive.to_position(), *pos, "{text}");
    assert_eq!(naive.canonical_code(), canon.code(), "{text}: the naive canonical code");
    for k in 0..8 {
        assert_eq!(canonical(g, &pos.transformed(g, k)).0, canon, "{text}: image {k}");
    }
    let index = index_of(g);
    let phase = index.phase(pos.phase()).expect("a live position's phase is indexed");
    let i = phase.index_of(pos);
    assert!(i < phase.len(), "{text}: index {i} of {}", phase.len());
    assert_eq!(phase.position_at(i), canon, "{text}: unrank(rank) is the canonical form");
}

/// Everything that must hold of a board and the board before it: when `previous` leads
/// to `pos`, its undo move (if any) is a move of `pos` that recreates `previous`, and the
/// node index of that undo is the published node index.
pub fn check_prev(g: &Geometry, pos: &Position, previous: &Position) {
    match forbidden_move(g, pos, previous) {
        Ok(undo) => {
            assert!(
                moves(g, previous).iter().any(|m| play(g, previous, *m).is_some_and(|r| r.child == *pos)),
                "forbidden_move accepted a previous board that does not lead here"
            );
            let (canon, _) = canonical(g, pos);
            let published = published_node_index(g, &canon, previous);
            if let Some(u) = undo {
                assert!(moves(g, pos).contains(&u), "the undo move is a move of the board");
                let r = play(g, pos, u).expect("a listed move plays");
                assert_eq!(r.child, *previous, "the undo move recreates the previous board");
                assert_eq!(r.removal, Removal::None);
                let j = node_index(g, pos, &canon, undo);
                assert!(j > 0, "an exact undo is a forbidden index");
                assert_eq!(j, published, "the exact node index is the published one");
            }
            assert!(published <= moves(g, &canon).len());
        }
        Err(e) => {
            assert!(
                !moves(g, previous).iter().any(|m| play(g, previous, *m).is_some_and(|r| r.child == *pos)),
                "a predecessor refused: {e}"
            );
        }
    }
}

/// The small solved database, its oracle, and the files a fuzz input may replace.
pub struct Template {
    /// The database directory.
    pub dir: PathBuf,
    /// The board.
    pub geom: Geometry,
    /// The same board solved in memory.
    pub solution: Solution,
}

/// The backends the template has key indexes for; the first is the default.
pub fn template_backends() -> Vec<Backend> {
    let mut v = vec![Backend::Sorted, Backend::Rank];
    v.extend(Backend::available().into_iter().filter(|b| *b == Backend::Hash));
    v
}

/// Build the small database in `dir` (which must not exist): solve, pack with every
/// default backend in blocks of 64 positions (so each phase has several), store the BFS.
pub fn build_database(dir: &Path) -> Geometry {
    let g = Geometry::new(SIDE, START).unwrap();
    let opts = SolveOptions { dir: Some(dir.to_path_buf()), ..SolveOptions::default() };
    solve_into(&g, MAX_PIECES, &opts, |_| Ok(())).expect("solve the template");
    let p = PackOptions {
        values: WriteOptions { block: 64, level: 3, ..WriteOptions::default() },
        backends: template_backends(),
        keep_work: false,
        records: None,
    };
    pack(dir, &g, MAX_PIECES, &p, |_| {}).expect("pack the template");
    let report = ostledb::solve::bfs::bfs_layers(
        &g,
        ostledb::game::node::Convention::Published,
        255,
        u64::MAX,
        &ostledb::progress::Silent,
    );
    let layers: Vec<&[u64]> = (0..=report.nodes.max_depth()).filter_map(|d| report.nodes.layer(d)).collect();
    let complete = matches!(report.stop, ostledb::solve::bfs::Stop::Exhausted);
    ostledb::bfs_depths::node_keys::write(dir, &g, ostledb::game::node::Convention::Published, true, complete, &layers)
        .expect("store the template's BFS");
    g
}

/// The template, built at first use in a temporary directory of this process.
pub fn template() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ostledb-fuzz-{}", std::process::id())).join("template");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
        let geom = build_database(&dir);
        let solution = solve(&geom, MAX_PIECES, &SolveOptions::default()).expect("solve in memory");
        Template { dir, geom, solution }
    })
}

/// The files of a database a fuzz input may replace, relative to its directory: the
/// metadata, the stored BFS, and every value and key file of the current generation,
/// in name order.
pub fn database_files(dir: &Path) -> Vec<PathBuf> {
    let data = ostledb::store::directory::current_data_dir(dir).unwrap();
    let gen_dir = data.strip_prefix(dir).unwrap().to_path_buf();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_file())
        .map(|e| gen_dir.join(e.file_name()))
        .collect();
    v.sort();
    let mut out = vec![PathBuf::from(ostledb::store::meta::FILE), PathBuf::from("bfs-published.zst")];
    out.extend(v);
    out
}

/// Copy the database directory `from` (its metadata, BFS and current generation) to `to`.
pub fn copy_database(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    for rel in database_files(from) {
        let dst = to.join(&rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&rel), &dst).unwrap();
    }
}
