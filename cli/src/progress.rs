//! A one-line progress bar on standard error, redrawn at most ten times a second.

use std::io::Write;
use std::time::{Duration, Instant};

const WIDTH: usize = 30;
const EVERY: Duration = Duration::from_millis(100);

pub(crate) struct Progress {
    on: bool,
    total: Option<u64>,
    last: Option<Instant>,
    drawn: bool,
}

impl Progress {
    pub(crate) fn new(on: bool, total: Option<u64>) -> Self {
        Progress {
            on,
            total,
            last: None,
            drawn: false,
        }
    }

    /// Redraws the bar if it is on and the last redraw is old enough.
    pub(crate) fn update(&mut self, bytes: u64, lines: u64, events: u64, start: Instant) {
        if !self.on || self.last.is_some_and(|t| t.elapsed() < EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        let rate = events as f64 / secs;
        let mib = bytes as f64 / (1u64 << 20) as f64;
        let line = match self.total {
            Some(total) if total > 0 => {
                let frac = (bytes as f64 / total as f64).clamp(0.0, 1.0);
                let full = (frac * WIDTH as f64) as usize;
                format!(
                    "\r[{}{}] {:3.0}% {mib:.1} MiB  {lines} lines  {rate:.0} events/s ",
                    "#".repeat(full),
                    " ".repeat(WIDTH - full),
                    frac * 100.0
                )
            }
            _ => format!("\r{mib:.1} MiB  {lines} lines  {rate:.0} events/s "),
        };
        let mut err = std::io::stderr().lock();
        // A progress bar that cannot be drawn is not worth failing the run for.
        let _ = err.write_all(line.as_bytes()).and_then(|()| err.flush());
        self.drawn = true;
    }

    /// Erases the bar.
    pub(crate) fn finish(&mut self) {
        if self.drawn {
            let _ = std::io::stderr().write_all(b"\r\x1b[2K");
            self.drawn = false;
        }
    }
}
