//! The crate's error type.

use core::fmt;

/// Why a signature or an input was rejected.
///
/// Rejections mirror BIP-340's verification steps, in the specification's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The public key is not the x coordinate of a curve point (lift_x fails), or is >= p.
    InvalidPublicKey,
    /// The signature's r is >= p or not the x coordinate of a curve point.
    InvalidR,
    /// The signature's s is >= n.
    InvalidS,
    /// The verification equation does not hold.
    EquationFailed,
    /// An input slice has the wrong length.
    WrongLength {
        /// Which input.
        what: &'static str,
        /// The length expected.
        expected: usize,
        /// The length given.
        got: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidPublicKey => f.write_str("public key is not a valid x-only key"),
            Error::InvalidR => f.write_str("signature r is not a valid x coordinate"),
            Error::InvalidS => f.write_str("signature s is not below the group order"),
            Error::EquationFailed => f.write_str("signature equation does not hold"),
            Error::WrongLength {
                what,
                expected,
                got,
            } => {
                write!(f, "{what} has length {got}, expected {expected}")
            }
        }
    }
}

impl std::error::Error for Error {}
