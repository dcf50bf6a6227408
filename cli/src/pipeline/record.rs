//! What the pipeline hands back: a [`Record`] per line at its [`Pos`], and the [`Summary`].

use crate::line::Problem;
use nostr::event::Event;

/// Where a line is: index into the input list and 1-based line number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// Index of the input (in the order given).
    pub input: usize,
    /// 1-based line number within that input.
    pub line: u64,
}

/// What happened to one non-blank line, handed to the callback in input order.
pub enum Record<'a> {
    /// A valid event seen for the first time. `json` is the event object exactly as it appeared
    /// in the line (the inner object for `EVENT` messages).
    Valid {
        /// The event (owned, so the callback may keep it).
        event: Event,
        /// The event object's text from the input line.
        json: &'a str,
    },
    /// A valid event whose id was already seen as valid at `first`.
    Duplicate {
        /// The event.
        event: &'a Event,
        /// Where the id was first seen.
        first: Pos,
    },
    /// The event's id is not the NIP-01 hash of its content.
    InvalidId(&'a Event),
    /// The id is right but the signature is not valid.
    InvalidSignature(&'a Event),
    /// The line is not an event.
    Unparseable(&'a Problem),
}

/// Totals over all inputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Lines read, blank ones included.
    pub lines: u64,
    /// Whitespace-only lines (skipped).
    pub blank: u64,
    /// Lines holding an event: `valid + invalid_id + invalid_sig + duplicates`.
    pub events: u64,
    /// Distinct valid events.
    pub valid: u64,
    /// Events whose id does not match their content.
    pub invalid_id: u64,
    /// Events with a correct id but an invalid signature.
    pub invalid_sig: u64,
    /// Non-blank lines that are not events.
    pub unparseable: u64,
    /// Valid events whose id was seen on an earlier line.
    pub duplicates: u64,
    /// Distinct public keys of valid events.
    pub authors: u64,
    /// Threads that checked lines: the workers that could be started, or 1 when the caller's
    /// thread did all the work because the system refused new threads.
    pub threads: usize,
    /// Wall-clock seconds from the start of reading to the last line handled.
    pub seconds: f64,
    /// Read errors (each ends its input early; the other inputs are still read).
    pub io_errors: Vec<String>,
}

impl Summary {
    /// Lines rejected: invalid ids, invalid signatures and unparseable lines.
    pub fn rejected(&self) -> u64 {
        self.invalid_id + self.invalid_sig + self.unparseable
    }

    /// `events / seconds` (0 when no time elapsed).
    pub fn events_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.events as f64 / self.seconds
        } else {
            0.0
        }
    }
}
