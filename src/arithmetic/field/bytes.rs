//! Bytes to words, for both limb representations.

/// Four little-endian-ordered u64 words of 32 big-endian bytes.
#[inline(always)]
pub(super) const fn be_words(b: &[u8; 32]) -> [u64; 4] {
    let mut w = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let mut x = 0u64;
        let mut j = 0;
        while j < 8 {
            x = (x << 8) | b[24 - 8 * i + j] as u64;
            j += 1;
        }
        w[i] = x;
        i += 1;
    }
    w
}
