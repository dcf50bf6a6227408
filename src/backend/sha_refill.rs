//! The lane schedules of [`super::sha`]'s lane paths, generic over the lane count: a lane
//! whose message is done takes the next one ([`refill`]), or the messages in groups of equal
//! block count ([`grouped_in`], kept to measure). The kernels (`step`) come from the caller.

use super::sha_core::{compress_soft, digest_bytes, pad_into, padded_blocks};

/// A message in a lane: which one, how many of its padded blocks are done, and its last one
/// or two blocks (the rest of the bytes, the 0x80, the zeros and the bit length).
struct InLane {
    msg: usize,
    done: usize,
    whole: usize,
    total: usize,
    tail: [[u8; 64]; 2],
}

impl InLane {
    fn new(msg: usize, bytes: &[u8], prefix_blocks: u64) -> Self {
        let whole = bytes.len() / 64;
        let rest = &bytes[whole * 64..];
        let n = padded_blocks(rest.len());
        let mut tail = [[0u8; 64]; 2];
        pad_into(rest, prefix_blocks + whole as u64, &mut tail[..n]);
        InLane {
            msg,
            done: 0,
            whole,
            total: whole + n,
            tail,
        }
    }

    /// The next block to compress.
    fn block<'a>(&'a self, bytes: &'a [u8]) -> &'a [u8; 64] {
        if self.done < self.whole {
            bytes[self.done * 64..][..64]
                .try_into()
                .unwrap_or(&self.tail[0])
        } else {
            &self.tail[self.done - self.whole]
        }
    }
}

/// The block an idle lane compresses (its result is never read).
static IDLE: [u8; 64] = [0u8; 64];

/// When no message is left to start, the lanes still busy are finished one at a time with
/// [`compress_soft`] once there are at most this many: a vector step costs about as much as
/// two or three scalar compressions (see `docs/backend.md`, "SHA-256 in lanes").
const FINISH_ALONE: usize = 2;

/// Messages of any lengths in `L` lanes: a lane whose message is done takes the next one
/// (longest first, so the last steps of the call find the lanes mostly busy), and every
/// call of `step` compresses one block in every lane. Lanes with nothing left to do hash a
/// zero block whose result is dropped, and the last [`FINISH_ALONE`] messages finish on
/// the scalar code.
pub(super) fn refill<const L: usize>(
    step: fn(&mut [[u32; L]; 8], &[&[u8; 64]; L]),
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    let mut order: Vec<usize> = (0..msgs.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(msgs[i].len()));
    let mut next = order.into_iter().peekable();
    let mut lanes: [Option<InLane>; L] = core::array::from_fn(|_| None);
    let mut st = [[0u32; L]; 8];
    loop {
        let mut busy = 0;
        for (l, slot) in lanes.iter_mut().enumerate() {
            if let Some(m) = slot.as_ref().filter(|m| m.done == m.total) {
                out[m.msg] = digest_bytes(&core::array::from_fn(|i| st[i][l]));
                *slot = None;
            }
            if slot.is_none() {
                if let Some(i) = next.next() {
                    *slot = Some(InLane::new(i, msgs[i], prefix_blocks));
                    for (row, &w) in st.iter_mut().zip(midstate) {
                        row[l] = w;
                    }
                }
            }
            busy += usize::from(slot.is_some());
        }
        if busy <= FINISH_ALONE && next.peek().is_none() {
            for (l, m) in lanes.iter_mut().enumerate() {
                if let Some(m) = m.as_mut() {
                    let mut s: [u32; 8] = core::array::from_fn(|i| st[i][l]);
                    while m.done < m.total {
                        compress_soft(&mut s, m.block(msgs[m.msg]));
                        m.done += 1;
                    }
                    out[m.msg] = digest_bytes(&s);
                }
            }
            return;
        }
        let blocks: [&[u8; 64]; L] = core::array::from_fn(|l| match &lanes[l] {
            Some(m) => m.block(msgs[m.msg]),
            None => &IDLE,
        });
        step(&mut st, &blocks);
        for m in lanes.iter_mut().flatten() {
            m.done += 1;
        }
    }
}

#[cfg(any(test, feature = "internals"))]
pub(super) fn grouped_in<const L: usize>(
    step: fn(&mut [[u32; L]; 8], &[&[u8; 64]; L]),
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    // Message indices by padded block count.
    let mut order: Vec<(usize, usize)> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| (padded_blocks(m.len()), i))
        .collect();
    order.sort_unstable();
    let mut blocks: Vec<[u8; 64]> = Vec::new();
    for class in order.chunk_by(|x, y| x.0 == y.0) {
        let nb = class[0].0;
        for group in class.chunks(L) {
            blocks.clear();
            blocks.resize(L * nb, [0u8; 64]);
            for lane in 0..L {
                let i = group[lane.min(group.len() - 1)].1;
                pad_into(
                    msgs[i],
                    prefix_blocks,
                    &mut blocks[lane * nb..(lane + 1) * nb],
                );
            }
            let mut st: [[u32; L]; 8] = core::array::from_fn(|i| [midstate[i]; L]);
            for k in 0..nb {
                let refs: [&[u8; 64]; L] = core::array::from_fn(|lane| &blocks[lane * nb + k]);
                step(&mut st, &refs);
            }
            for (lane, &(_, i)) in group.iter().enumerate() {
                out[i] = digest_bytes(&core::array::from_fn(|w| st[w][lane]));
            }
        }
    }
}
