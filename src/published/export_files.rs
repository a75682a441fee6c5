//! The output of an export, shared by its retrograde and BFS files: the lines a producer
//! makes are split into published files (`FileSplitter`) and sent to a writer thread
//! (`with_writer`) that writes (or only hashes) them in order and tells where each file
//! ends ([`Mark`], [`FileDone`]); what each file is ([`ExportedFile`]) and its part of
//! the published solver's fingerprint of its run ([`FilePrint`], [`run_fingerprint`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::analysis::stats::PhaseStats;
use crate::error::{Error, io};
use crate::file::temp_name;
use crate::published::{FileDigest, Kind, file_name};

/// One file of an export.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExportedFile {
    /// Its name, e.g. `ostle_8_retrograde_output0000.txt`.
    pub name: String,
    /// Lines (positions).
    pub lines: u64,
    /// Bytes, with a LF after every line.
    pub bytes: u64,
    /// sha256 of its lines joined by LF (the published per-file digest), hex.
    pub sha256: String,
    /// With [`crate::published::export::ExportOptions::fingerprint`]: what its lines give
    /// the fingerprint of the run, numbered after the files before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<FilePrint>,
}

/// What one file gives the fingerprint of its run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FilePrint {
    /// Its nodes (fields not empty).
    pub nodes: u64,
    /// The XOR of its blocks' ciphertexts, 32 hex digits (a little-endian 128-bit
    /// number written most significant digit first).
    pub xor: String,
}

impl FilePrint {
    pub(super) fn xor(&self) -> Option<u128> {
        u128::from_str_radix(&self.xor, 16).ok().filter(|_| self.xor.len() == 32)
    }
}

/// The published solver's fingerprints of the runs an export wrote (as its log prints
/// them), decimal.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Fingerprints {
    /// Of the retrograde files.
    pub retrograde: String,
    /// Of the BFS files, when there are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bfs: Option<String>,
}

/// The fingerprint of a run from its files (each with its part), `None` when one lacks
/// its part.
pub fn run_fingerprint(files: &[ExportedFile]) -> Option<u64> {
    let mut xor = 0u128;
    for f in files {
        xor ^= f.fingerprint.as_ref()?.xor()?;
    }
    Some(crate::published::fingerprint::fold(xor))
}

/// Where the files so far end, told to the writer with the end of each: the positions
/// of each phase (in index order) in them and, for retrograde files with statistics,
/// those of these positions.
#[derive(Default)]
pub struct Mark {
    /// Positions of each phase in the files so far.
    pub consumed: Vec<u64>,
    /// Their statistics, when counted.
    pub stats: Option<Vec<PhaseStats>>,
}

/// Positions per batch turned into lines in parallel (and written in order).
pub(super) const BATCH: usize = 1 << 18;
/// Lines per parallel task.
pub(super) const TASK: usize = 4096;

/// Where lines go: a file per published file (or nowhere), each hashed as it streams.
struct Output {
    dir: Option<PathBuf>,
    current: Option<OpenFile>,
    done: Vec<ExportedFile>,
    /// The fingerprint's cipher, when it is computed.
    cipher: Option<crate::published::fingerprint::Cipher>,
}

struct OpenFile {
    name: String,
    tmp: PathBuf,
    writer: Option<BufWriter<File>>,
    digest: FileDigest,
    lines: u64,
    bytes: u64,
    /// Its part of the fingerprint so far.
    print: crate::published::fingerprint::Part,
}

impl Output {
    fn open(&mut self, name: String) -> Result<(), Error> {
        let (tmp, writer) = match &self.dir {
            Some(d) => {
                let tmp = temp_name(&d.join(&name));
                let f = File::create(&tmp).map_err(io(&tmp))?;
                (tmp, Some(BufWriter::with_capacity(1 << 22, f)))
            }
            None => (PathBuf::new(), None),
        };
        let print = crate::published::fingerprint::Part::default();
        self.current = Some(OpenFile { name, tmp, writer, digest: FileDigest::new(), lines: 0, bytes: 0, print });
        Ok(())
    }

    /// Write lines to the current file: `texts`, each text with its number of lines.
    fn write_all(&mut self, texts: &[(String, u64)]) -> Result<(), Error> {
        if let Some(cipher) = &self.cipher {
            let f = self.current.as_ref().expect("a file is open");
            // Position and node numbers go on from the files before and the lines so far.
            let before = |get: fn(&ExportedFile) -> u64| self.done.iter().map(get).sum::<u64>();
            let first_position = before(|d| d.lines) + f.lines;
            let first_node = before(|d| d.fingerprint.as_ref().map_or(0, |p| p.nodes)) + f.print.nodes;
            let just: Vec<&str> = texts.iter().map(|(t, _)| t.as_str()).collect();
            let part = crate::published::fingerprint::part_of_texts(cipher, &just, first_position, first_node)
                .map_err(|e| Error::InvalidArgument(format!("{}: the export's own line: {e}", f.name)))?;
            let f = self.current.as_mut().expect("a file is open");
            f.print = f.print.then(part);
        }
        for (t, lines) in texts {
            self.write(t, *lines)?;
        }
        Ok(())
    }

    fn write(&mut self, text: &str, lines: u64) -> Result<(), Error> {
        let f = self.current.as_mut().expect("a file is open");
        f.digest.update(text.as_bytes());
        f.lines += lines;
        f.bytes += text.len() as u64;
        if let Some(w) = f.writer.as_mut() {
            w.write_all(text.as_bytes()).map_err(io(&f.tmp))?;
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), Error> {
        let Some(f) = self.current.take() else { return Ok(()) };
        if let (Some(w), Some(d)) = (f.writer, &self.dir) {
            let file = w.into_inner().map_err(|e| Error::Io { path: f.tmp.clone(), source: e.into_error() })?;
            drop(file);
            let path = d.join(&f.name);
            std::fs::rename(&f.tmp, &path).map_err(io(&path))?;
        }
        let fingerprint =
            self.cipher.as_ref().map(|_| FilePrint { nodes: f.print.nodes, xor: format!("{:032x}", f.print.xor) });
        self.done.push(ExportedFile {
            name: f.name,
            lines: f.lines,
            bytes: f.bytes,
            sha256: f.digest.finish(),
            fingerprint,
        });
        Ok(())
    }
}

/// Run `produce` with a writer thread beside it that writes (or only hashes) the files
/// it sends, in order: one batch is written while the next is made. The files are
/// those after `done`; `file_done` is told at the end of each. Returns what `produce`
/// returned and every file. The writer's error comes first (it makes the producer's
/// sends fail too).
pub(super) fn with_writer<R: Send>(
    (out, fingerprint): (Option<&Path>, bool),
    done: Vec<ExportedFile>,
    file_done: &mut FileDone<'_>,
    produce: impl FnOnce(&std::sync::mpsc::SyncSender<Message>) -> Result<R, Error>,
) -> Result<(R, Vec<ExportedFile>), Error> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Message>(2);
    let out_dir = out.map(Path::to_path_buf);
    let cipher = fingerprint.then(crate::published::fingerprint::Cipher::new);
    let (produced, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            let mut output = Output { dir: out_dir, current: None, done, cipher };
            for m in rx {
                match m {
                    Message::Open(name) => output.open(name)?,
                    Message::Lines(texts) => output.write_all(&texts)?,
                    Message::Close(mark) => {
                        output.close()?;
                        file_done(&output.done, mark)?;
                    }
                }
            }
            output.close()?;
            Ok::<_, Error>(output.done)
        });
        let produced = produce(&tx);
        drop(tx);
        let written =
            writer.join().unwrap_or_else(|_| Err(Error::InvalidArgument("the export writer thread failed".into())));
        (produced, written)
    });
    match (produced, written) {
        (Ok(r), Ok(d)) => Ok((r, d)),
        (_, Err(e)) => Err(e),
        (Err(e), _) => Err(e),
    }
}

/// Told at the end of every file: the files so far and where they end ([`Mark`]).
pub type FileDone<'a> = dyn FnMut(&[ExportedFile], Mark) -> Result<(), Error> + Send + 'a;

/// Splits the lines a producer makes into published files of `lines_per_file` lines
/// each for the writer thread: it opens a file before its first lines and closes it
/// after its last, with the positions of each phase that the files so far hold.
pub(super) struct FileSplitter<'t> {
    tx: &'t std::sync::mpsc::SyncSender<Message>,
    pub(super) max: u32,
    kind: Kind,
    lines_per_file: u64,
    next_file: u64,
    in_file: u64,
}

impl<'t> FileSplitter<'t> {
    /// Files of `kind` with `max` pieces, numbered from `first_file` on.
    pub(super) fn new(
        tx: &'t std::sync::mpsc::SyncSender<Message>,
        max: u32,
        kind: Kind,
        lines_per_file: u64,
        first_file: u64,
    ) -> FileSplitter<'t> {
        FileSplitter { tx, max, kind, lines_per_file, next_file: first_file, in_file: 0 }
    }

    /// How many more lines the current file (or the next, none being open) takes.
    pub(super) fn room(&self) -> u64 {
        self.lines_per_file - self.in_file
    }

    /// Send `texts`, `lines` lines in all (at most [`FileSplitter::room`]); a file that
    /// they fill is closed with the mark that `mark` gives.
    pub(super) fn send(
        &mut self,
        texts: Vec<(String, u64)>,
        lines: u64,
        mark: impl FnOnce() -> Mark,
    ) -> Result<(), Error> {
        debug_assert!(lines <= self.room());
        let gone = |_| Error::InvalidArgument("the export writer stopped".into());
        if self.in_file == 0 {
            self.tx.send(Message::Open(file_name(self.max, self.kind, self.next_file))).map_err(gone)?;
            self.next_file += 1;
        }
        self.tx.send(Message::Lines(texts)).map_err(gone)?;
        self.in_file += lines;
        if self.in_file == self.lines_per_file {
            self.tx.send(Message::Close(mark())).map_err(gone)?;
            self.in_file = 0;
        }
        Ok(())
    }
}

/// What the producer sends the writer thread.
pub(super) enum Message {
    /// Start the file of this name.
    Open(String),
    /// Lines for the current file: text and its number of lines.
    Lines(Vec<(String, u64)>),
    /// End the current file; where the files so far end.
    Close(Mark),
}
