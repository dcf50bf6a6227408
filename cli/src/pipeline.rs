//! The parallel, order-preserving check pipeline.
//!
//! ```text
//! reader thread ──chunks──▶ N workers (parse + verify_batch) ──results──▶ caller's thread
//!       ▲                                                                   (re-order, dedupe,
//!       └──────────────────────────── credits ◀──────────────────────────────  callback)
//! ```
//! The reader needs a credit to send a chunk and the caller's thread returns it after the
//! chunk's lines were handed to the callback in order, so at most [`Options::in_flight`]
//! chunks (each at most [`Options::chunk_bytes`] plus one line) exist at any time.
//!
//! Duplicates: a valid event whose id already appeared on an earlier line as a valid event is a
//! duplicate of that line. It is not counted as valid again and is not handed on as valid. The
//! id alone decides: the same id with a different (also valid) signature is a duplicate, since
//! the id commits to everything the author said. Invalid lines never "claim" an id, so a forged
//! copy listed before the genuine event does not hide it. The id and author sets are the only
//! state that grows with the input (about 80 bytes per distinct valid event).

use crate::input::{read_line_capped, Input, LineRead};
use crate::line::{parse_line, Problem};
use crate::progress::Progress;
use nostr::event::Event;
use nostr_verify::{Verdict, VerifyBatchExt};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

/// Default cap on one line's size: 16 MiB. Longer lines are reported, not read into memory.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;

/// Tuning and output switches for [`run`].
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
    /// Chunks in flight at most (reader, workers and re-order buffer together).
    pub in_flight: usize,
    /// Draw a progress bar on standard error.
    pub progress: bool,
}

impl Options {
    /// Defaults for `threads` workers: 16 MiB lines, chunks of 1024 lines or 1 MiB,
    /// 4 chunks in flight per worker, no progress bar.
    pub fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        Options {
            threads,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            chunk_lines: 1024,
            chunk_bytes: 1 << 20,
            in_flight: 4 * threads,
            progress: false,
        }
    }
}

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

/// One line of a chunk: its number and its byte range in `Chunk::data`, or its length when it
/// was too long to keep.
struct RawLine {
    no: u64,
    range: (usize, usize),
    too_long: Option<u64>,
}

struct Chunk {
    seq: u64,
    input: usize,
    /// The line cap the reader applied (for the too-long message).
    cap: usize,
    data: Vec<u8>,
    lines: Vec<RawLine>,
}

/// A worker's result for one line.
enum Outcome {
    Blank,
    Problem(Problem),
    Event {
        event: Event,
        span: (usize, usize),
        verdict: Verdict,
    },
}

struct Done {
    chunk: Chunk,
    outcomes: Vec<Outcome>,
}

/// Checks every line of `inputs` on `opts.threads` workers and calls `on_record` for each
/// non-blank line in input order.
///
/// # Errors
/// The first error returned by `on_record`; processing stops there. Read errors do not stop the
/// run: they are listed in [`Summary::io_errors`].
pub fn run<F>(inputs: Vec<Input>, opts: &Options, mut on_record: F) -> io::Result<Summary>
where
    F: FnMut(Pos, Record<'_>) -> io::Result<()>,
{
    let start = Instant::now();
    let total_size: Option<u64> = inputs.iter().map(|i| i.size).sum();
    let raw_bytes: Vec<Arc<AtomicU64>> = inputs.iter().map(|i| i.raw_bytes.clone()).collect();
    let bytes_read = || {
        raw_bytes
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum::<u64>()
    };

    let (chunk_tx, chunk_rx) = mpsc::sync_channel::<Chunk>(opts.threads);
    let chunk_rx = Arc::new(Mutex::new(chunk_rx));
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    let (credit_tx, credit_rx) = mpsc::sync_channel::<()>(opts.in_flight.max(1));
    for _ in 0..opts.in_flight.max(1) {
        credit_tx
            .send(())
            .map_err(|_| io::Error::other("credit channel closed"))?;
    }

    let reader_opts = opts.clone();
    let reader = thread::spawn(move || read_all(inputs, &reader_opts, &chunk_tx, &credit_rx));
    let workers: Vec<_> = (0..opts.threads)
        .map(|_| {
            let rx = chunk_rx.clone();
            let tx = done_tx.clone();
            thread::spawn(move || work(&rx, &tx))
        })
        .collect();
    // Only the workers hold the chunk receiver and the result sender from here on, so each side
    // sees the other hang up (a callback error must not leave the reader blocked on a send).
    drop(chunk_rx);
    drop(done_tx);

    let mut progress = Progress::new(opts.progress, total_size);
    let mut summary = Summary::default();
    let mut seen: HashMap<[u8; 32], Pos> = HashMap::new();
    let mut authors: HashSet<[u8; 32]> = HashSet::new();
    let mut pending: BTreeMap<u64, Done> = BTreeMap::new();
    let mut next = 0u64;
    let mut result = Ok(());
    'collect: for done in done_rx.iter() {
        pending.insert(done.chunk.seq, done);
        while let Some(done) = pending.remove(&next) {
            next += 1;
            let Done { chunk, outcomes } = done;
            for (raw, outcome) in chunk.lines.iter().zip(outcomes) {
                let pos = Pos {
                    input: chunk.input,
                    line: raw.no,
                };
                summary.lines += 1;
                let r = match outcome {
                    Outcome::Blank => {
                        summary.blank += 1;
                        continue;
                    }
                    Outcome::Problem(p) => {
                        summary.unparseable += 1;
                        on_record(pos, Record::Unparseable(&p))
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
                                on_record(pos, Record::InvalidId(&event))
                            }
                            Verdict::InvalidSignature => {
                                summary.invalid_sig += 1;
                                on_record(pos, Record::InvalidSignature(&event))
                            }
                            Verdict::Valid => match seen.get(event.id.as_bytes()) {
                                Some(&first) => {
                                    summary.duplicates += 1;
                                    on_record(
                                        pos,
                                        Record::Duplicate {
                                            event: &event,
                                            first,
                                        },
                                    )
                                }
                                None => {
                                    seen.insert(event.id.to_bytes(), pos);
                                    authors.insert(event.pubkey.to_bytes());
                                    summary.valid += 1;
                                    // The span came from `parse_line` on these very bytes, whose
                                    // UTF-8 it checked; the fallback is unreachable.
                                    let json = chunk
                                        .data
                                        .get(raw.range.0..raw.range.1)
                                        .and_then(|l| l.get(span.0..span.1))
                                        .and_then(|b| core::str::from_utf8(b).ok())
                                        .unwrap_or_default();
                                    on_record(pos, Record::Valid { event, json })
                                }
                            },
                        }
                    }
                };
                if let Err(e) = r {
                    result = Err(e);
                    break 'collect;
                }
            }
            // The reader may have finished already; then nobody needs the credit back.
            let _ = credit_tx.send(());
            progress.update(bytes_read(), summary.lines, summary.events, start);
        }
    }
    progress.finish();
    // On a callback error, unblock the reader (no more credits needed) and the workers.
    drop(credit_tx);
    drop(done_rx);
    let io_errors = reader
        .join()
        .unwrap_or_else(|_| vec!["reader thread failed".to_string()]);
    let mut worker_failed = false;
    for w in workers {
        worker_failed |= w.join().is_err();
    }
    result?;
    summary.io_errors = io_errors;
    if worker_failed || !pending.is_empty() {
        summary
            .io_errors
            .push("internal error: a worker thread failed".to_string());
    }
    summary.authors = authors.len() as u64;
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// The reader thread: cuts every input into chunks. Returns the read errors.
fn read_all(
    inputs: Vec<Input>,
    opts: &Options,
    chunk_tx: &SyncSender<Chunk>,
    credit_rx: &Receiver<()>,
) -> Vec<String> {
    let mut errors = Vec::new();
    let mut seq = 0u64;
    // Sends a chunk once a credit is available; false when the pipeline is shutting down.
    let send = |chunk: Chunk| -> bool { credit_rx.recv().is_ok() && chunk_tx.send(chunk).is_ok() };
    for (index, mut input) in inputs.into_iter().enumerate() {
        let mut no = 0u64;
        let mut chunk = Chunk {
            seq,
            input: index,
            cap: opts.max_line_bytes,
            data: Vec::new(),
            lines: Vec::new(),
        };
        loop {
            let start = chunk.data.len();
            let got = read_line_capped(&mut input.reader, &mut chunk.data, opts.max_line_bytes);
            match got {
                Ok(LineRead::Eof) => break,
                Ok(LineRead::Line) => {
                    no += 1;
                    chunk.lines.push(RawLine {
                        no,
                        range: (start, chunk.data.len()),
                        too_long: None,
                    });
                }
                Ok(LineRead::TooLong(len)) => {
                    no += 1;
                    chunk.lines.push(RawLine {
                        no,
                        range: (start, start),
                        too_long: Some(len),
                    });
                }
                Err(e) => {
                    errors.push(format!("{}: read error after line {no}: {e}", input.name));
                    break;
                }
            }
            if chunk.lines.len() >= opts.chunk_lines || chunk.data.len() >= opts.chunk_bytes {
                seq += 1;
                let full = std::mem::replace(
                    &mut chunk,
                    Chunk {
                        seq,
                        input: index,
                        cap: opts.max_line_bytes,
                        data: Vec::new(),
                        lines: Vec::new(),
                    },
                );
                if !send(full) {
                    return errors;
                }
            }
        }
        if !chunk.lines.is_empty() {
            seq += 1;
            if !send(chunk) {
                return errors;
            }
        }
    }
    errors
}

/// A worker thread: parses and verifies chunks until the reader is done.
fn work(chunks: &Mutex<Receiver<Chunk>>, done: &mpsc::Sender<Done>) {
    loop {
        let next = {
            let rx = chunks
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            rx.recv()
        };
        let Ok(chunk) = next else { return };
        let outcomes = process_guarded(&chunk, process);
        if done.send(Done { chunk, outcomes }).is_err() {
            return;
        }
    }
}

/// Runs `f` on the chunk; if it panics (a bug, never expected), every line of the chunk is
/// reported as [`Problem::Internal`] instead of losing the chunk and stalling the pipeline.
fn process_guarded(chunk: &Chunk, f: fn(&Chunk) -> Vec<Outcome>) -> Vec<Outcome> {
    catch_unwind(AssertUnwindSafe(|| f(chunk))).unwrap_or_else(|_| {
        chunk
            .lines
            .iter()
            .map(|_| Outcome::Problem(Problem::Internal))
            .collect()
    })
}

/// Parses every line of a chunk, then verifies all its events in one batch.
fn process(chunk: &Chunk) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(chunk.lines.len());
    let mut events = Vec::with_capacity(chunk.lines.len());
    let mut slots = Vec::with_capacity(chunk.lines.len());
    for raw in &chunk.lines {
        let outcome = match raw.too_long {
            Some(len) => Outcome::Problem(Problem::TooLong {
                cap: chunk.cap,
                len,
            }),
            None => match parse_line(&chunk.data[raw.range.0..raw.range.1]) {
                Ok(None) => Outcome::Blank,
                Ok(Some(found)) => {
                    slots.push((outcomes.len(), found.span));
                    events.push(found.event);
                    Outcome::Blank // replaced below
                }
                Err(p) => Outcome::Problem(p),
            },
        };
        outcomes.push(outcome);
    }
    let verdicts = events.verify_batch();
    // One verdict per event is the trait's contract; a violation is caught by `process_guarded`.
    assert_eq!(
        verdicts.len(),
        events.len(),
        "verify_batch returned a wrong number of verdicts"
    );
    for (((slot, span), event), verdict) in slots.into_iter().zip(events).zip(verdicts) {
        outcomes[slot] = Outcome::Event {
            event,
            span,
            verdict,
        };
    }
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of every kind: blank, not JSON, wrong-id events, relay messages.
    fn mixed_input(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            let line = match i % 5 {
                0 => String::new(),
                1 => format!("garbage {i}"),
                2 => format!(
                    r#"{{"id":"{i:064x}","pubkey":"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798","created_at":{i},"kind":1,"tags":[],"content":"","sig":"{:0128x}"}}"#,
                    0
                ),
                3 => format!("[\"EVENT\",\"s\",{{\"kind\":{i}}}]"),
                _ => "x".repeat(2 * i),
            };
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        out
    }

    fn records(opts: &Options, input: &[u8]) -> (Vec<(u64, String)>, Summary) {
        let mut seen = Vec::new();
        let input = Input::from_reader("mem", io::Cursor::new(input.to_vec()));
        let summary = run(vec![input], opts, |pos, rec| {
            let what = match rec {
                Record::Valid { .. } => "valid".to_string(),
                Record::Duplicate { first, .. } => format!("dup of {}", first.line),
                Record::InvalidId(e) => format!("invalid id {}", e.id),
                Record::InvalidSignature(e) => format!("invalid sig {}", e.id),
                Record::Unparseable(p) => p.to_string(),
            };
            seen.push((pos.line, what));
            Ok(())
        })
        .expect("no callback errors");
        (seen, summary)
    }

    #[test]
    fn order_and_counts_do_not_depend_on_chunking_or_threads() {
        let input = mixed_input(300);
        let mut reference = Options::new(1);
        reference.max_line_bytes = 400;
        let (want, want_summary) = records(&reference, &input);
        assert_eq!(want.len(), 240, "blank lines are not handed on");
        assert_eq!(want_summary.invalid_id, 60);
        assert_eq!(want_summary.unparseable, 180);
        assert!(want
            .iter()
            .any(|(_, r)| r.contains("line too long (408 bytes, limit 400)")));
        for (threads, chunk_lines, in_flight) in [(4, 1, 1), (3, 2, 2), (2, 7, 8), (5, 1, 64)] {
            let mut opts = Options::new(threads);
            opts.max_line_bytes = 400;
            opts.chunk_lines = chunk_lines;
            opts.chunk_bytes = 64;
            opts.in_flight = in_flight;
            let (got, summary) = records(&opts, &input);
            assert_eq!(got, want, "threads {threads}, chunks of {chunk_lines}");
            assert_eq!(
                Summary {
                    seconds: 0.0,
                    ..summary
                },
                Summary {
                    seconds: 0.0,
                    ..want_summary.clone()
                }
            );
        }
    }

    #[test]
    fn callback_error_stops_the_run_cleanly() {
        let input = Input::from_reader("mem", io::Cursor::new(mixed_input(5000)));
        let mut opts = Options::new(2);
        opts.chunk_lines = 10;
        let mut calls = 0;
        let err = run(vec![input], &opts, |_, _| {
            calls += 1;
            if calls == 100 {
                return Err(io::Error::other("disk full"));
            }
            Ok(())
        })
        .unwrap_err();
        assert_eq!((err.to_string().as_str(), calls), ("disk full", 100));
    }

    #[test]
    fn a_panicking_worker_reports_its_lines_instead_of_stalling() {
        let chunk = Chunk {
            seq: 0,
            input: 0,
            cap: 10,
            data: b"abc".to_vec(),
            lines: (1..=3)
                .map(|no| RawLine {
                    no,
                    range: (0, 1),
                    too_long: None,
                })
                .collect(),
        };
        let out = process_guarded(&chunk, |_| panic!("injected"));
        assert_eq!(out.len(), 3);
        assert!(out
            .iter()
            .all(|o| matches!(o, Outcome::Problem(Problem::Internal))));
        let ok = process_guarded(&chunk, process);
        assert!(ok
            .iter()
            .all(|o| matches!(o, Outcome::Problem(Problem::NotJson(_)))));
    }
}
