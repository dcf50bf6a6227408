//! The pipeline's settings: [`Options`], and the tests' fault-injection hooks.

use crate::budget::DEFAULT_MAX_IN_FLIGHT_BYTES;

/// Default cap on one line's size: 5 MiB, the largest message rust-nostr's relay pool accepts
/// (`MAX_MESSAGE_SIZE` in nostr-relay-pool). Longer lines are reported, not read into memory.
pub const DEFAULT_MAX_LINE_BYTES: usize = 5 << 20;

/// Tuning and output switches for [`run`](super::run).
#[derive(Clone, Debug)]
pub struct Options {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Lines longer than this are rejected as too long.
    pub max_line_bytes: usize,
    /// A chunk is sent once it holds this many lines ...
    pub chunk_lines: usize,
    /// ... or this many bytes.
    pub chunk_bytes: usize,
    /// Budget for the bytes in flight: chunks read but not yet handed on, with their decoded
    /// events. One chunk is always admitted, so a single line above the budget still goes through.
    pub max_in_flight_bytes: usize,
    /// Draw a progress bar on standard error.
    pub progress: bool,
    #[cfg(test)]
    pub(crate) hooks: Hooks,
}

/// Fault injection for the tests.
#[cfg(test)]
#[derive(Clone, Debug, Default)]
pub(crate) struct Hooks {
    /// Threads the pipeline may start; further spawns fail as if the system refused them.
    pub(crate) max_spawns: Option<usize>,
    /// Decoding this line (1-based, any input) panics.
    pub(crate) panic_parsing_line: Option<u64>,
    /// Verifying a batch that holds this line's event panics.
    pub(crate) panic_verifying_line: Option<u64>,
}

impl Options {
    /// Defaults for `threads` workers: 5 MiB lines, chunks of 1024 lines or 1 MiB, 64 MiB in
    /// flight, no progress bar.
    pub fn new(threads: usize) -> Self {
        Options {
            threads: threads.max(1),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            chunk_lines: 1024,
            chunk_bytes: 1 << 20,
            max_in_flight_bytes: DEFAULT_MAX_IN_FLIGHT_BYTES,
            progress: false,
            #[cfg(test)]
            hooks: Hooks::default(),
        }
    }
}

/// The fault-injection hooks, or nothing outside the tests.
#[cfg(not(test))]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Hooks;

impl Hooks {
    pub(super) fn of(_opts: &Options) -> Self {
        #[cfg(test)]
        return _opts.hooks.clone();
        #[cfg(not(test))]
        Hooks
    }
}
