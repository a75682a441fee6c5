//! Progress on stderr for long steps: an indicatif bar with done/total, rate and ETA when
//! stderr is a terminal; one summary line per step otherwise. Silent with `--quiet`.

use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress counter safe to bump from many threads.
pub struct Progress {
    label: String,
    bar: ProgressBar,
    start: Instant,
    quiet: bool,
}

impl Progress {
    /// A counter for `total` units of work.
    pub fn new(quiet: bool, label: &str, total: u64) -> Progress {
        let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr_with_hz(4) };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix}: [{bar:30}] {percent:>3}%  {human_pos}/{human_len}  {per_sec}  eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(label.to_string());
        Progress { label: label.to_string(), bar, start: Instant::now(), quiet }
    }

    /// Record `n` more units done.
    pub fn add(&self, n: u64) {
        self.bar.inc(n);
    }

    /// End the bar and print the elapsed time.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
        if self.quiet {
            return;
        }
        let secs = self.start.elapsed().as_secs_f64();
        eprintln!("{}: {} done in {}", self.label, human(self.bar.position() as f64), clock(secs));
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

/// Renders the library's [`crate::progress::Reporter`] calls as progress lines.
pub struct CliReporter {
    quiet: bool,
    /// Written before every note as `{prefix}: ` (empty: nothing).
    prefix: String,
    current: Mutex<Option<std::sync::Arc<Progress>>>,
}

impl CliReporter {
    /// A reporter; `quiet` silences everything.
    pub fn new(quiet: bool) -> CliReporter {
        CliReporter { quiet, prefix: String::new(), current: Mutex::new(None) }
    }

    /// The same reporter writing every note as `{prefix}: {note}`.
    pub fn with_note_prefix(self, prefix: &str) -> CliReporter {
        CliReporter { prefix: prefix.to_string(), ..self }
    }

    fn current(&self) -> Option<std::sync::Arc<Progress>> {
        self.current.lock().ok().and_then(|c| c.clone())
    }

    /// Write a line to stderr, above the progress bar while one is drawn.
    fn show(&self, message: &str) {
        match self.current() {
            Some(p) if !p.bar.is_hidden() => p.bar.println(message),
            _ => eprintln!("{message}"),
        }
    }
}

impl crate::progress::Reporter for CliReporter {
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
        if self.quiet {
            return;
        }
        let prefixed;
        let message = if self.prefix.is_empty() {
            message
        } else {
            prefixed = format!("{}: {message}", self.prefix);
            &prefixed
        };
        self.show(message);
    }

    fn warn(&self, message: &str) {
        self.show(&format!("ostledb: warning: {message}"));
    }
}
