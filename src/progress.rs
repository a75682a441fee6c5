//! Progress reporting from library code. The library never prints: long steps call a
//! [`Reporter`], which the command line renders as progress bars; [`thousands`] formats
//! the counts in its messages.

/// Receives progress of long steps. Calls may come from several threads.
pub trait Reporter: Send + Sync {
    /// A step with `total` units of work begins.
    fn begin(&self, label: &str, total: u64);
    /// `n` more units of the current step are done.
    fn advance(&self, n: u64);
    /// The first `n` units of the current step were done by an earlier run (a step that
    /// goes on from a checkpoint): counted as done, but not in the rate, so that the
    /// time left is that of this run's pace. Called once, right after `begin`.
    fn resumed(&self, n: u64) {
        self.advance(n);
    }
    /// The current step is finished.
    fn end(&self);
    /// A one-line message worth showing (a phase summary, a resumed checkpoint).
    fn note(&self, _message: &str) {}
    /// A one-line warning: something the user should act on although the work goes on
    /// (the command line shows it even when quiet).
    fn warn(&self, _message: &str) {}
}

/// A reporter that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Reporter for Silent {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
}

/// Group digits by thousands: 1234567 -> "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
