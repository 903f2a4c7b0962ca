//! Progress of long work, on stderr, for every tool alike: a bar that
//! appears only once the work has gone on for a second (short runs print
//! nothing), only when stderr is a terminal (nothing on a pipe or in a log
//! file), and never when the tool prints JSON. Cleared when the work ends,
//! so the summary lines that follow are what stays on screen.
//!
//! `HRR_PROGRESS_DELAY_MS` overrides the one-second delay (tests set 0).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its bar appears.
pub const DEFAULT_DELAY: Duration = Duration::from_secs(1);

/// What a stage counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Archive events.
    Events,
    /// Bytes (shown as KiB, MiB, …).
    Bytes,
    /// D2H pairs compared.
    Pairs,
}

/// One tool's progress bar; see the module docs.
pub struct Progress {
    bar: ProgressBar,
    /// stderr is a terminal and the tool is not printing JSON.
    enabled: bool,
    shown: bool,
    start: Instant,
    delay: Duration,
}

impl Progress {
    /// A bar for work starting now; `quiet` (the tool prints JSON) keeps
    /// it hidden whatever stderr is.
    pub fn new(quiet: bool) -> Progress {
        let delay = std::env::var("HRR_PROGRESS_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(DEFAULT_DELAY, Duration::from_millis);
        Progress {
            bar: ProgressBar::hidden(),
            enabled: !quiet && std::io::stderr().is_terminal(),
            shown: false,
            start: Instant::now(),
            delay,
        }
    }

    /// Starts a stage: `label` counting up to `total` `unit`s (0: unknown).
    pub fn stage(&mut self, label: &str, total: u64, unit: Unit) {
        let template = match unit {
            Unit::Bytes => {
                "{spinner} {msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})"
                    .to_string()
            }
            Unit::Events | Unit::Pairs => format!(
                "{{spinner}} {{msg}} [{{bar:40}}] {{human_pos}}/{{human_len}} {} (eta {{eta}})",
                if unit == Unit::Events {
                    "events"
                } else {
                    "pairs"
                }
            ),
        };
        let style = ProgressStyle::with_template(&template)
            .expect("templates are static and valid")
            .progress_chars("=> ");
        self.bar.set_style(style);
        self.bar.set_message(label.to_string());
        self.bar.set_length(total);
        self.bar.set_position(0);
    }

    /// Changes the current stage's total (known only once work began).
    pub fn set_total(&mut self, total: u64) {
        if self.bar.length() != Some(total) {
            self.bar.set_length(total);
        }
    }

    /// Work done so far in the current stage.
    pub fn set(&mut self, pos: u64) {
        // Totals come from manifests, which do not count the eof trailer.
        if self.bar.length().is_some_and(|len| pos > len) {
            self.bar.set_length(pos);
        }
        self.bar.set_position(pos);
        if self.enabled && !self.shown && self.start.elapsed() >= self.delay {
            self.shown = true;
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            // Drawn at once (position updates are rate-limited), then kept
            // moving by a ticker while the work goes quiet (a long kernel).
            self.bar.tick();
            self.bar.enable_steady_tick(Duration::from_millis(250));
        }
    }

    /// Whether the bar has been drawn (stderr a terminal, work long enough).
    pub fn shown(&self) -> bool {
        self.shown
    }

    /// Removes the bar from the terminal.
    pub fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_or_short_work_never_shows() {
        let mut p = Progress::new(true);
        p.delay = Duration::ZERO;
        p.stage("replay", 10, Unit::Events);
        p.set(5);
        assert!(!p.shown(), "--json keeps the bar hidden");

        let mut p = Progress::new(false);
        p.enabled = true;
        p.delay = Duration::from_secs(3600);
        p.stage("replay", 10, Unit::Bytes);
        p.set(5);
        assert!(!p.shown(), "work shorter than the delay shows nothing");
        p.delay = Duration::ZERO;
        p.set(6);
        assert!(p.shown());
    }
}
