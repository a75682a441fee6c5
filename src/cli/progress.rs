//! Progress on stderr for long steps: an indicatif bar with done/total, rate and ETA when
//! stderr is a terminal; otherwise (a log file, a pipe) a plain line at every 5% of a step
//! that runs longer than ten seconds, and one summary line per step. Silent with
//! `--quiet`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A step reports its progress in plain lines only after running this long (short steps
/// print their summary line alone).
const PLAIN_AFTER: Duration = Duration::from_secs(10);
/// Plain progress lines per step at most.
const PLAIN_LINES: u64 = 20;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress counter safe to bump from many threads.
pub struct Progress {
    label: String,
    bar: ProgressBar,
    start: Instant,
    quiet: bool,
    /// Plain lines: the position of the next one (`u64::MAX`: none, stderr is a terminal
    /// or quiet), every `step` units.
    next: AtomicU64,
    step: u64,
    /// Units done by an earlier run, before this one began ([`Progress::resumed`]).
    before: AtomicU64,
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
        let plain = !quiet && !std::io::stderr().is_terminal() && total > 0;
        let step = total.div_ceil(PLAIN_LINES).max(1);
        let next = AtomicU64::new(if plain { step } else { u64::MAX });
        Progress { label: label.to_string(), bar, start: Instant::now(), quiet, next, step, before: AtomicU64::new(0) }
    }

    /// Record `n` units done by an earlier run: they count towards the total, not the
    /// rate.
    pub fn resumed(&self, n: u64) {
        self.before.fetch_add(n, Ordering::Relaxed);
        self.bar.inc(n);
        self.bar.reset_eta();
        self.bar.reset_elapsed();
    }

    /// Record `n` more units done.
    pub fn add(&self, n: u64) {
        self.bar.inc(n);
        let pos = self.bar.position();
        let total = self.bar.length().unwrap_or(pos).max(1);
        if !self.claim(pos, total) {
            return;
        }
        let secs = self.start.elapsed().as_secs_f64();
        if secs < PLAIN_AFTER.as_secs_f64() {
            return;
        }
        let eta = time_left(secs, pos, total, self.before.load(Ordering::Relaxed));
        eprintln!(
            "{}: {}% ({} of {}) after {}, about {} more",
            self.label,
            pos * 100 / total,
            human(pos as f64),
            human(total as f64),
            clock(secs),
            clock(eta)
        );
    }

    /// True if a plain line is due at `pos` of `total` (before the end), for one caller
    /// only: the one that moves the next line's position on.
    fn claim(&self, pos: u64, total: u64) -> bool {
        let next = self.next.load(Ordering::Relaxed);
        let after = (pos / self.step + 1) * self.step;
        pos >= next
            && pos < total
            && self.next.compare_exchange(next, after, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }

    /// End the bar and print the elapsed time.
    pub fn finish(&self) {
        // Read before finishing: indicatif's finish moves the bar to its end, and a step
        // that stops early (a signal, a solve whose draws are never decided) must not
        // read as complete.
        let (pos, total) = (self.bar.position(), self.bar.length());
        self.bar.finish_and_clear();
        if self.quiet {
            return;
        }
        let before = self.before.load(Ordering::Relaxed);
        eprintln!("{}", summary_line(&self.label, pos, total, before, self.start.elapsed().as_secs_f64()));
    }
}

/// The time left of a step at `pos` of `total` units, `secs` after this run began, from
/// this run's pace: the `before` units an earlier run did are not its work.
fn time_left(secs: f64, pos: u64, total: u64, before: u64) -> f64 {
    secs * total.saturating_sub(pos) as f64 / pos.saturating_sub(before).max(1) as f64
}

/// The line a step ends with: what it did (and of how much, when that is less than its
/// total), how long it took, and how much of it an earlier run did (`before`).
fn summary_line(label: &str, pos: u64, total: Option<u64>, before: u64, secs: f64) -> String {
    let earlier =
        if before > 0 { format!(" ({} of it before, in an earlier run)", human(before as f64)) } else { String::new() };
    match total {
        Some(total) if pos < total => {
            format!("{label}: {} of {} done in {}{earlier}", human(pos as f64), human(total as f64), clock(secs))
        }
        _ => format!("{label}: {} done in {}{earlier}", human(pos as f64), clock(secs)),
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

    fn resumed(&self, n: u64) {
        if let Some(p) = self.current() {
            p.resumed(n);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_come_every_twentieth_once_each_and_not_at_the_end() {
        // stderr is not a terminal under the test harness.
        let p = Progress::new(false, "t", 1000);
        let claimed: Vec<u64> = (1..=1000).filter(|&pos| p.claim(pos, 1000)).collect();
        assert_eq!(claimed, (1..20).map(|k| 50 * k).collect::<Vec<_>>());
        // A jump over several steps claims one line.
        let p = Progress::new(false, "t", 1000);
        assert!(p.claim(420, 1000) && !p.claim(420, 1000) && !p.claim(449, 1000) && p.claim(450, 1000));
        assert!(!Progress::new(true, "t", 1000).claim(500, 1000), "quiet");
    }

    #[test]
    fn a_step_that_ends_short_of_its_total_says_so() {
        assert_eq!(
            summary_line("(4,4) init", 160_900_185, Some(160_900_185), 0, 64.0),
            "(4,4) init: 160.9M done in 1m04s"
        );
        assert_eq!(
            summary_line("(5,4)+(4,5) retrograde", 300_000_000, Some(1_030_000_000), 0, 1843.0),
            "(5,4)+(4,5) retrograde: 300.0M of 1.03G done in 30m43s"
        );
        assert_eq!(summary_line("t", 7, None, 0, 0.5), "t: 7 done in 0.5s");
        // The bar itself is not moved to its end before the line is made.
        let p = Progress::new(true, "t", 1000);
        p.add(400);
        assert_eq!((p.bar.position(), p.bar.length()), (400, Some(1000)));
    }

    /// A step that goes on from a checkpoint: the units done before count towards the
    /// total and the summary says how many, but the time left is from this run's pace.
    #[test]
    fn a_resumed_step_times_only_its_own_work() {
        // 600 of 1000 after 10 s, 500 of them before: 100 in 10 s, 400 to go.
        assert_eq!(time_left(10.0, 600, 1000, 500), 40.0);
        assert_eq!(time_left(10.0, 600, 1000, 0), 10.0 * 400.0 / 600.0);
        assert_eq!(time_left(1.0, 500, 1000, 500), 500.0, "nothing done yet: one unit's pace");
        assert_eq!(
            summary_line("export 10 pieces", 2_735_147_685, Some(2_735_147_685), 1_504_000_000, 273.0),
            "export 10 pieces: 2.74G done in 4m33s (1.50G of it before, in an earlier run)"
        );
        let p = Progress::new(true, "t", 1000);
        p.resumed(500);
        p.add(100);
        assert_eq!((p.bar.position(), p.before.load(Ordering::Relaxed)), (600, 500));
    }
}
