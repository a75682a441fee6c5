//! Progress on stderr for long steps: a line with done/total, rate and ETA, redrawn at
//! most a few times a second. Silent with `--quiet` or when stderr is not a terminal
//! (then one summary line is printed at the end unless quiet).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A progress counter safe to bump from many threads.
pub struct Progress {
    label: String,
    total: u64,
    done: AtomicU64,
    start: Instant,
    last: Mutex<Instant>,
    quiet: bool,
    live: bool,
}

impl Progress {
    /// A counter for `total` units of work.
    pub fn new(quiet: bool, label: &str, total: u64) -> Progress {
        let now = Instant::now();
        Progress {
            label: label.to_string(),
            total,
            done: AtomicU64::new(0),
            start: now,
            last: Mutex::new(now),
            quiet,
            live: !quiet && std::io::stderr().is_terminal(),
        }
    }

    /// Record `n` more units done.
    pub fn add(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        if !self.live {
            return;
        }
        let Ok(mut last) = self.last.try_lock() else { return };
        if last.elapsed() < Duration::from_millis(250) {
            return;
        }
        *last = Instant::now();
        let secs = self.start.elapsed().as_secs_f64();
        let rate = done as f64 / secs.max(1e-9);
        let eta = (self.total.saturating_sub(done)) as f64 / rate.max(1e-9);
        let pct = 100.0 * done as f64 / self.total.max(1) as f64;
        eprint!("\r\x1b[2K{}: {pct:5.1}%  {}/s  eta {}", self.label, human(rate), clock(eta));
        let _ = std::io::stderr().flush();
    }

    /// End the line and print the elapsed time.
    pub fn finish(&self) {
        if self.quiet {
            return;
        }
        let secs = self.start.elapsed().as_secs_f64();
        let done = self.done.load(Ordering::Relaxed);
        let clear = if self.live { "\r\x1b[2K" } else { "" };
        eprintln!("{clear}{}: {} done in {}", self.label, human(done as f64), clock(secs));
    }
}

fn human(x: f64) -> String {
    match x {
        x if x >= 1e9 => format!("{:.2}G", x / 1e9),
        x if x >= 1e6 => format!("{:.1}M", x / 1e6),
        x if x >= 1e3 => format!("{:.1}k", x / 1e3),
        x => format!("{x:.0}"),
    }
}

fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{secs:.1}s")
    }
}

/// Renders the library's [`crate::solve::progress::Reporter`] calls as progress lines.
pub struct CliReporter {
    quiet: bool,
    current: Mutex<Option<std::sync::Arc<Progress>>>,
}

impl CliReporter {
    /// A reporter; `quiet` silences everything.
    pub fn new(quiet: bool) -> CliReporter {
        CliReporter { quiet, current: Mutex::new(None) }
    }

    fn current(&self) -> Option<std::sync::Arc<Progress>> {
        self.current.lock().ok().and_then(|c| c.clone())
    }
}

impl crate::solve::progress::Reporter for CliReporter {
    fn begin(&self, label: &str, total: u64) {
        if let Ok(mut c) = self.current.lock() {
            *c = Some(std::sync::Arc::new(Progress::new(self.quiet, label, total)));
        }
    }

    fn advance(&self, n: u64) {
        if let Some(p) = self.current() {
            p.add(n);
        }
    }

    fn end(&self) {
        let p = self.current.lock().ok().and_then(|mut c| c.take());
        if let Some(p) = p {
            p.finish();
        }
    }

    fn note(&self, message: &str) {
        if !self.quiet {
            eprintln!("{message}");
        }
    }
}
