//! The parallel, order-preserving check pipeline.
//!
//! ```text
//! reader thread ──chunks──▶ N workers (parse + verify_batch) ──results──▶ caller's thread
//!       ▲                                                                   (re-order, dedupe,
//!       └──────────────────────── byte budget ◀─────────────────────────────  callback)
//! ```
//! Memory in flight is bounded by bytes, not by a number of chunks: the reader takes a chunk's
//! bytes from a [`Budget`] as it fills the chunk, with an allowance for decoding and hashing it
//! (waiting while the budget is spent); a worker charges whatever the chunk's decoded events take
//! beyond that allowance, and the caller's thread gives all of it back once the chunk's lines were
//! handed to the callback in order. With 5 MiB lines that is a few lines in flight under the
//! default 64 MiB, with 500-byte lines tens of thousands.
//!
//! Runs of empty lines are skipped in bulk by the reader ([`skip_newlines`]) and a run of blank
//! lines travels as one entry, so a file of nothing but newlines costs a scan of its bytes.
//!
//! Threads: the reader and the workers are started with [`thread::Builder::spawn`]. When the
//! system refuses a thread, the run goes on with the workers that did start; when no worker or no
//! reader can be started, the caller's thread reads, checks and hands on every chunk itself. A
//! panic while decoding or verifying one line (a bug, never expected) is caught for that line,
//! which is reported as [`Problem::Internal`]; the other lines get their results.
//!
//! Duplicates: a valid event whose id already appeared on an earlier line as a valid event is a
//! duplicate of that line. It is not counted as valid again and is not handed on as valid. The
//! id alone decides: the same id with a different (also valid) signature is a duplicate, since
//! the id commits to everything the author said. Invalid lines never "claim" an id, so a forged
//! copy listed before the genuine event does not hide it. The id and author sets are the only
//! state that grows with the input (about 80 bytes per distinct valid event).

use crate::budget::{event_bytes, Account, Budget, DEFAULT_MAX_IN_FLIGHT_BYTES};
use crate::input::{read_line_capped, skip_newlines, Input, LineRead};
use crate::line::{parse_line, Found, Problem};
use crate::progress::Progress;
use nostr::event::Event;
use nostr_verify::{Verdict, VerifyBatchExt};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Instant;

/// Default cap on one line's size: 5 MiB, the largest message rust-nostr's relay pool accepts
/// (`MAX_MESSAGE_SIZE` in nostr-relay-pool). Longer lines are reported, not read into memory.
pub const DEFAULT_MAX_LINE_BYTES: usize = 5 << 20;

/// Bytes the reader takes from the budget for every byte of text, on top of the text itself,
/// for what a worker allocates while handling it: the decoded event (about the size of its JSON;
/// a worker charges more if it turns out larger) and the serialisation of the event that is
/// hashed to check its id. Taken in advance, so a worker never has to wait for the budget.
const DECODE_ALLOWANCE: usize = 2;

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

/// One entry of a chunk.
enum RawLine {
    /// A line whose bytes are `Chunk::data[range]`.
    Text { no: u64, range: (usize, usize) },
    /// A line longer than the cap, of this many bytes; its bytes were not kept.
    TooLong { no: u64, len: u64 },
    /// `count` whitespace-only lines, the first numbered `no`.
    Blank { no: u64, count: u64 },
}

impl RawLine {
    fn no(&self) -> u64 {
        match *self {
            RawLine::Text { no, .. } | RawLine::TooLong { no, .. } | RawLine::Blank { no, .. } => {
                no
            }
        }
    }
}

struct Chunk {
    seq: u64,
    input: usize,
    /// The line cap the reader applied (for the too-long message).
    cap: usize,
    data: Vec<u8>,
    lines: Vec<RawLine>,
    /// Bytes of the budget this chunk holds.
    held: usize,
}

impl Chunk {
    fn new(seq: u64, input: usize, cap: usize) -> Self {
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
    fn footprint(&self) -> usize {
        self.data.capacity()
            + self.lines.capacity() * core::mem::size_of::<RawLine>()
            + self.allowance()
    }

    /// What the chunk's bytes of text are expected to cost a worker (see [`DECODE_ALLOWANCE`]).
    fn allowance(&self) -> usize {
        DECODE_ALLOWANCE.saturating_mul(self.data.len())
    }
}

/// A worker's result for one entry of a chunk.
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
/// non-blank line in input order, with its own budget of `opts.max_in_flight_bytes`.
///
/// # Errors
/// The first error returned by `on_record`; processing stops there. Read errors do not stop the
/// run: they are listed in [`Summary::io_errors`].
pub fn run<F>(inputs: Vec<Input>, opts: &Options, on_record: F) -> io::Result<Summary>
where
    F: FnMut(Pos, Record<'_>) -> io::Result<()>,
{
    let budget = Arc::new(Budget::new(opts.max_in_flight_bytes));
    run_with_budget(inputs, opts, &budget, on_record)
}

/// [`run`] drawing on a budget the caller provides (and may share with other holders);
/// `opts.max_in_flight_bytes` is not used.
///
/// # Errors
/// As [`run`].
pub fn run_with_budget<F>(
    inputs: Vec<Input>,
    opts: &Options,
    budget: &Arc<Budget>,
    on_record: F,
) -> io::Result<Summary>
where
    F: FnMut(Pos, Record<'_>) -> io::Result<()>,
{
    let start = Instant::now();
    let total_size: Option<u64> = inputs.iter().map(|i| i.size).sum();
    let raw_bytes: Vec<Arc<AtomicU64>> = inputs.iter().map(|i| i.raw_bytes.clone()).collect();
    let mut collector = Collector {
        on_record,
        budget: budget.clone(),
        summary: Summary::default(),
        seen: HashMap::new(),
        authors: HashSet::new(),
        pending: BTreeMap::new(),
        next: 0,
        progress: Progress::new(opts.progress, total_size),
        raw_bytes,
        start,
        result: Ok(()),
    };
    let mut spawns = Spawner::new(opts);

    let (done_tx, done_rx) = mpsc::channel::<Done>();
    // The inputs (and the workers to hand chunks to) reach the reader through a channel, so a
    // refused spawn does not lose them.
    let (inputs_tx, inputs_rx) = mpsc::channel::<(Vec<Input>, Dispatch)>();
    // Set when the callback failed: the reader stops at its next line.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (reader_opts, budget, stop) = (opts.clone(), budget.clone(), stop.clone());
        spawns
            .spawn("nostr-verify-reader".to_string(), move || {
                let Ok((inputs, dispatch)) = inputs_rx.recv() else {
                    return Vec::new();
                };
                read_all(inputs, &reader_opts, &budget, &stop, |chunk| {
                    dispatch.send(chunk)
                })
            })
            .ok()
    };
    let idle = Arc::new(IdleWorkers::default());
    let mut dispatch = Dispatch {
        senders: Vec::with_capacity(opts.threads),
        idle: idle.clone(),
    };
    let mut workers: Vec<JoinHandle<()>> = Vec::with_capacity(opts.threads);
    if reader.is_some() {
        for i in 0..opts.threads {
            let (chunk_tx, chunk_rx) = mpsc::channel::<Chunk>();
            let (tx, hooks, budget, worker_idle) = (
                done_tx.clone(),
                Hooks::of(opts),
                budget.clone(),
                idle.clone(),
            );
            let id = dispatch.senders.len();
            match spawns.spawn(format!("nostr-verify-worker-{i}"), move || {
                work(id, &worker_idle, &chunk_rx, &tx, &budget, &hooks)
            }) {
                Ok(h) => {
                    idle.started();
                    dispatch.senders.push(chunk_tx);
                    workers.push(h);
                }
                Err(_) => break,
            }
        }
    }
    // Only the workers hold result senders from here on, and only the reader (through
    // `dispatch`) chunk senders, so each side sees the other hang up.
    drop(done_tx);
    let reader = match reader {
        Some(r) if workers.is_empty() => {
            // A reader without workers: it gets no inputs and returns at once.
            let none = Dispatch {
                senders: Vec::new(),
                idle: idle.clone(),
            };
            let _ = inputs_tx.send((Vec::new(), none));
            let _ = r.join();
            None
        }
        other => other,
    };

    let (io_errors, threads) = match reader {
        Some(reader) => {
            // The reader thread holds its receiver until it returns.
            let _ = inputs_tx.send((inputs, dispatch));
            // After a callback error, the chunks still coming are only given back to the budget
            // (the reader may be waiting for it) until the reader has seen `stop`.
            for done in done_rx.iter() {
                if collector.accept(done).is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
            let errors = reader
                .join()
                .unwrap_or_else(|_| vec!["reader thread failed".to_string()]);
            (errors, workers.len())
        }
        None => {
            // No reader, or no worker: the workers (if any) see the chunk channel closed and
            // stop; the caller's thread does everything.
            drop(done_rx);
            let hooks = Hooks::of(opts);
            let errors = read_all(inputs, opts, budget, &stop, |mut chunk| {
                let outcomes = process(&mut chunk, budget, &hooks);
                collector.accept(Done { chunk, outcomes }).is_ok()
            });
            (errors, 1)
        }
    };
    let mut worker_failed = false;
    for w in workers {
        worker_failed |= w.join().is_err();
    }
    collector.progress.finish();
    collector.result?;
    let mut summary = collector.summary;
    summary.io_errors = io_errors;
    if worker_failed || !collector.pending.is_empty() {
        summary
            .io_errors
            .push("internal error: a worker thread failed".to_string());
    }
    for done in collector.pending.into_values() {
        budget.release(Account::Chunks, done.chunk.held);
    }
    summary.authors = collector.authors.len() as u64;
    summary.threads = threads;
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// Starts named threads, refusing them past the test hook's limit.
struct Spawner {
    #[cfg(test)]
    left: Option<usize>,
}

impl Spawner {
    fn new(_opts: &Options) -> Self {
        Spawner {
            #[cfg(test)]
            left: _opts.hooks.max_spawns,
        }
    }

    fn spawn<T: Send + 'static>(
        &mut self,
        name: String,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<JoinHandle<T>> {
        #[cfg(test)]
        if let Some(left) = self.left.as_mut() {
            if *left == 0 {
                return Err(io::Error::other("thread refused by a test hook"));
            }
            *left -= 1;
        }
        thread::Builder::new().name(name).spawn(f)
    }
}

/// The fault-injection hooks, or nothing outside the tests.
#[cfg(not(test))]
#[derive(Clone, Copy, Debug, Default)]
struct Hooks;

impl Hooks {
    fn of(_opts: &Options) -> Self {
        #[cfg(test)]
        return _opts.hooks.clone();
        #[cfg(not(test))]
        Hooks
    }
}

/// The caller's side: puts chunks back in order, counts, removes duplicates, calls back.
struct Collector<F> {
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
    /// Takes one processed chunk and hands on every chunk that is now next in order. `Err(())`
    /// once the callback failed (the error is kept in `result`).
    fn accept(&mut self, done: Done) -> Result<(), ()> {
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

/// The reader: cuts every input into chunks, taking their bytes from the budget, and passes each
/// to `send` (false: the pipeline is shutting down). Returns the read errors.
fn read_all(
    inputs: Vec<Input>,
    opts: &Options,
    budget: &Budget,
    stop: &AtomicBool,
    mut send: impl FnMut(Chunk) -> bool,
) -> Vec<String> {
    let mut errors = Vec::new();
    let mut seq = 0u64;
    let cap = opts.max_line_bytes;
    for (index, mut input) in inputs.into_iter().enumerate() {
        let mut no = 0u64;
        let mut chunk = Chunk::new(seq, index, cap);
        loop {
            if stop.load(Ordering::Relaxed) {
                budget.release(Account::Chunks, chunk.held);
                return errors;
            }
            let blanks = match skip_newlines(&mut input.reader) {
                Ok(n) => n,
                Err(e) => {
                    errors.push(format!("{}: read error after line {no}: {e}", input.name));
                    break;
                }
            };
            push_blank(&mut chunk, no + 1, blanks);
            no += blanks;
            let start = chunk.data.len();
            let got = read_line_capped(&mut input.reader, &mut chunk.data, cap);
            match got {
                Ok(LineRead::Eof) => break,
                Ok(LineRead::Line) => {
                    no += 1;
                    if chunk.data[start..].trim_ascii().is_empty() {
                        chunk.data.truncate(start);
                        push_blank(&mut chunk, no, 1);
                    } else {
                        let range = (start, chunk.data.len());
                        chunk.lines.push(RawLine::Text { no, range });
                    }
                }
                Ok(LineRead::TooLong(len)) => {
                    no += 1;
                    chunk.lines.push(RawLine::TooLong { no, len });
                }
                Err(e) => {
                    errors.push(format!("{}: read error after line {no}: {e}", input.name));
                    break;
                }
            }
            // Take the bytes the chunk grew by; this waits while the budget is spent.
            let footprint = chunk.footprint();
            if footprint > chunk.held {
                budget.acquire(Account::Chunks, footprint - chunk.held, chunk.held);
                chunk.held = footprint;
            }
            if chunk.lines.len() >= opts.chunk_lines || chunk.data.len() >= opts.chunk_bytes {
                seq += 1;
                let full = std::mem::replace(&mut chunk, Chunk::new(seq, index, cap));
                if !send(full) {
                    return errors;
                }
            }
        }
        if chunk.lines.is_empty() {
            budget.release(Account::Chunks, chunk.held);
        } else {
            let footprint = chunk.footprint();
            if footprint > chunk.held {
                budget.acquire(Account::Chunks, footprint - chunk.held, chunk.held);
                chunk.held = footprint;
            }
            seq += 1;
            if !send(chunk) {
                return errors;
            }
        }
    }
    errors
}

/// Adds `count` blank lines from line `no` on, merged into the chunk's last entry when that is a
/// run of blank lines too.
fn push_blank(chunk: &mut Chunk, no: u64, count: u64) {
    if count == 0 {
        return;
    }
    if let Some(RawLine::Blank { count: run, .. }) = chunk.lines.last_mut() {
        *run += count;
    } else {
        chunk.lines.push(RawLine::Blank { no, count });
    }
}

/// Hands each chunk to the worker that became idle last. When long lines keep only a few chunks
/// in flight, the same few workers then do all the work, and only their allocator arenas grow
/// (glibc keeps freed memory per thread); with a first-come queue every worker would take its
/// turn and keep a long line's worth of memory.
struct Dispatch {
    senders: Vec<mpsc::Sender<Chunk>>,
    idle: Arc<IdleWorkers>,
}

impl Dispatch {
    /// Waits for an idle worker and gives it the chunk; false when no worker is left.
    fn send(&self, chunk: Chunk) -> bool {
        self.idle
            .pop()
            .and_then(|id| self.senders.get(id))
            .is_some_and(|tx| tx.send(chunk).is_ok())
    }
}

#[derive(Default)]
struct IdleWorkers {
    state: Mutex<IdleState>,
    changed: Condvar,
}

#[derive(Default)]
struct IdleState {
    /// Idle workers, the most recently idle last.
    idle: Vec<usize>,
    /// Workers started and not yet returned.
    alive: usize,
}

impl IdleWorkers {
    fn lock(&self) -> MutexGuard<'_, IdleState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn started(&self) {
        self.lock().alive += 1;
    }

    fn push(&self, id: usize) {
        self.lock().idle.push(id);
        self.changed.notify_all();
    }

    fn gone(&self) {
        let mut s = self.lock();
        s.alive = s.alive.saturating_sub(1);
        drop(s);
        self.changed.notify_all();
    }

    /// The most recently idle worker, waiting for one; `None` when every worker has returned.
    fn pop(&self) -> Option<usize> {
        let mut s = self.lock();
        loop {
            if let Some(id) = s.idle.pop() {
                return Some(id);
            }
            if s.alive == 0 {
                return None;
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Tells the dispatcher that a worker returned, however it returned.
struct Gone<'a>(&'a IdleWorkers);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.gone();
    }
}

/// A worker thread: parses and verifies the chunks handed to it until the reader is done.
fn work(
    id: usize,
    idle: &IdleWorkers,
    chunks: &Receiver<Chunk>,
    done: &mpsc::Sender<Done>,
    budget: &Budget,
    hooks: &Hooks,
) {
    let _gone = Gone(idle);
    loop {
        idle.push(id);
        let Ok(mut chunk) = chunks.recv() else { return };
        let outcomes = process(&mut chunk, budget, hooks);
        if let Err(mpsc::SendError(unsent)) = done.send(Done { chunk, outcomes }) {
            budget.release(Account::Chunks, unsent.chunk.held);
            return;
        }
    }
}

/// Parses every line of a chunk, then verifies all its events in one batch, and charges the
/// budget for the decoded events. A panic while handling one line is caught and reported as
/// [`Problem::Internal`] for that line.
fn process(chunk: &mut Chunk, budget: &Budget, hooks: &Hooks) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(chunk.lines.len());
    let mut events = Vec::with_capacity(chunk.lines.len());
    let mut slots = Vec::with_capacity(chunk.lines.len());
    for raw in &chunk.lines {
        let outcome = match *raw {
            RawLine::Blank { .. } => Outcome::Blank,
            RawLine::TooLong { len, .. } => Outcome::Problem(Problem::TooLong {
                cap: chunk.cap,
                len,
            }),
            RawLine::Text { no, range } => {
                match parse_guarded(&chunk.data[range.0..range.1], no, hooks) {
                    Ok(None) => Outcome::Blank,
                    Ok(Some(found)) => {
                        slots.push((outcomes.len(), found.span, no));
                        events.push(found.event);
                        Outcome::Blank // replaced below
                    }
                    Err(p) => Outcome::Problem(p),
                }
            }
        };
        outcomes.push(outcome);
    }
    let nos: Vec<u64> = slots.iter().map(|s| s.2).collect();
    let verdicts = verify_guarded(&events, &nos, hooks);
    let mut charge = outcomes.capacity() * core::mem::size_of::<Outcome>();
    for (((slot, span, _), event), verdict) in slots.into_iter().zip(events).zip(verdicts) {
        charge += event_bytes(&event);
        outcomes[slot] = match verdict {
            Some(verdict) => Outcome::Event {
                event,
                span,
                verdict,
            },
            None => Outcome::Problem(Problem::Internal),
        };
    }
    // Only what exceeds the allowance the reader took for this chunk.
    let charge = charge.saturating_sub(chunk.allowance());
    budget.charge(Account::Chunks, charge);
    chunk.held += charge;
    outcomes
}

/// [`parse_line`], with a panic turned into [`Problem::Internal`].
fn parse_guarded(bytes: &[u8], _no: u64, _hooks: &Hooks) -> Result<Option<Found>, Problem> {
    catch_unwind(AssertUnwindSafe(|| {
        #[cfg(test)]
        if _hooks.panic_parsing_line == Some(_no) {
            panic!("injected panic while parsing line {_no}");
        }
        parse_line(bytes)
    }))
    .unwrap_or(Err(Problem::Internal))
}

/// One verdict per event (`None`: verifying it panicked). The batch is verified at once; if that
/// panics or breaks the one-verdict-per-event contract, each event is verified on its own, so a
/// bad event costs only its own line.
fn verify_guarded(events: &[Event], nos: &[u64], hooks: &Hooks) -> Vec<Option<Verdict>> {
    let batch = |events: &[Event], nos: &[u64]| {
        catch_unwind(AssertUnwindSafe(|| {
            #[cfg(test)]
            if let Some(no) = hooks.panic_verifying_line.filter(|n| nos.contains(n)) {
                panic!("injected panic while verifying line {no}");
            }
            let _ = (nos, hooks);
            events.verify_batch()
        }))
        .ok()
        .filter(|v| v.len() == events.len())
    };
    if let Some(verdicts) = batch(events, nos) {
        return verdicts.into_iter().map(Some).collect();
    }
    events
        .iter()
        .zip(nos)
        .map(|(event, no)| {
            batch(core::slice::from_ref(event), core::slice::from_ref(no))
                .and_then(|v| v.into_iter().next())
        })
        .collect()
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
        // Budgets from below one line (one chunk at a time) to plenty; no spawns at all.
        for (threads, chunk_lines, budget, spawns) in [
            (4, 1, 1, None),
            (3, 2, 300, None),
            (2, 7, 5000, None),
            (5, 1, 1 << 20, None),
            (3, 5, 2000, Some(0)),
            (3, 5, 2000, Some(1)),
        ] {
            let mut opts = Options::new(threads);
            opts.max_line_bytes = 400;
            opts.chunk_lines = chunk_lines;
            opts.chunk_bytes = 64;
            opts.max_in_flight_bytes = budget;
            opts.hooks.max_spawns = spawns;
            let (got, summary) = records(&opts, &input);
            assert_eq!(got, want, "threads {threads}, chunks of {chunk_lines}");
            assert_eq!(
                Summary {
                    seconds: 0.0,
                    threads: 0,
                    ..summary
                },
                Summary {
                    seconds: 0.0,
                    threads: 0,
                    ..want_summary.clone()
                }
            );
        }
    }

    #[test]
    fn refused_threads_fall_back_to_fewer_or_to_the_caller() {
        let input = mixed_input(300);
        let (want, _) = records(&Options::new(1), &input);
        // (spawns allowed, threads that checked lines): the reader starts first, then the
        // workers; without the reader, or without any worker, the caller's thread does the work.
        for (spawns, threads) in [(0, 1), (1, 1), (2, 1), (3, 2), (4, 3), (9, 3)] {
            let mut opts = Options::new(3);
            opts.chunk_lines = 4;
            opts.hooks.max_spawns = Some(spawns);
            let (got, summary) = records(&opts, &input);
            assert_eq!(got, want, "{spawns} spawns allowed");
            assert_eq!(summary.threads, threads, "{spawns} spawns allowed");
            assert!(summary.io_errors.is_empty(), "{:?}", summary.io_errors);
        }
    }

    #[test]
    fn blank_runs_are_counted_with_their_line_numbers() {
        let mut input = b"\n\n\n \r\n\ngarbage\n\n\n".to_vec();
        input.extend_from_slice(&[b'\n'; 10_000]);
        input.extend_from_slice(b"\t\nmore garbage");
        for chunk_lines in [1, 2, 1024] {
            let mut opts = Options::new(2);
            opts.chunk_lines = chunk_lines;
            let (got, summary) = records(&opts, &input);
            let lines: Vec<u64> = got.iter().map(|g| g.0).collect();
            assert_eq!(lines, [6, 10_010], "chunks of {chunk_lines}");
            assert_eq!((summary.lines, summary.blank), (10_010, 10_008));
        }
    }

    #[test]
    fn the_budget_is_all_given_back() {
        let input = Input::from_reader("mem", io::Cursor::new(mixed_input(2000)));
        let mut opts = Options::new(3);
        opts.chunk_lines = 8;
        opts.max_in_flight_bytes = 4096;
        let budget = Arc::new(Budget::new(4096));
        let peak = AtomicU64::new(0);
        run_with_budget(vec![input], &opts, &budget, |_, _| {
            peak.fetch_max(budget.used() as u64, Ordering::Relaxed);
            Ok(())
        })
        .expect("no callback errors");
        assert_eq!(budget.used(), 0);
        // One chunk of 8 short lines with its outcomes is a few KiB; far below the input size.
        assert!(peak.load(Ordering::Relaxed) < 64 << 10, "{peak:?}");
    }

    #[test]
    fn a_panic_costs_only_its_own_line() {
        let input = mixed_input(300);
        let (want, _) = records(&Options::new(1), &input);
        // Line 13 is a wrong-id event (its batch is verified again event by event), line 12 is
        // not JSON.
        for (parse, verify) in [(Some(12), None), (None, Some(13)), (Some(13), Some(13))] {
            for threads in [1, 3] {
                let mut opts = Options::new(threads);
                opts.chunk_lines = 16;
                opts.hooks.panic_parsing_line = parse;
                opts.hooks.panic_verifying_line = verify;
                let (got, summary) = records(&opts, &input);
                assert_eq!(got.len(), want.len());
                let bad = parse.or(verify).expect("one hook set");
                for (g, w) in got.iter().zip(&want) {
                    if g.0 == bad {
                        assert_eq!(
                            g.1, "unparseable: internal error while processing this line",
                            "line {bad}"
                        );
                    } else {
                        assert_eq!(g, w);
                    }
                }
                assert!(summary.io_errors.is_empty());
            }
        }
    }

    #[test]
    fn callback_error_stops_the_run_cleanly() {
        // A tight budget keeps the reader waiting for chunks to be given back when the error
        // comes; no spawns: the caller's thread does everything.
        for (budget, spawns) in [(64 << 20, None), (1, None), (4096, Some(0))] {
            let input = Input::from_reader("mem", io::Cursor::new(mixed_input(5000)));
            let mut opts = Options::new(2);
            opts.chunk_lines = 10;
            opts.max_in_flight_bytes = budget;
            opts.hooks.max_spawns = spawns;
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
    }
}
