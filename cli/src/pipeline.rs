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
//! Runs of empty lines are skipped in bulk by the reader
//! ([`skip_newlines`](crate::input::skip_newlines)) and a run of blank lines travels as one
//! entry, so a file of nothing but newlines costs a scan of its bytes.
//!
//! Threads: the reader and the workers are started with [`thread::Builder::spawn`]. When the
//! system refuses a thread, the run goes on with the workers that did start; when no worker or no
//! reader can be started, the caller's thread reads, checks and hands on every chunk itself. A
//! panic while decoding or verifying one line (a bug, never expected) is caught for that line,
//! which is reported as [`Problem::Internal`](crate::line::Problem::Internal); the other lines
//! get their results.
//!
//! Duplicates: a valid event whose id already appeared on an earlier line as a valid event is a
//! duplicate of that line. It is not counted as valid again and is not handed on as valid. The
//! id alone decides: the same id with a different (also valid) signature is a duplicate, since
//! the id commits to everything the author said. Invalid lines never "claim" an id, so a forged
//! copy listed before the genuine event does not hide it. The id and author sets are the only
//! state that grows with the input (about 80 bytes per distinct valid event).

// Rooms: `chunk` is the unit of work, `reader` cuts the inputs into chunks, `workers` decode and
// verify them, `collector` puts them back in order and calls back; this file holds the options,
// the records and totals handed out, and `run`, which starts the threads and wires them together.

mod chunk;
mod collector;
mod options;
mod reader;
mod record;
mod workers;

pub use options::{Options, DEFAULT_MAX_LINE_BYTES};
pub use record::{Pos, Record, Summary};

use crate::budget::Budget;
use crate::input::Input;
use crate::progress::Progress;
use chunk::{Chunk, Done};
use collector::Collector;
use options::Hooks;
use reader::read_all;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Instant;
use workers::{process, work, Dispatch, IdleWorkers};

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
    let mut collector = Collector::new(
        on_record,
        budget.clone(),
        Progress::new(opts.progress, total_size),
        raw_bytes,
        start,
    );
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
    let (mut summary, stranded) = collector.finish()?;
    summary.io_errors = io_errors;
    if worker_failed || stranded {
        summary
            .io_errors
            .push("internal error: a worker thread failed".to_string());
    }
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
