//! The caller's side of the pipeline: puts the processed chunks back in input order, counts
//! every line, removes duplicates and hands each non-blank line's [`Record`] to the callback.

use super::chunk::{Done, Outcome, RawLine};
use super::record::{Pos, Record, Summary};
use crate::budget::{Account, Budget};
use crate::progress::Progress;
use nostr_verify::Verdict;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The caller's side: puts chunks back in order, counts, removes duplicates, calls back.
pub(super) struct Collector<F> {
    on_record: F,
    budget: Arc<Budget>,
    summary: Summary,
    seen: HashMap<[u8; 32], Pos>,
    authors: HashSet<[u8; 32]>,
    pending: BTreeMap<u64, Done>,
    next: u64,
    progress: Progress,
    raw_bytes: Vec<Arc<AtomicU64>>,
    start: Instant,
    /// The callback's first error; nothing is handed on after it.
    result: io::Result<()>,
}

impl<F> Collector<F>
where
    F: FnMut(Pos, Record<'_>) -> io::Result<()>,
{
    /// A collector for a run started at `start`; `raw_bytes` are the inputs' byte counters
    /// (for the progress bar).
    pub(super) fn new(
        on_record: F,
        budget: Arc<Budget>,
        progress: Progress,
        raw_bytes: Vec<Arc<AtomicU64>>,
        start: Instant,
    ) -> Self {
        Collector {
            on_record,
            budget,
            summary: Summary::default(),
            seen: HashMap::new(),
            authors: HashSet::new(),
            pending: BTreeMap::new(),
            next: 0,
            progress,
            raw_bytes,
            start,
            result: Ok(()),
        }
    }

    /// Ends the run: the callback's first error, or the totals (authors counted) and whether
    /// chunks were left waiting for an earlier one that never came (a worker failed); their
    /// budget is given back.
    pub(super) fn finish(mut self) -> io::Result<(Summary, bool)> {
        self.progress.finish();
        self.result?;
        let stranded = !self.pending.is_empty();
        for done in self.pending.into_values() {
            self.budget.release(Account::Chunks, done.chunk.held);
        }
        let mut summary = self.summary;
        summary.authors = self.authors.len() as u64;
        Ok((summary, stranded))
    }

    /// Takes one processed chunk and hands on every chunk that is now next in order. `Err(())`
    /// once the callback failed (the error is kept in `result`).
    pub(super) fn accept(&mut self, done: Done) -> Result<(), ()> {
        if self.result.is_err() {
            self.budget.release(Account::Chunks, done.chunk.held);
            return Err(());
        }
        self.pending.insert(done.chunk.seq, done);
        while let Some(done) = self.pending.remove(&self.next) {
            self.next += 1;
            let held = done.chunk.held;
            let r = self.hand_on(done);
            self.budget.release(Account::Chunks, held);
            if let Err(e) = r {
                self.result = Err(e);
                return Err(());
            }
            let bytes = self
                .raw_bytes
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .sum::<u64>();
            self.progress
                .update(bytes, self.summary.lines, self.summary.events, self.start);
        }
        Ok(())
    }

    /// Counts one chunk's lines and calls back for each non-blank one.
    fn hand_on(&mut self, done: Done) -> io::Result<()> {
        let Done { chunk, outcomes } = done;
        let summary = &mut self.summary;
        for (raw, outcome) in chunk.lines.iter().zip(outcomes) {
            let pos = Pos {
                input: chunk.input,
                line: raw.no(),
            };
            if let RawLine::Blank { count, .. } = *raw {
                summary.lines += count;
                summary.blank += count;
                continue;
            }
            summary.lines += 1;
            match outcome {
                Outcome::Blank => summary.blank += 1,
                Outcome::Problem(p) => {
                    summary.unparseable += 1;
                    (self.on_record)(pos, Record::Unparseable(&p))?;
                }
                Outcome::Event {
                    event,
                    span,
                    verdict,
                } => {
                    summary.events += 1;
                    match verdict {
                        Verdict::InvalidId => {
                            summary.invalid_id += 1;
                            (self.on_record)(pos, Record::InvalidId(&event))?;
                        }
                        Verdict::InvalidSignature => {
                            summary.invalid_sig += 1;
                            (self.on_record)(pos, Record::InvalidSignature(&event))?;
                        }
                        Verdict::Valid => match self.seen.get(event.id.as_bytes()) {
                            Some(&first) => {
                                summary.duplicates += 1;
                                (self.on_record)(
                                    pos,
                                    Record::Duplicate {
                                        event: &event,
                                        first,
                                    },
                                )?;
                            }
                            None => {
                                self.seen.insert(event.id.to_bytes(), pos);
                                self.authors.insert(event.pubkey.to_bytes());
                                summary.valid += 1;
                                // The span came from `parse_line` on these very bytes, whose
                                // UTF-8 it checked; the fallback is unreachable.
                                let json = match *raw {
                                    RawLine::Text { range, .. } => chunk
                                        .data
                                        .get(range.0..range.1)
                                        .and_then(|l| l.get(span.0..span.1))
                                        .and_then(|b| core::str::from_utf8(b).ok())
                                        .unwrap_or_default(),
                                    _ => "",
                                };
                                (self.on_record)(pos, Record::Valid { event, json })?;
                            }
                        },
                    }
                }
            }
        }
        Ok(())
    }
}
