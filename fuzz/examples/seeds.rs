//! Writes the seed corpus of every target into `fuzz/corpus/<target>/` (run from `fuzz/`:
//! `cargo run --release --example seeds`): real boards of every fuzzed geometry, real move
//! lists, real `query -` lines, the files of the small database with the input forms the
//! `database` target reads, and real published lines. Deterministic: the same files each
//! run, so the committed corpus is reproducible.

use std::path::Path;

use ostledb::game::moves::{Removal, moves, play, unmoves};
use ostledb::game::notation::{format_board, format_move};
use ostledb::game::{Geometry, Position};
use ostledb::Database;
use ostledb_fuzz::{geometry, index_of, template};

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new("corpus").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// A few positions of every phase of `g`, spread over the index, each in some orientation.
fn sample(g: &Geometry, per_phase: u64) -> Vec<Position> {
    let mut out = Vec::new();
    for p in index_of(g).phases() {
        let step = (p.len() / per_phase).max(1);
        for i in (0..p.len()).step_by(step as usize).take(per_phase as usize) {
            out.push(p.position_at(i * 7 % p.len()).transformed(g, (i % 8) as usize));
        }
    }
    out
}

/// A predecessor of `pos` (the board before the opponent's last move), if any.
fn previous(g: &Geometry, pos: &Position, pick: usize) -> Option<Position> {
    let mut all = Vec::new();
    unmoves(g, pos, |u| all.push(u.pred));
    (!all.is_empty()).then(|| all[pick % all.len()])
}

/// Up to `n` moves from `pos`, each the `pick`-th legal one that keeps the game going.
fn walk(g: &Geometry, pos: &Position, n: usize, pick: usize) -> Vec<String> {
    let mut cur = *pos;
    let mut out = Vec::new();
    for k in 0..n {
        let list: Vec<_> = moves(g, &cur)
            .iter()
            .copied()
            .filter(|m| play(g, &cur, *m).is_some_and(|r| r.removal == Removal::None))
            .collect();
        if list.is_empty() {
            break;
        }
        let m = list[(pick + 3 * k) % list.len()];
        out.push(format_move(g, m));
        cur = play(g, &cur, m).unwrap().child;
    }
    out
}

fn board_and_moves() {
    let standard = [
        "22222-00000-00300-00000-11111",
        "22220-00000-00300-00000-11110",
        "00100-11200-00001-31022-20020,00000-22200-00102-32011-10010",
        "2222200000003000000011111",
        "22222-00000-00330-00000-11110",
    ];
    for (i, s) in standard.iter().enumerate() {
        write("board", &format!("readme-{i}"), &[&[0u8][..], s.as_bytes()].concat());
    }
    for sel in 0..4u8 {
        let g = geometry(sel);
        for (i, pos) in sample(g, 2).iter().enumerate().take(5) {
            let mut text = format_board(g, pos);
            if i % 2 == 1 {
                text = text.replace('-', "");
            }
            if let Some(q) = previous(g, pos, i) {
                if i % 3 != 2 {
                    text = format!("{text},{}", format_board(g, &q));
                }
                let moves = walk(g, pos, 1 + i % 4, i).join(",");
                let m = format!("{}\n{}\n{moves}", format_board(g, pos), format_board(g, &q));
                write("moves", &format!("g{sel}-{i}"), &[&[sel][..], m.as_bytes()].concat());
            }
            write("board", &format!("g{sel}-{i}"), &[&[sel][..], text.as_bytes()].concat());
        }
    }
    write("moves", "readme", b"\x0022220-00000-00300-00000-11110\n\nhole-up,c1-up,HOLE-L");
}

fn query_lines(db: &Database) {
    let g = db.geometry();
    let mut all = String::new();
    for (i, pos) in sample(g, 3).iter().enumerate() {
        let line = match previous(g, pos, i) {
            Some(q) if i % 2 == 0 => format!("{}, {}", format_board(g, pos), format_board(g, &q)),
            _ => format_board(g, pos),
        };
        write("query_line", &format!("line-{i}"), line.as_bytes());
        all.push_str(&line);
        all.push('\n');
    }
    all.push_str("# a comment\n\n   \n");
    write("query_line", "several", all.as_bytes());
}

fn database() {
    let t = template();
    let files = ostledb_fuzz::database_files(&t.dir);
    for (f, rel) in files.iter().enumerate() {
        let bytes = std::fs::read(t.dir.join(rel)).unwrap();
        let name = rel.file_name().unwrap().to_string_lossy().to_string();
        let f = f as u8;
        // Unchanged, opened with each backend in turn (the first five files).
        if f < 5 {
            write("database", &format!("{name}-same"), &[f, (f % 5) << 3]);
        }
        // One byte changed, checksums left (damage) and recomputed.
        let at = (bytes.len() as u32 / 3).to_le_bytes();
        write("database", &format!("{name}-flip"), &[&[f, 0][..], &at, &[0x5a]].concat());
        write("database", &format!("{name}-flip-fixed"), &[&[f, 4 | 1 << 3][..], &at, &[0x5a]].concat());
        // The whole file, as it is (the replace form), for one file of each kind.
        let first = ["ostledb.meta", "values-2-2.zst", "keys-2-2.sorted", "keys-2-2.hash"];
        if first.contains(&name.as_str()) {
            write("database", &format!("{name}-whole"), &[&[f, 1 | 2 << 3][..], &bytes].concat());
        }
        // Block 0 decoded, to be put back compressed (value and BFS files).
        if name.starts_with("values-") {
            let v = ostledb::store::values::ValueFile::open(
                &ostledb::store::directory::current_data_dir(&t.dir).unwrap(),
                &t.geom,
                phase_of(&name),
                index_of(&t.geom).phase(phase_of(&name)).unwrap().len(),
            )
            .unwrap();
            let block = ostledb::store::cache::encode_block(&v.block(0).unwrap());
            write("database", &format!("{name}-block0"), &[&[f, 2 | 4 | 3 << 3, 0][..], &block].concat());
        }
        if name.starts_with("bfs-") {
            let off = u64::from_le_bytes(bytes[80 + 8..80 + 16].try_into().unwrap());
            let at = u64::from_le_bytes(bytes[40..48].try_into().unwrap()) as usize;
            let clen = u32::from_le_bytes(bytes[at + 16..at + 20].try_into().unwrap()) as usize;
            let count = u32::from_le_bytes(bytes[at + 20..at + 24].try_into().unwrap()) as u16;
            let _ = off;
            let frame = &bytes[80..80 + clen];
            let decoded = zstd::decode_all(frame).unwrap();
            write(
                "database",
                &format!("{name}-block0"),
                &[&[f, 2 | 4 | 4 << 3, 0][..], &count.to_le_bytes(), &decoded].concat(),
            );
        }
    }
    // A deep verify of the unchanged database.
    write("database", "deep", &[0, 0x80]);
}

fn phase_of(name: &str) -> ostledb::game::Phase {
    let rest = name.strip_prefix("values-").unwrap().strip_suffix(".zst").unwrap();
    let (a, b) = rest.split_once('-').unwrap();
    ostledb::game::Phase { player: a.parse().unwrap(), opponent: b.parse().unwrap() }
}

fn published(db: &Database) {
    let out = std::env::temp_dir().join(format!("ostledb-fuzz-seeds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let opts = ostledb::published::export::ExportOptions::default();
    ostledb::published::export::export(db, &opts, Some(&out), &ostledb::progress::Silent).unwrap();
    let mut lines = Vec::new();
    for e in std::fs::read_dir(&out).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        lines.extend(text.lines().map(str::to_string));
    }
    lines.sort();
    let _ = std::fs::remove_dir_all(&out);
    let step = (lines.len() / 12).max(1);
    for (i, l) in lines.iter().step_by(step).enumerate() {
        write("published", &format!("line-{i}"), &[&[0u8][..], l.as_bytes()].concat());
    }
    write("published", "readme", b"\x00MAAA+f,checkmate\nPABgTkBU,12,,13,,,,,,,,,,,,,,,,,,,,,,\r\n");
    // Lines written from a code and a record: the 5x5 start and two positions of the README.
    let g = Geometry::standard();
    for (i, b) in ["22222-00000-00300-00000-11111", "00100-11200-00001-31022-20020", "22220-00000-00300-00000-11110"]
        .iter()
        .enumerate()
    {
        let pos = ostledb::game::notation::parse_board(g, b).unwrap();
        let record = ostledb::record::Packed::new(12, 3, 13).0;
        write(
            "published",
            &format!("write-{i}"),
            &[&[1u8][..], &pos.code().to_le_bytes(), &record.to_le_bytes()].concat(),
        );
    }
}

fn main() {
    board_and_moves();
    let t = template();
    let db = Database::open(&t.dir).unwrap();
    query_lines(&db);
    database();
    published(&db);
    let _ = std::fs::remove_dir_all(t.dir.parent().unwrap());
}
