//! The argument types of [`Backend::straus_vartime`](super::Backend::straus_vartime), shared by
//! the door (`backend.rs`, which checks them) and the arms that take them (`portable`, `bmi2`):
//! a leaf, so that the arms need not import the door.

/// The NAF width of the scalars of G and 2^128·G in [`Backend::straus_vartime`] (its
/// `g_digits`): their tables are fixed, `2^(width − 2)` = 64 entries each.
///
/// [`Backend::straus_vartime`]: super::Backend::straus_vartime
pub const STRAUSS_G_WIDTH: usize = 8;

/// One non-zero digit of [`Backend::straus_vartime`]'s input: `digit · 2^bit` times the point
/// at index `point`.
///
/// [`Backend::straus_vartime`]: super::Backend::straus_vartime
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrausDigit {
    /// The point's index.
    pub point: u32,
    /// The digit's position (its column), below the call's `bits`.
    pub bit: u8,
    /// The digit: odd, with `|digit| < 2·tlen`.
    pub digit: i8,
}
