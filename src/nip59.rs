//! NIP-59: open many gift wraps at once (feature `nip59`, nostr 0.45.6).
//!
//! A NIP-17 inbox is a pile of gift wraps (kind 1059, signed by a one-time key), each
//! holding a seal (kind 13, signed by the sender) holding an unsigned rumor. nostr's
//! `UnwrappedGift::from_gift_wrap` opens one wrap at a time: verify the wrap, decrypt
//! it (ECDH with the one-time key), parse and verify the seal, decrypt it (ECDH with the
//! sender's key), parse the rumor, check that the rumor's author signed the seal.
//!
//! [`unwrap_gift_wraps`] and [`GiftUnwrapper`] do the same checks layer by layer over
//! all wraps: one batch verification for all wraps, one for all seals, decryption
//! spread over all cores, and the sender's conversation key derived once per sender
//! (senders repeat; the wraps' one-time keys do not, so their ECDH stays). Per wrap, the
//! outcome is exactly `from_gift_wrap`'s: the same `Ok` value, and an error wherever it
//! errs, whose [`Error::as_nostr`] equals nostr's error (kind and message) and whose
//! [`Error::step`] names the failing layer.
//!
//! Signers without a secret key (NIP-46 bunkers, hardware) use
//! [`unwrap_gift_wraps_with_signer`] (`Nip44`) or
//! [`unwrap_gift_wraps_with_async_signer`] (`AsyncNip44`): no key cache there, batch
//! verification still applies.
//!
//! # Examples
//!
//! ```
//! use nostr::prelude::*;
//! use nostr_verify::nip59::{unwrap_gift_wraps, GiftUnwrapper};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let alice = Keys::parse("6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e")?;
//! let bob = Keys::parse("7b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e")?;
//! let rumor = EventBuilder::new(Kind::PrivateDirectMessage, "hi bob")
//!     .finalize_unsigned(alice.public_key());
//! let wrap = GiftWrapBuilder::new(bob.public_key(), rumor).finalize(&alice)?;
//!
//! // One-off:
//! let opened = unwrap_gift_wraps(&bob, &[wrap.clone()]);
//! assert_eq!(opened[0].as_ref().map(|g| g.rumor.content.as_str()).ok(), Some("hi bob"));
//!
//! // Reused across calls (keeps the senders' conversation keys):
//! let mut inbox = GiftUnwrapper::new(bob.clone());
//! for result in inbox.unwrap_gift_wraps(&[wrap]) {
//!     match result {
//!         Ok(gift) => println!("{}: {}", gift.sender, gift.rumor.content),
//!         Err(e) => eprintln!("dropped: {e}"), // e.step() says which layer failed
//!     }
//! }
//! # Ok(())
//! # }
//! ```

mod error;
mod fanout;
mod nip44;
mod options;
mod pipeline;

/// Compiles and runs the example in `docs/nip59.md`.
#[cfg(doctest)]
#[doc = include_str!("../docs/nip59.md")]
struct UserGuide;

use nostr::error::Error as NostrError;
use nostr::event::Event;
use nostr::key::{Keys, PublicKey};
use nostr::nips::nip44::{AsyncNip44, Nip44};
use nostr::nips::nip59::UnwrappedGift;

pub use self::error::{Error, Step};
use self::nip44::KeyCache;
pub use self::options::{UnwrapOptions, DEFAULT_CACHE_CAPACITY};

/// Counters of a [`GiftUnwrapper`]'s conversation-key cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Senders whose key is cached now.
    pub len: usize,
    /// Most senders kept.
    pub capacity: usize,
    /// Seal-layer lookups answered from the cache.
    pub hits: u64,
    /// Seal-layer lookups that derived a key (ECDH).
    pub misses: u64,
}

/// Opens gift wraps for one recipient, keeping the conversation keys of recent senders.
///
/// Reuse one per recipient: the cache maps a sender's public key to the NIP-44
/// conversation key shared with it, so each sender costs one ECDH for the seal layer
/// per cache lifetime instead of one per message. The wrap layer is never cached: every
/// wrap has a fresh one-time key. The cache is bounded
/// ([`UnwrapOptions::cache_capacity`], least recently used evicted first); keys live in
/// boxed [`zeroize::Zeroizing`] buffers and are zeroed on eviction, on
/// [`GiftUnwrapper::clear_cache`] and on drop. nostr's `ConversationKey` is `Copy` and
/// not zeroized, so the copy handed to `v2::decrypt_to_bytes` is a short-lived stack
/// temporary.
///
/// Signature verification state (parsed public keys) lives in the calling thread's
/// [`crate::with_thread_verifier`] verifier (also used by
/// [`crate::VerifyBatchExt`]): helper threads never verify on verifiers of their own, so a
/// key is lifted once and stays cached for the next call.
///
/// ```
/// use nostr::event::{EventBuilder, FinalizeEvent, FinalizeUnsignedEvent, Kind, Tag};
/// use nostr::key::Keys;
/// use nostr::nips::nip59::{GiftWrapBuilder, UnwrappedGift};
/// use nostr_verify::nip59::{GiftUnwrapper, Step};
///
/// let (me, alice) = (Keys::generate(), Keys::generate());
/// let wraps: Vec<_> = (0..4)
///     .map(|i| {
///         let rumor = EventBuilder::new(Kind::PrivateDirectMessage, format!("hello {i}"))
///             .tags([Tag::public_key(me.public_key())])
///             .finalize_unsigned(alice.public_key());
///         GiftWrapBuilder::new(me.public_key(), rumor).finalize(&alice).unwrap()
///     })
///     .collect();
/// let mut damaged = wraps.clone();
/// damaged[2].content.pop();
///
/// let mut inbox = GiftUnwrapper::new(me.clone());
/// let results = inbox.unwrap_gift_wraps(&damaged);
/// assert_eq!(results[0].as_ref().unwrap().rumor.content, "hello 0");
/// assert_eq!(results[0].as_ref().unwrap().sender, alice.public_key());
/// assert_eq!(results[2].as_ref().unwrap_err().step(), Step::WrapInvalidId);
/// // Exactly nostr's results, one per wrap.
/// for (ours, wrap) in results.iter().zip(&damaged) {
///     assert_eq!(ours.is_ok(), UnwrappedGift::from_gift_wrap(&me, wrap).is_ok());
/// }
/// // Alice's conversation key was derived once and is reused by later calls.
/// assert!(inbox.unwrap_gift_wraps(&wraps).iter().all(Result::is_ok));
/// ```
pub struct GiftUnwrapper {
    keys: Keys,
    cache: KeyCache,
    options: UnwrapOptions,
}

impl core::fmt::Debug for GiftUnwrapper {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GiftUnwrapper")
            .field("public_key", &self.keys.public_key())
            .field("cache", &self.cache)
            .field("options", &self.options)
            .finish()
    }
}

impl GiftUnwrapper {
    /// An unwrapper for `keys` with [`UnwrapOptions::default`].
    pub fn new(keys: Keys) -> Self {
        Self::with_options(keys, UnwrapOptions::default())
    }

    /// An unwrapper for `keys` with `options`.
    pub fn with_options(keys: Keys, options: UnwrapOptions) -> Self {
        GiftUnwrapper {
            cache: KeyCache::new(options.cache_capacity),
            keys,
            options,
        }
    }

    /// The recipient's public key.
    pub fn public_key(&self) -> PublicKey {
        self.keys.public_key()
    }

    /// Opens every wrap: one result per wrap, in order, each exactly
    /// `UnwrappedGift::from_gift_wrap(keys, wrap)`'s outcome (plus the strict checks,
    /// if enabled).
    ///
    /// # Errors
    /// Per wrap, an [`Error`] naming the failing [`Step`]; one bad wrap never affects
    /// the others.
    pub fn unwrap_gift_wraps(&mut self, wraps: &[Event]) -> Vec<Result<UnwrappedGift, Error>> {
        pipeline::unwrap_with_keys(&self.keys, &mut self.cache, &self.options, wraps)
    }

    /// NIP-44 decryption of `payload` from `sender` through the cached path: the same
    /// result as `nostr::nips::nip44::decrypt(keys.secret_key(), sender, payload)`
    /// (equal errors too), deriving and caching the conversation key on a miss.
    ///
    /// # Errors
    /// nostr's error: invalid base64, unknown version, invalid MAC or padding, not
    /// UTF-8, or a `sender` that is not a valid x-only key (not cached).
    pub fn nip44_decrypt(
        &mut self,
        sender: &PublicKey,
        payload: &str,
    ) -> Result<String, NostrError> {
        self.cache.decrypt(self.keys.secret_key(), sender, payload)
    }

    /// The cache's size and counters.
    pub fn cache_stats(&self) -> CacheStats {
        CacheStats {
            len: self.cache.len(),
            capacity: self.cache.capacity(),
            hits: self.cache.hits,
            misses: self.cache.misses,
        }
    }

    /// Drops (and zeroes) every cached conversation key.
    pub fn clear_cache(&mut self) {
        self.cache.clear();
    }
}

/// NIP-44 v2 decryption with a known conversation key: the path the
/// [`GiftUnwrapper`] cache uses.
///
/// Same steps and errors as `nostr::nips::nip44::decrypt` after its key derivation
/// (version byte, size limit, base64, MAC, padding, UTF-8).
///
/// # Errors
/// nostr's error for the first step that fails.
pub fn nip44_decrypt_with_key(
    conversation_key: &nostr::nips::nip44::v2::ConversationKey,
    payload: &str,
) -> Result<String, NostrError> {
    self::nip44::decrypt_payload(payload, || Ok(*conversation_key))
}

/// Opens every wrap for `keys`: one result per wrap, in order, each exactly
/// `UnwrappedGift::from_gift_wrap(keys, wrap)`'s outcome.
///
/// Uses a temporary [`GiftUnwrapper`] with default options (all cores, nostr's checks
/// only); keep a [`GiftUnwrapper`] to reuse sender keys across calls.
///
/// # Errors
/// Per wrap, an [`Error`] naming the failing [`Step`]; one bad wrap never affects the
/// others.
pub fn unwrap_gift_wraps(keys: &Keys, wraps: &[Event]) -> Vec<Result<UnwrappedGift, Error>> {
    let options = UnwrapOptions::default();
    let mut cache = KeyCache::new(options.cache_capacity);
    pipeline::unwrap_with_keys(keys, &mut cache, &options, wraps)
}

/// Opens every wrap with a NIP-44 signer that does not expose its secret key.
///
/// Exactly `UnwrappedGift::from_gift_wrap(signer, wrap)`'s outcome per wrap. Both
/// layers' verification is batched; decryption calls `signer.nip44_decrypt` twice per
/// wrap, spread over threads (the signer is `Sync`). No conversation key is cached.
///
/// # Errors
/// Per wrap, an [`Error`]; a signer's decryption error is wrapped as nostr does it
/// (kind `Crypto`, the signer's message).
pub fn unwrap_gift_wraps_with_signer<T>(
    signer: &T,
    wraps: &[Event],
    options: &UnwrapOptions,
) -> Vec<Result<UnwrappedGift, Error>>
where
    T: Nip44,
{
    pipeline::unwrap_with_signer(signer, options, wraps)
}

/// Opens every wrap with an asynchronous NIP-44 signer (NIP-46 bunkers and the like).
///
/// Exactly `UnwrappedGift::from_gift_wrap_async(signer, wrap)`'s outcome per wrap.
/// Decryptions are awaited one after the other; verification is batched per layer and
/// runs on the calling thread (and helper threads for large inputs, see
/// [`UnwrapOptions::threads`]), so call it where blocking for a batch verification is
/// acceptable.
///
/// # Errors
/// Per wrap, an [`Error`], as [`unwrap_gift_wraps_with_signer`].
pub async fn unwrap_gift_wraps_with_async_signer<T>(
    signer: &T,
    wraps: &[Event],
    options: &UnwrapOptions,
) -> Vec<Result<UnwrappedGift, Error>>
where
    T: AsyncNip44,
{
    pipeline::unwrap_with_async_signer(signer, options, wraps).await
}
