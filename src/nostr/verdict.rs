//! The outcome of verifying one event.

use core::fmt;

/// The outcome of verifying one event, with `Event::verify`'s semantics (id first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Id and signature are valid.
    Valid,
    /// The id is not the NIP-01 hash of the event (checked first).
    InvalidId,
    /// The id is right, but the signature over it is not valid (or the key is not a valid
    /// x-only key).
    InvalidSignature,
}

impl Verdict {
    /// `true` for [`Verdict::Valid`].
    pub fn is_valid(self) -> bool {
        self == Verdict::Valid
    }

    /// The result nostr 0.45's `Event::verify` returns for the same event.
    ///
    /// # Errors
    /// [`Verdict::InvalidId`] gives an error of kind `ErrorKind::Invalid` with message
    /// "Invalid event ID", [`Verdict::InvalidSignature`] one with "Invalid signature", the
    /// errors `Event::verify` builds.
    ///
    /// # Examples
    /// ```
    /// use nostr_verify::Verdict;
    /// fn check(v: Verdict) -> Result<(), nostr::error::Error> {
    ///     v.into_result()?;
    ///     Ok(())
    /// }
    /// assert_eq!(check(Verdict::InvalidId).unwrap_err().to_string(), "Invalid event ID");
    /// assert!(check(Verdict::Valid).is_ok());
    /// ```
    #[cfg(feature = "nostr")]
    pub fn into_result(self) -> Result<(), ::nostr::error::Error> {
        use ::nostr::error::{Error, ErrorKind};
        match self {
            Verdict::Valid => Ok(()),
            Verdict::InvalidId => Err(Error::with_static_message(
                ErrorKind::Invalid,
                "Invalid event ID",
            )),
            Verdict::InvalidSignature => Err(Error::with_static_message(
                ErrorKind::Invalid,
                "Invalid signature",
            )),
        }
    }

    /// The result nostr 0.44's `Event::verify` returns for the same event.
    ///
    /// # Errors
    /// `nostr044::event::Error::InvalidId` or `::InvalidSignature`.
    #[cfg(feature = "nostr-0-44")]
    pub fn into_result_v044(self) -> Result<(), nostr044::event::Error> {
        match self {
            Verdict::Valid => Ok(()),
            Verdict::InvalidId => Err(nostr044::event::Error::InvalidId),
            Verdict::InvalidSignature => Err(nostr044::event::Error::InvalidSignature),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Valid => "valid",
            Verdict::InvalidId => "Invalid event ID",
            Verdict::InvalidSignature => "Invalid signature",
        })
    }
}
