//! Why a gift wrap did not open: the failing step, plus nostr's own error.

use core::fmt;

use nostr::error::{Error as NostrError, ErrorKind};

/// The step of the unwrapping pipeline that rejected a gift wrap, in pipeline order.
///
/// The default (non-strict) steps are exactly the checks of nostr 0.45.6's
/// `UnwrappedGift::from_gift_wrap`, in its order; the `Strict*` steps run only with
/// [`UnwrapOptions::strict`](super::UnwrapOptions::strict).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// The event is not kind 1059 (nostr: "not a gift wrap").
    NotGiftWrap,
    /// The gift wrap's id is not the NIP-01 hash of its fields (nostr: "Invalid event ID").
    WrapInvalidId,
    /// The gift wrap's signature does not verify (nostr: "Invalid signature").
    WrapInvalidSignature,
    /// Strict: the gift wrap has no `p` tag naming the recipient.
    StrictNotForUs,
    /// NIP-44 decryption of the gift wrap's content failed: the wrap is for another
    /// recipient, the content was altered, or it is not NIP-44 v2.
    SealDecrypt,
    /// The decrypted gift wrap content is not an event (JSON).
    SealParse,
    /// The seal's id is not the NIP-01 hash of its fields.
    SealInvalidId,
    /// The seal's signature does not verify.
    SealInvalidSignature,
    /// Strict: the seal is not kind 13.
    StrictSealKind,
    /// Strict: the seal has tags (NIP-59 says they must be empty).
    StrictSealTags,
    /// NIP-44 decryption of the seal's content failed.
    RumorDecrypt,
    /// The decrypted seal content is not an unsigned event (JSON).
    RumorParse,
    /// The rumor's author is not the seal's signer (nostr: "sender mismatch").
    SenderMismatch,
}

impl Step {
    /// A short description of what failed and what it usually means.
    pub fn describe(self) -> &'static str {
        match self {
            Step::NotGiftWrap => "not a gift wrap (kind is not 1059)",
            Step::WrapInvalidId => "gift wrap id does not match its content (altered in transit)",
            Step::WrapInvalidSignature => "gift wrap signature is invalid (forged or corrupted)",
            Step::StrictNotForUs => "gift wrap has no p tag naming the recipient",
            Step::SealDecrypt => {
                "cannot decrypt the gift wrap (addressed to another key, altered, or not NIP-44 v2)"
            }
            Step::SealParse => "decrypted gift wrap is not a valid seal event",
            Step::SealInvalidId => "seal id does not match its content",
            Step::SealInvalidSignature => "seal signature is invalid",
            Step::StrictSealKind => "seal is not kind 13",
            Step::StrictSealTags => "seal has tags",
            Step::RumorDecrypt => "cannot decrypt the seal (altered, or not NIP-44 v2)",
            Step::RumorParse => "decrypted seal is not a valid rumor (unsigned event)",
            Step::SenderMismatch => "rumor author is not the seal signer (impersonation attempt)",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Why one gift wrap did not open.
///
/// Carries the [`Step`] that failed and the exact error nostr 0.45.6's
/// `UnwrappedGift::from_gift_wrap` returns for the same wrap ([`Error::as_nostr`],
/// [`Error::into_nostr`]; equal kind and message). The strict-only steps carry a
/// `nostr::Error` of kind `Invalid` with a static message.
///
/// `Display` prints the step, then nostr's message, e.g.
/// `cannot decrypt the gift wrap (...): invalid HMAC`.
#[derive(Debug, PartialEq, Eq)]
pub struct Error {
    step: Step,
    source: NostrError,
}

impl Error {
    pub(crate) fn new(step: Step, source: NostrError) -> Self {
        Error { step, source }
    }

    /// An error whose nostr message is static (kind `Invalid`, as nostr builds them).
    pub(crate) fn invalid(step: Step, message: &'static str) -> Self {
        Error::new(
            step,
            NostrError::with_static_message(ErrorKind::Invalid, message),
        )
    }

    /// A decryption failure, wrapped the way `from_gift_wrap` wraps a signer's error.
    pub(crate) fn crypto<E>(step: Step, source: E) -> Self
    where
        E: Into<Box<dyn core::error::Error + Send + Sync>>,
    {
        Error::new(step, NostrError::new(ErrorKind::Crypto, source))
    }

    /// The step that failed.
    pub fn step(&self) -> Step {
        self.step
    }

    /// The error `from_gift_wrap` gives for this wrap (same kind and message).
    pub fn as_nostr(&self) -> &NostrError {
        &self.source
    }

    /// Converts into the error `from_gift_wrap` gives for this wrap.
    pub fn into_nostr(self) -> NostrError {
        self.source
    }

    /// nostr's error kind (shortcut for `as_nostr().kind()`).
    pub fn kind(&self) -> ErrorKind {
        self.source.kind()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.step, self.source)
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl From<Error> for NostrError {
    fn from(e: Error) -> Self {
        e.source
    }
}
