//! The event log of a phase group: every decision, `event(g, class)`, appended at the
//! level that propagates it. A decision is propagated at the level of its distance, so
//! the level is the distance: the working state need not hold it (see [`super::state`]),
//! and the group's records are made at the end by replaying the log into the states.
//!
//! With a database directory the log is a file beside the group's checkpoint,
//! `group-A-B[-C-D].events` (4 bytes per decision, little-endian, level after level;
//! about 8 GB for (5,5)), which a checkpoint records the length of; without one (small
//! boards, tests) it is kept in memory.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, io};
use crate::file::{fault_point, open_existing};

enum Sink {
    Memory(Vec<u32>),
    File { path: PathBuf, w: BufWriter<File> },
}

/// The decisions of a group, level by level.
pub(super) struct EventLog {
    /// `ends[d]`: how many events levels `0..=d` logged.
    ends: Vec<u64>,
    /// Events logged so far, in the current level too.
    len: u64,
    sink: Sink,
}

/// The log file of the group made of `phases`, e.g. `group-5-4-4-5.events`.
pub(super) fn log_file(dir: &Path, phases: &[crate::game::Phase]) -> PathBuf {
    crate::solve::checkpoint::group_file(dir, phases).with_extension("events")
}

const BUF: usize = 1 << 22;

impl EventLog {
    /// An empty log in memory.
    pub(super) fn memory() -> EventLog {
        EventLog { ends: Vec::new(), len: 0, sink: Sink::Memory(Vec::new()) }
    }

    /// An empty log in a new file at `path` (replacing any).
    pub(super) fn create(path: &Path) -> Result<EventLog, Error> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        fault_point("create").map_err(io(path))?;
        // Read back at the end (`replay`), so opened for both.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(io(path))?;
        Ok(EventLog {
            ends: Vec::new(),
            len: 0,
            sink: Sink::File { path: path.into(), w: BufWriter::with_capacity(BUF, f) },
        })
    }

    /// The log at `path` as a checkpoint recorded it: `ends` for the levels done. Longer
    /// files (written after that checkpoint) are cut back; a shorter or missing one is
    /// an error.
    pub(super) fn resume(path: &Path, ends: Vec<u64>) -> Result<EventLog, Error> {
        let len = ends.last().copied().unwrap_or(0);
        let corrupt = |reason: String| Error::Corrupt { path: path.to_path_buf(), reason };
        let Some(f) = open_existing(path)? else {
            return Err(corrupt(format!(
                "missing: the group's checkpoint needs its event log ({len} decisions); delete the checkpoint to start the group over"
            )));
        };
        let bytes = f.metadata().map_err(io(path))?.len();
        if bytes < 4 * len {
            return Err(corrupt(format!(
                "{bytes} bytes, shorter than the {len} decisions its checkpoint counts; delete the checkpoint to start the group over"
            )));
        }
        drop(f);
        let f = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(io(path))?;
        f.set_len(4 * len).map_err(io(path))?;
        let mut w = BufWriter::with_capacity(BUF, f);
        use std::io::Seek;
        w.seek(std::io::SeekFrom::End(0)).map_err(io(path))?;
        Ok(EventLog { ends, len, sink: Sink::File { path: path.into(), w } })
    }

    /// Append events of the current level.
    pub(super) fn append(&mut self, events: &[u32]) -> Result<(), Error> {
        self.len += events.len() as u64;
        match &mut self.sink {
            Sink::Memory(v) => v.extend_from_slice(events),
            Sink::File { path, w } => {
                for c in events.chunks(1 << 16) {
                    let b: Vec<u8> = c.iter().flat_map(|e| e.to_le_bytes()).collect();
                    w.write_all(&b).map_err(io(path))?;
                }
            }
        }
        Ok(())
    }

    /// Close level `d` (levels are closed in order, from 0).
    pub(super) fn end_level(&mut self, d: usize) {
        debug_assert_eq!(self.ends.len(), d);
        self.ends.push(self.len);
    }

    /// How many events each level through the last closed one ends at.
    pub(super) fn ends(&self) -> &[u64] {
        &self.ends
    }

    /// Make everything appended durable (before a checkpoint that counts it is written).
    pub(super) fn sync(&mut self) -> Result<(), Error> {
        if let Sink::File { path, w } = &mut self.sink {
            w.flush().map_err(io(&*path))?;
            w.get_ref().sync_data().map_err(io(&*path))?;
        }
        Ok(())
    }

    /// Hand every closed level's events to `f(level, events)`, in blocks, in order.
    pub(super) fn replay(self, mut f: impl FnMut(u32, &[u32]) -> Result<(), Error>) -> Result<(), Error> {
        let ends = self.ends;
        let starts = std::iter::once(0).chain(ends.iter().copied());
        match self.sink {
            Sink::Memory(v) => {
                for (d, (a, b)) in starts.zip(ends.iter().copied()).enumerate() {
                    f(d as u32, &v[a as usize..b as usize])?;
                }
            }
            Sink::File { path, w } => {
                let mut file = w.into_inner().map_err(|e| Error::Io { path: path.clone(), source: e.into_error() })?;
                use std::io::Seek;
                file.seek(std::io::SeekFrom::Start(0)).map_err(io(&path))?;
                let mut r = std::io::BufReader::with_capacity(BUF, file);
                let mut bytes = vec![0u8; BUF];
                let mut words = Vec::with_capacity(BUF / 4);
                for (d, (a, b)) in starts.zip(ends.iter().copied()).enumerate() {
                    let mut left = b - a;
                    while left > 0 {
                        let k = left.min((BUF / 4) as u64) as usize;
                        r.read_exact(&mut bytes[..4 * k]).map_err(|_| Error::Corrupt {
                            path: path.clone(),
                            reason: "shorter than the levels it logged".into(),
                        })?;
                        words.clear();
                        words.extend(
                            bytes[..4 * k].chunks_exact(4).map(|x| u32::from_le_bytes(x.try_into().expect("4"))),
                        );
                        f(d as u32, &words)?;
                        left -= k as u64;
                    }
                }
            }
        }
        Ok(())
    }

    /// Remove the file of a log (after the group's phase files are written).
    pub(super) fn remove(path: &Path) -> Result<(), Error> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::Io { path: path.into(), source: e }),
        }
    }
}
