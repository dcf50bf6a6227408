//! The reader: cuts each input into chunks of lines, skipping runs of empty lines in bulk, and
//! takes each chunk's bytes from the budget as it grows (waiting while the budget is spent).

use super::chunk::{Chunk, RawLine};
use super::options::Options;
use crate::budget::{Account, Budget};
use crate::input::{read_line_capped, skip_newlines, Input, LineRead};
use std::sync::atomic::{AtomicBool, Ordering};

/// The reader: cuts every input into chunks, taking their bytes from the budget, and passes each
/// to `send` (false: the pipeline is shutting down). Returns the read errors.
pub(super) fn read_all(
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
