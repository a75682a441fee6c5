//! How fast the published BFS files of a stored search are made (docs/measurements.md, "The
//! whole BFS by positions"): `export --digest` needs a solved database for its
//! retrograde files, but its BFS part needs only the first-depth file, so this runs that
//! part alone over a directory holding `bfs-first-depths.zst` (from `ostledb bfs
//! --by-positions --store --max-depth N --db DIR`, which needs no solve) and prints the
//! lines, files, seconds and the digest of the BFS files alone (sha256 of their hex
//! digests concatenated, as the published recipe does over all files).
//!
//! ```text
//! cargo run --release --example bfs_export_rate -- DIR [FILES]
//! ```
//!
//! With FILES, it stops after that many files (a shorter measurement; the digest is then
//! of those files). Node depths come from the node layers in DIR when the search kept
//! them (`--node-layers`), from predecessors otherwise or with `OSTLEDB_NO_LAYERS=1`.
use std::path::Path;
use std::time::Instant;

use ostledb::bfs_depths::first_depths::FirstDepthFile;
use ostledb::bfs_depths::node_layers::NodeLayers;
use ostledb::error::Error;
use ostledb::game::Geometry;
use ostledb::progress::Silent;
use ostledb::published::export_bfs::export_bfs_by_positions;
use ostledb::published::{LINES_PER_FILE, set_digest};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(2..=3).contains(&args.len()) {
        eprintln!("usage: bfs_export_rate DIR [FILES] (DIR holds bfs-first-depths.zst of the 5x5 game)");
        std::process::exit(2);
    }
    let geom = Geometry::new(5, 5).expect("the 5x5 board");
    let file = match FirstDepthFile::open(Path::new(&args[1]), &geom) {
        Ok(Some(f)) => f,
        Ok(None) => {
            eprintln!("no bfs-first-depths.zst in {}", args[1]);
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let limit: Option<usize> = args.get(2).map(|n| n.parse().expect("FILES: a number"));
    // The node layers beside it, if the search kept them; OSTLEDB_NO_LAYERS=1 leaves them
    // unread (node depths from predecessors), to compare the two ways.
    let layers = match std::env::var_os("OSTLEDB_NO_LAYERS") {
        Some(_) => None,
        None => NodeLayers::open(
            Path::new(&args[1]),
            &geom,
            file.summary().layers.len() as u32,
            file.summary().start,
            file.summary().expand_checkmates,
            file.summary().positions,
        )
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        }),
    };
    eprintln!("node depths from {}", if layers.is_some() { "the node layers" } else { "predecessors" });
    let t = Instant::now();
    // The files up to the limit, kept when the export is stopped there.
    let mut first: Option<Vec<_>> = None;
    let result = export_bfs_by_positions(
        &file,
        layers.as_ref(),
        10,
        LINES_PER_FILE,
        (None, false),
        &Silent,
        (Vec::new(), Vec::new()),
        &mut |f, _| {
            if limit.is_some_and(|n| f.len() >= n) {
                first = Some(f.to_vec());
                return Err(Error::InvalidArgument("stopped after FILES files".into()));
            }
            Ok(())
        },
    );
    let files = match (result, first) {
        (Ok(files), _) => files,
        (Err(_), Some(first)) => first,
        (Err(e), None) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let seconds = t.elapsed().as_secs_f64();
    let lines: u64 = files.iter().map(|f| f.lines).sum();
    let bytes: u64 = files.iter().map(|f| f.bytes).sum();
    println!(
        "{lines} lines, {bytes} bytes, {} files in {seconds:.1} s ({:.0} ns/line); BFS digest {}",
        files.len(),
        seconds * 1e9 / lines.max(1) as f64,
        set_digest(files.iter().map(|f| f.sha256.as_str()))
    );
}
