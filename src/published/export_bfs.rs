//! The BFS files of an export: from a search stored as a node list ([`export_bfs`]) or
//! by positions ([`export_bfs_by_positions`]), one line per position in ascending code
//! order with the depth of each of its nodes, made in parallel batches and written
//! through the export's writer thread ([`crate::published::export_files`]).

use std::path::Path;

use rayon::prelude::*;

use crate::bfs_depths::node_layers;
use crate::error::Error;
use crate::game::Position;
use crate::game::notation::code_to_base64;
use crate::index::{GameIndex, PhaseIndex, Positions};
use crate::progress::Reporter;
use crate::published::export_files::{BATCH, ExportedFile, FileDone, FileSplitter, Mark, TASK, with_writer};
use crate::published::{FIELDS, Kind, bfs_nontrivial_nodes, write_bfs_line};

/// Write the published BFS files of a stored breadth-first search, as the published
/// solver does: one line for every position with at most `max` pieces, in ascending code
/// order: the code, `checkmate` for an immediate-win position, then 25 fields, field j
/// the depth of node (position, j), `-1` when the search did not reach it but the node
/// is non-trivial ([`bfs_nontrivial_nodes`] over the phases with at most `max` pieces),
/// else empty.
pub fn export_bfs(
    geom: &crate::game::Geometry,
    bfs: &crate::bfs_depths::node_keys::BfsFile,
    max: u32,
    lines_per_file: u64,
    (out, fingerprint): (Option<&Path>, bool),
    reporter: &dyn Reporter,
) -> Result<Vec<ExportedFile>, Error> {
    use crate::game::node::{key_code, key_index};
    let index = GameIndex::build(geom, max)?;
    let mut walks: Vec<Positions<'_>> = index.phases().iter().map(|p| p.positions(0..p.len())).collect();
    let heads: Vec<Option<Position>> = walks.iter_mut().map(|w| w.next()).collect();
    let mut all = AllPositions { walks, heads };
    let mut fields = [None::<u32>; FIELDS];
    let mut current: Option<u64> = None;
    reporter.begin("export BFS", index.len());
    let result = with_writer((out, fingerprint), Vec::new(), &mut |_, _| Ok(()), |tx| {
        let mut lines = BfsLines::new(geom, FileSplitter::new(tx, max, Kind::Bfs, lines_per_file, 0), reporter);
        // The lines of every position before the one of `code`, then its own.
        let mut up_to = |lines: &mut BfsLines<'_, '_>, code: u64, fields: &[Option<u32>; FIELDS]| {
            if Position::from_code(code).phase().pieces() > max {
                return Ok(());
            }
            while let Some(p) = all.next_below(code) {
                lines.position(p, [None; FIELDS])?;
            }
            match all.next_below(code + 1) {
                Some(p) => lines.position(p, *fields),
                None => Err(crate::error::corrupt(
                    bfs.path(),
                    format!("a node of {}, which is not a canonical position of the phases", code_to_base64(code)),
                )),
            }
        };
        bfs.for_each_block(|block| {
            for &(key, depth) in block {
                let code = key_code(key);
                if let Some(c) = current.filter(|&c| c != code) {
                    up_to(&mut lines, c, &fields)?;
                    fields = [None; FIELDS];
                }
                current = Some(code);
                fields[key_index(key)] = Some(depth as u32);
            }
            Ok(())
        })?;
        if let Some(c) = current {
            up_to(&mut lines, c, &fields)?;
        }
        while let Some(p) = all.next_below(u64::MAX) {
            lines.position(p, [None; FIELDS])?;
        }
        lines.flush()
    });
    reporter.end();
    result.map(|((), files)| files)
}

/// Every position of some phases in ascending code order, merged from each phase's walk.
struct AllPositions<'a> {
    walks: Vec<Positions<'a>>,
    /// Each phase's next position.
    heads: Vec<Option<Position>>,
}

impl AllPositions<'_> {
    /// The next position if its code is below `code`.
    fn next_below(&mut self, code: u64) -> Option<Position> {
        let k = (0..self.heads.len())
            .filter(|&k| self.heads[k].is_some())
            .min_by_key(|&k| self.heads[k].map(|h| h.code()))?;
        let head = self.heads[k].filter(|h| h.code() < code)?;
        self.heads[k] = self.walks[k].next();
        Some(head)
    }
}

/// [`export_bfs`] from a search stored by positions (the first-depth file): the depths
/// are decoded into memory (one byte per position of the game), the positions of every
/// phase with at most `max` pieces that the search reached are merged by code, and each
/// one's node depths are read from the search's node layers when it kept them
/// (`layers`: the blocks of every layer that a batch's positions fall in, decoded in
/// parallel), or else found from its predecessors' first depths
/// ([`crate::bfs_depths::first_depths::node_sources`], every predecessor's depth asked for
/// from memory before any is read), in parallel batches; a writer thread hashes (and
/// writes) one batch while the next is made. The same lines as from a node-list search
/// of the same depth. `from`: the files done and the positions of each phase in them, to
/// go on after them (none and `[]` to begin); `file_done(files, mark)` is called at
/// the end of every file (an error from it ends the export with that error).
#[allow(clippy::too_many_arguments)]
pub fn export_bfs_by_positions(
    depths: &crate::bfs_depths::first_depths::FirstDepthFile,
    layers: Option<&node_layers::NodeLayers>,
    max: u32,
    lines_per_file: u64,
    (out, fingerprint): (Option<&Path>, bool),
    reporter: &dyn Reporter,
    (files, consumed): (Vec<ExportedFile>, Vec<u64>),
    file_done: &mut FileDone<'_>,
) -> Result<Vec<ExportedFile>, Error> {
    use crate::bfs_depths::first_depths::{NOT_REACHED, depths_from_sources, node_sources};
    let numbering = depths.numbering();
    let geom = numbering.index().geometry();
    // The search's phases: those its start can reach.
    let universe = depths.summary().start.pieces();
    if max > universe {
        return Err(Error::InvalidArgument(format!(
            "the stored breadth-first search starts in phase {} and reaches the phases with at most {universe} \
             pieces only: its BFS files are those of --max-pieces {universe}",
            depths.summary().start
        )));
    }
    let all = depths.load_all()?;
    let at = |g: u64| Some(all[g as usize]).filter(|&d| d != NOT_REACHED).map(u32::from);
    let phases: Vec<(u64, &PhaseIndex)> = numbering
        .index()
        .phases()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.phase().pieces() <= max)
        .map(|(s, p)| (numbering.start(s), p))
        .collect();
    // Per phase, its positions from where the export stands (every position has a
    // line, reached or not), and the index of the next one.
    let mut walks: Vec<(u64, Positions<'_>)> = phases
        .iter()
        .enumerate()
        .map(|(k, &(_, p))| {
            let from = consumed.get(k).copied().unwrap_or(0);
            (from, p.positions(from..p.len()))
        })
        .collect();
    // Per phase: its next index and position.
    let mut next_position = |k: usize| -> Option<(u64, Position)> {
        let (at, walk) = &mut walks[k];
        let pos = walk.next()?;
        *at += 1;
        Some((*at - 1, pos))
    };
    let mut heads: Vec<Option<(u64, Position)>> = (0..phases.len()).map(&mut next_position).collect();
    let lines_before: u64 = files.iter().map(|f| f.lines).sum();
    let summary = depths.summary();
    reporter.begin("export BFS", phases.iter().map(|(_, p)| p.len()).sum());
    reporter.resumed(lines_before);
    let first_file = files.len() as u64;
    // With node layers: the blocks (of every layer) that the batch's positions are in.
    let mut blocks = LayerBlocks::default();
    let result = with_writer((out, fingerprint), files, file_done, |tx| {
        let mut files = FileSplitter::new(tx, max, Kind::Bfs, lines_per_file, first_file);
        let mut batch: Vec<(u64, Position)> = Vec::with_capacity(BATCH);
        loop {
            batch.clear();
            // A batch ends at the end of a file at the latest, where the progress is kept.
            let want = (BATCH as u64).min(files.room()) as usize;
            while batch.len() < want {
                let Some(k) =
                    (0..heads.len()).filter(|&k| heads[k].is_some()).min_by_key(|&k| heads[k].map(|h| h.1.code()))
                else {
                    break;
                };
                let (i, pos) = heads[k].expect("chosen among the present");
                batch.push((phases[k].0 + i, pos));
                heads[k] = next_position(k);
            }
            if batch.is_empty() {
                return Ok(());
            }
            let texts: Vec<(String, u64)> = match layers {
                Some(layers) => {
                    blocks.load(layers, &batch)?;
                    let texts: Vec<Result<(String, u64), Error>> = batch
                        .par_chunks(TASK)
                        .map(|chunk| {
                            let mut s = String::with_capacity(chunk.len() * 64);
                            for (g, p) in chunk {
                                let fields = match all[*g as usize] {
                                    NOT_REACHED => [None; FIELDS],
                                    first => layers.node_depths(blocks.of(*g), g % LAYER_BLOCK, first.into())?,
                                };
                                write_bfs_line(geom, p, &fields, bfs_nontrivial_nodes(geom, p, universe), &mut s);
                            }
                            Ok((s, chunk.len() as u64))
                        })
                        .collect();
                    texts.into_iter().collect::<Result<_, Error>>()?
                }
                // Each position's predecessors are found and their depths asked for from
                // memory before any is read, so that their cache misses overlap.
                None => batch
                    .par_chunks(TASK)
                    .map_init(Vec::new, |sources, chunk| {
                        let mut s = String::with_capacity(chunk.len() * 64);
                        for (_, p) in chunk {
                            let start = node_sources(numbering, summary, p, None, sources);
                            for &(g, _) in sources.iter() {
                                crate::sys::prefetch(all.as_ptr().wrapping_add(g as usize));
                            }
                            let fields = depths_from_sources(summary, sources, start, at);
                            write_bfs_line(geom, p, &fields, bfs_nontrivial_nodes(geom, p, universe), &mut s);
                        }
                        (s, chunk.len() as u64)
                    })
                    .collect(),
            };
            files.send(texts, batch.len() as u64, || Mark {
                consumed: heads.iter().zip(&phases).map(|(h, (_, p))| h.as_ref().map_or(p.len(), |h| h.0)).collect(),
                stats: None,
            })?;
            reporter.advance(batch.len() as u64);
        }
    });
    reporter.end();
    result.map(|((), files)| files)
}

/// Positions per block of the node layers.
const LAYER_BLOCK: u64 = node_layers::BLOCK_POSITIONS as u64;

/// The blocks of the node layers that a batch of an export needs, every layer's, decoded:
/// by block number, ascending. A block the next batch needs too is kept for it.
#[derive(Default)]
struct LayerBlocks {
    blocks: Vec<(u64, Vec<Option<node_layers::LayerBlock>>)>,
}

impl LayerBlocks {
    /// Have the blocks of the positions of `batch` (global numbers first), and no others.
    fn load(&mut self, layers: &node_layers::NodeLayers, batch: &[(u64, Position)]) -> Result<(), Error> {
        let mut need: Vec<u64> = batch.iter().map(|(g, _)| g / LAYER_BLOCK).collect();
        need.sort_unstable();
        need.dedup();
        self.blocks.retain(|(b, _)| need.binary_search(b).is_ok());
        let missing: Vec<(u64, usize)> = need
            .iter()
            .filter(|&&b| self.blocks.binary_search_by_key(&b, |(x, _)| *x).is_err())
            .flat_map(|&b| (0..layers.depths()).map(move |d| (b, d)))
            .collect();
        let decoded: Vec<Result<_, Error>> = missing.par_iter().map(|&(b, d)| layers.block(d, b)).collect();
        let mut decoded = decoded.into_iter();
        for pair in missing.chunks(layers.depths().max(1)) {
            let per_layer = decoded.by_ref().take(pair.len()).collect::<Result<Vec<_>, Error>>()?;
            self.blocks.push((pair[0].0, per_layer));
        }
        self.blocks.sort_unstable_by_key(|(b, _)| *b);
        Ok(())
    }

    /// Every layer's block of the position with global number `g` (one of the batch's).
    fn of(&self, g: u64) -> &[Option<node_layers::LayerBlock>] {
        let i = self.blocks.binary_search_by_key(&(g / LAYER_BLOCK), |(b, _)| *b).expect("loaded for the batch");
        &self.blocks[i].1
    }
}

/// The published BFS files of a node-list search being made: positions in order, made
/// into lines in parallel batches (a batch ends at the end of a file at the latest).
struct BfsLines<'a, 't> {
    geom: &'a crate::game::Geometry,
    files: FileSplitter<'t>,
    batch: Vec<(Position, [Option<u32>; FIELDS])>,
    reporter: &'a dyn Reporter,
}

impl<'a, 't> BfsLines<'a, 't> {
    /// The lines from the first file on.
    fn new(geom: &'a crate::game::Geometry, files: FileSplitter<'t>, reporter: &'a dyn Reporter) -> BfsLines<'a, 't> {
        BfsLines { geom, files, batch: Vec::with_capacity(BATCH), reporter }
    }

    /// The line of canonical position `pos` with its node depths.
    fn position(&mut self, pos: Position, fields: [Option<u32>; FIELDS]) -> Result<(), Error> {
        self.batch.push((pos, fields));
        if self.batch.len() as u64 >= (BATCH as u64).min(self.files.room()) {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let (geom, max) = (self.geom, self.files.max);
        let texts: Vec<(String, u64)> = self
            .batch
            .par_chunks(TASK)
            .map(|chunk| {
                let mut s = String::with_capacity(chunk.len() * 64);
                for (p, fields) in chunk {
                    write_bfs_line(geom, p, fields, bfs_nontrivial_nodes(geom, p, max), &mut s);
                }
                (s, chunk.len() as u64)
            })
            .collect();
        let n = self.batch.len() as u64;
        self.files.send(texts, n, Mark::default)?;
        self.reporter.advance(n);
        self.batch.clear();
        Ok(())
    }
}
