//! The SHA-256 algorithm itself, one message at a time: the constants, the portable
//! compression and the padding. A leaf: the paths of [`super::sha`] and the lane kernels
//! (`sha_lanes`, `sha_simd128`, `sha_refill`) take their constants and scalar steps from here.

/// The SHA-256 round constants (FIPS 180-4, section 4.2.2).
pub(crate) const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The SHA-256 initial state (FIPS 180-4, section 5.3.3): the midstate of an empty prefix.
pub const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// One SHA-256 compression of `block` into `state`, portable scalar code (FIPS 180-4,
/// section 6.2.2).
///
/// Written for the registers: the 64 rounds unrolled by a macro that renames the eight
/// working variables instead of moving them, the message schedule in a ring of 16 words
/// computed a round ahead of use, `Ch` as `g ^ (e & (f ^ g))` and `Maj` as
/// `b ^ ((a ^ b) & (b ^ c))` with `a ^ b` carried to the next round as its `b ^ c`.
pub fn compress_soft(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 16];
    for (wi, c) in w.iter_mut().zip(block.chunks_exact(4)) {
        *wi = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    // `bc` is b ^ c of the round about to run.
    let mut bc = b ^ c;
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $t:expr) => {{
            let wt = if $t < 16 {
                w[$t & 15]
            } else {
                let w15 = w[($t + 1) & 15];
                let w2 = w[($t + 14) & 15];
                let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
                let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
                let v = w[$t & 15]
                    .wrapping_add(s0)
                    .wrapping_add(w[($t + 9) & 15])
                    .wrapping_add(s1);
                w[$t & 15] = v;
                v
            };
            let s1 = $e.rotate_right(6) ^ $e.rotate_right(11) ^ $e.rotate_right(25);
            let ch = $g ^ ($e & ($f ^ $g));
            let t1 = $h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[$t].wrapping_add(wt));
            let s0 = $a.rotate_right(2) ^ $a.rotate_right(13) ^ $a.rotate_right(22);
            let ab = $a ^ $b;
            let maj = $b ^ (ab & bc);
            bc = ab;
            $d = $d.wrapping_add(t1);
            $h = t1.wrapping_add(s0).wrapping_add(maj);
        }};
    }
    macro_rules! eight {
        ($t:expr) => {
            round!(a, b, c, d, e, f, g, h, $t);
            round!(h, a, b, c, d, e, f, g, $t + 1);
            round!(g, h, a, b, c, d, e, f, $t + 2);
            round!(f, g, h, a, b, c, d, e, $t + 3);
            round!(e, f, g, h, a, b, c, d, $t + 4);
            round!(d, e, f, g, h, a, b, c, $t + 5);
            round!(c, d, e, f, g, h, a, b, $t + 6);
            round!(b, c, d, e, f, g, h, a, $t + 7);
        };
    }
    eight!(0);
    eight!(8);
    eight!(16);
    eight!(24);
    eight!(32);
    eight!(40);
    eight!(48);
    eight!(56);
    // The last rounds' schedule words and `b ^ c` are not needed (read here so the macro
    // can stay uniform).
    let _ = (w, bc);
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// The number of 64-byte blocks of a `len`-byte message after the padding (0x80, zeros, the
/// 64-bit length).
pub fn padded_blocks(len: usize) -> usize {
    (len + 9).div_ceil(64)
}

/// Writes `msg`'s padded blocks to `out` (`padded_blocks(msg.len())` of them), for a message
/// that follows `prefix_blocks` whole blocks of the same hash.
pub(super) fn pad_into(msg: &[u8], prefix_blocks: u64, out: &mut [[u8; 64]]) {
    let n = out.len();
    debug_assert_eq!(n, padded_blocks(msg.len()));
    let flat = out.as_flattened_mut();
    flat[..msg.len()].copy_from_slice(msg);
    flat[msg.len()] = 0x80;
    flat[msg.len() + 1..].fill(0);
    let bits = (prefix_blocks * 64 + msg.len() as u64) * 8;
    flat[n * 64 - 8..].copy_from_slice(&bits.to_be_bytes());
}

/// Serializes a SHA-256 state as the big-endian digest.
pub(super) fn digest_bytes(state: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}
