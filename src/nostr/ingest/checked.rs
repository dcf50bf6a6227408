//! What a ticket resolves to: the event with its verdict, or why it has none.

use crate::nostr::Verdict;
use core::fmt;

/// An event with its verdict, handed back by a [`Ticket`](super::Ticket).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked<E> {
    /// The submitted event, moved back to the caller.
    pub event: E,
    /// Its verdict, as `Event::verify` decides.
    pub verdict: Verdict,
}

/// Why an event got no verdict.
#[derive(Debug, PartialEq, Eq)]
pub enum IngestError<E> {
    /// The service is shutting down or gone; the event is handed back unchecked.
    Closed(E),
    /// The worker dropped the event without a verdict (only possible if a worker thread
    /// panicked).
    Lost,
}

impl<E> fmt::Display for IngestError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IngestError::Closed(_) => "ingest service is closed",
            IngestError::Lost => "event lost by a failed worker",
        })
    }
}

impl<E: fmt::Debug> std::error::Error for IngestError<E> {}
