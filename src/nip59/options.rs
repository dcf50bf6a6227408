//! How gift wraps are unwrapped: [`UnwrapOptions`].

use nostr::key::PublicKey;

/// Default number of senders whose conversation keys a [`GiftUnwrapper`] keeps.
///
/// [`GiftUnwrapper`]: super::GiftUnwrapper
pub const DEFAULT_CACHE_CAPACITY: usize = 1024;

/// Options for unwrapping. `UnwrapOptions::default()`: nostr's checks only, all cores,
/// [`DEFAULT_CACHE_CAPACITY`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnwrapOptions {
    pub(super) strict: bool,
    pub(super) threads: usize,
    pub(super) always_split: bool,
    pub(super) cache_capacity: usize,
    pub(super) recipient: Option<PublicKey>,
}

impl Default for UnwrapOptions {
    fn default() -> Self {
        UnwrapOptions {
            strict: false,
            threads: 0,
            always_split: false,
            cache_capacity: DEFAULT_CACHE_CAPACITY,
            recipient: None,
        }
    }
}

impl UnwrapOptions {
    /// Also rejects what nostr lets through (off by default): a wrap without a `p` tag
    /// naming the recipient ([`Step::StrictNotForUs`]), a seal that is not kind 13
    /// ([`Step::StrictSealKind`]) or has tags ([`Step::StrictSealTags`]).
    ///
    /// With a signer, the `p`-tag check needs [`UnwrapOptions::recipient`]; without it,
    /// strict mode rejects every wrap (fails closed).
    ///
    /// [`Step::StrictNotForUs`]: super::Step::StrictNotForUs
    /// [`Step::StrictSealKind`]: super::Step::StrictSealKind
    /// [`Step::StrictSealTags`]: super::Step::StrictSealTags
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Threads for verification and decryption: 0 (default) uses every available core,
    /// 1 stays on the calling thread.
    ///
    /// Each stage (wrap ids, wrap signatures, seal decryption, seal signatures, rumor
    /// decryption) is split only when it holds enough work for every thread it starts
    /// (about 400 µs each), so small inputs stay on the calling thread, and the threads
    /// claim the stage's chunks one at a time: no work is done twice. Signatures are
    /// verified in one batch per layer through the calling thread's verifier
    /// ([`crate::with_thread_verifier`], whose key cache keeps the senders' keys), on two
    /// threads at most ([`crate::Verifier::verify_batch_two_threads`]).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Splits every stage with two or more items over the [`UnwrapOptions::threads`],
    /// however little work it holds (off by default). The results are the same either
    /// way; this is for tests and measurements of the multi-thread path on small inputs.
    pub fn always_split(mut self, always: bool) -> Self {
        self.always_split = always;
        self
    }

    /// How many senders' conversation keys a [`GiftUnwrapper`] keeps (least recently
    /// used evicted first); 0 disables the cache.
    ///
    /// [`GiftUnwrapper`]: super::GiftUnwrapper
    pub fn cache_capacity(mut self, capacity: usize) -> Self {
        self.cache_capacity = capacity;
        self
    }

    /// The recipient's public key, for the strict `p`-tag check with a signer
    /// (a [`GiftUnwrapper`] uses its own key instead).
    ///
    /// [`GiftUnwrapper`]: super::GiftUnwrapper
    pub fn recipient(mut self, public_key: PublicKey) -> Self {
        self.recipient = Some(public_key);
        self
    }
}
