//! The unit of work: a chunk of input lines as the reader cut them, the budget bytes it holds,
//! and the outcomes a worker found for its lines.

use crate::line::Problem;
use nostr::event::Event;
use nostr_verify::Verdict;

/// Bytes the reader takes from the budget for every byte of text, on top of the text itself,
/// for what a worker allocates while handling it: the decoded event (about the size of its JSON;
/// a worker charges more if it turns out larger) and the serialisation of the event that is
/// hashed to check its id. Taken in advance, so a worker never has to wait for the budget.
const DECODE_ALLOWANCE: usize = 2;

/// One entry of a chunk.
pub(super) enum RawLine {
    /// A line whose bytes are `Chunk::data[range]`.
    Text { no: u64, range: (usize, usize) },
    /// A line longer than the cap, of this many bytes; its bytes were not kept.
    TooLong { no: u64, len: u64 },
    /// `count` whitespace-only lines, the first numbered `no`.
    Blank { no: u64, count: u64 },
}

impl RawLine {
    pub(super) fn no(&self) -> u64 {
        match *self {
            RawLine::Text { no, .. } | RawLine::TooLong { no, .. } | RawLine::Blank { no, .. } => {
                no
            }
        }
    }
}

/// Consecutive lines of one input, with their text in one buffer.
pub(super) struct Chunk {
    /// Position in the run: chunks are handed on in this order.
    pub(super) seq: u64,
    /// Index of the input the lines come from.
    pub(super) input: usize,
    /// The line cap the reader applied (for the too-long message).
    pub(super) cap: usize,
    /// The text of the chunk's lines, back to back.
    pub(super) data: Vec<u8>,
    pub(super) lines: Vec<RawLine>,
    /// Bytes of the budget this chunk holds.
    pub(super) held: usize,
}

impl Chunk {
    pub(super) fn new(seq: u64, input: usize, cap: usize) -> Self {
        Chunk {
            seq,
            input,
            cap,
            data: Vec::new(),
            lines: Vec::new(),
            held: 0,
        }
    }

    /// The bytes the chunk will need: its text and its line table as read, plus
    /// [`DECODE_ALLOWANCE`] bytes per byte of text for the work on it.
    pub(super) fn footprint(&self) -> usize {
        self.data.capacity()
            + self.lines.capacity() * core::mem::size_of::<RawLine>()
            + self.allowance()
    }

    /// What the chunk's bytes of text are expected to cost a worker (see [`DECODE_ALLOWANCE`]).
    pub(super) fn allowance(&self) -> usize {
        DECODE_ALLOWANCE.saturating_mul(self.data.len())
    }
}

/// A worker's result for one entry of a chunk.
pub(super) enum Outcome {
    Blank,
    Problem(Problem),
    Event {
        event: Event,
        span: (usize, usize),
        verdict: Verdict,
    },
}

/// A processed chunk: one outcome per entry of `chunk.lines`.
pub(super) struct Done {
    pub(super) chunk: Chunk,
    pub(super) outcomes: Vec<Outcome>,
}
