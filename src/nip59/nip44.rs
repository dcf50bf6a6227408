//! The NIP-44 v2 decryption path with a conversation-key cache.
//!
//! `nostr::nips::nip44::decrypt(secret_key, public_key, payload)` does, in this order:
//! decode the first base64 quantum and read the version byte (`0x02` only), reject an
//! encoded payload longer than the largest v2 payload, base64-decode the whole payload,
//! derive the conversation key (ECDH + HKDF-extract), run `v2::decrypt_to_bytes`, and
//! require UTF-8. [`decrypt_payload`] runs the same steps with the same errors (equal kind
//! and message), but takes the conversation key from a closure, so a cached key can be
//! used and the ECDH is skipped for payloads that are not even base64.

use std::collections::HashMap;

use base64::engine::{general_purpose::STANDARD, Engine};
use nostr::error::{Error as NostrError, ErrorKind};
use nostr::key::{PublicKey, SecretKey};
use nostr::nips::nip44::v2::{self, ConversationKey};
use zeroize::Zeroizing;

/// Bytes of a conversation key on the heap, zeroed when dropped.
///
/// Boxed so that the secret never moves: a `HashMap` that grows or shuffles its
/// entries moves only the pointer, and leaves no stale copy of the key behind.
pub(crate) type SecretBox = Box<Zeroizing<[u8; 32]>>;

/// NIP-44 v2 padded length (the spec's `calc_padded_len`).
const fn padded_len(len: u64) -> u64 {
    if len <= 32 {
        return 32;
    }
    let next_power: u64 = 1 << (64 - (len - 1).leading_zeros());
    let chunk: u64 = if next_power <= 256 {
        32
    } else {
        next_power / 8
    };
    chunk * ((len - 1) / chunk + 1)
}

/// Longest v2 payload: version + nonce + (6-byte length prefix + padded `u32::MAX`) + MAC,
/// as nostr 0.45.6 computes it (`v2::MAX_PAYLOAD_SIZE`).
const MAX_PAYLOAD_SIZE: u64 = 1 + 32 + (6 + padded_len(u32::MAX as u64)) + 32;
/// Its base64 length (`v2::MAX_ENCODED_PAYLOAD_SIZE`).
const MAX_ENCODED_PAYLOAD_SIZE: u64 = MAX_PAYLOAD_SIZE.div_ceil(3) * 4;

/// A message-only error source, as nostr's `*_display` constructors build them.
#[derive(Debug)]
struct Message(String);

impl core::fmt::Display for Message {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

impl core::error::Error for Message {}

fn malformed_display(e: impl core::fmt::Display) -> NostrError {
    NostrError::new(ErrorKind::Malformed, Message(e.to_string()))
}

/// Version check, size check and base64 decoding, with nostr's errors.
fn decode_payload(payload: &[u8]) -> Result<Vec<u8>, NostrError> {
    // One base64 quantum first, so that the version is known before the full decode.
    let prefix: &[u8] = payload.get(..4).unwrap_or(payload);
    let decoded_prefix: Vec<u8> = STANDARD.decode(prefix).map_err(malformed_display)?;
    let version: u8 = decoded_prefix
        .first()
        .copied()
        .ok_or_else(|| NostrError::with_static_message(ErrorKind::Missing, "version not found"))?;
    if version != 0x02 {
        return Err(NostrError::new(
            ErrorKind::Unsupported,
            format!("unknown version: {version}"),
        ));
    }
    if payload.len() as u64 > MAX_ENCODED_PAYLOAD_SIZE {
        return Err(NostrError::with_static_message(
            ErrorKind::Invalid,
            "message too long",
        ));
    }
    let decoded_len: usize = base64::decoded_len_estimate(payload.len());
    if decoded_len > isize::MAX as usize {
        return Err(NostrError::with_static_message(
            ErrorKind::Unsupported,
            "NIP-44 payload size is not supported on this platform",
        ));
    }
    let mut decoded: Vec<u8> = Vec::new();
    decoded.try_reserve_exact(decoded_len).map_err(|_| {
        NostrError::with_static_message(
            ErrorKind::Other,
            "failed to allocate NIP-44 payload buffer",
        )
    })?;
    STANDARD
        .decode_vec(payload, &mut decoded)
        .map_err(malformed_display)?;
    Ok(decoded)
}

/// Decrypts a NIP-44 payload with the conversation key `key()` returns.
///
/// Same steps, order and errors as `nostr::nips::nip44::decrypt`; `key` is called only
/// once the payload has decoded.
///
/// # Errors
/// nostr's error for the first step that fails (base64, version, size, HMAC, padding,
/// UTF-8), or `key()`'s error.
pub(crate) fn decrypt_payload(
    payload: &str,
    key: impl FnOnce() -> Result<ConversationKey, NostrError>,
) -> Result<String, NostrError> {
    let decoded: Vec<u8> = decode_payload(payload.as_bytes())?;
    let conversation_key: ConversationKey = key()?;
    let bytes: Vec<u8> = v2::decrypt_to_bytes(&conversation_key, &decoded)?;
    String::from_utf8(bytes).map_err(|e| NostrError::new(ErrorKind::Malformed, e))
}

/// Derives a conversation key into zeroizing heap memory.
///
/// nostr's `ConversationKey` is `Copy` and not zeroized: the temporary here lives for
/// this call only.
pub(crate) fn derive_boxed(
    secret_key: &SecretKey,
    public_key: &PublicKey,
) -> Result<SecretBox, NostrError> {
    let key: ConversationKey = ConversationKey::derive(secret_key, public_key)?;
    let mut boxed: SecretBox = Box::new(Zeroizing::new([0u8; 32]));
    boxed.copy_from_slice(key.as_bytes());
    Ok(boxed)
}

struct Slot {
    key: SecretBox,
    last_used: u64,
}

/// Bounded least-recently-used map from a sender's public key to the conversation key
/// shared with it. Entries are zeroed when evicted, cleared or dropped.
pub(crate) struct KeyCache {
    slots: HashMap<PublicKey, Slot>,
    capacity: usize,
    clock: u64,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
}

impl KeyCache {
    pub(crate) fn new(capacity: usize) -> Self {
        KeyCache {
            slots: HashMap::new(),
            capacity,
            clock: 0,
            hits: 0,
            misses: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn clear(&mut self) {
        self.slots.clear();
    }

    /// Marks `sender` as used; `true` if its key is cached (counts a hit or a miss).
    pub(crate) fn touch(&mut self, sender: &PublicKey) -> bool {
        self.clock += 1;
        match self.slots.get_mut(sender) {
            Some(slot) => {
                slot.last_used = self.clock;
                self.hits += 1;
                true
            }
            None => {
                self.misses += 1;
                false
            }
        }
    }

    pub(crate) fn peek(&self, sender: &PublicKey) -> Option<&[u8; 32]> {
        self.slots.get(sender).map(|s| &**s.key)
    }

    /// Inserts a derived key, evicting the least recently used entry when full.
    pub(crate) fn insert(&mut self, sender: PublicKey, key: SecretBox) {
        if self.capacity == 0 {
            return;
        }
        if !self.slots.contains_key(&sender) && self.slots.len() >= self.capacity {
            let oldest: Option<PublicKey> = self
                .slots
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                // Dropping the slot zeroes the key.
                self.slots.remove(&oldest);
            }
        }
        self.clock += 1;
        self.slots.insert(
            sender,
            Slot {
                key,
                last_used: self.clock,
            },
        );
    }

    /// Decrypts with the cached key for `sender`, deriving and caching it on a miss.
    pub(crate) fn decrypt(
        &mut self,
        secret_key: &SecretKey,
        sender: &PublicKey,
        payload: &str,
    ) -> Result<String, NostrError> {
        let decoded: Vec<u8> = decode_payload(payload.as_bytes())?;
        if !self.touch(sender) {
            let key: SecretBox = derive_boxed(secret_key, sender)?;
            self.insert(*sender, key);
        }
        let conversation_key: ConversationKey = match self.peek(sender) {
            Some(bytes) => ConversationKey::new(*bytes),
            // Capacity 0: nothing is kept.
            None => ConversationKey::derive(secret_key, sender)?,
        };
        let bytes: Vec<u8> = v2::decrypt_to_bytes(&conversation_key, &decoded)?;
        String::from_utf8(bytes).map_err(|e| NostrError::new(ErrorKind::Malformed, e))
    }
}

impl core::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyCache")
            .field("len", &self.slots.len())
            .field("capacity", &self.capacity)
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_len_matches_spec_table() {
        // From the NIP-44 spec's calc_padded_len vectors.
        for (len, want) in [
            (16, 32),
            (32, 32),
            (33, 64),
            (37, 64),
            (45, 64),
            (49, 64),
            (64, 64),
            (65, 96),
            (100, 128),
            (111, 128),
            (200, 224),
            (250, 256),
            (320, 320),
            (383, 384),
            (384, 384),
            (400, 448),
            (500, 512),
            (512, 512),
            (515, 640),
            (700, 768),
            (800, 896),
            (900, 1024),
            (1020, 1024),
            (65536, 65536),
        ] {
            assert_eq!(padded_len(len), want, "len {len}");
        }
        // u32::MAX pads to 2^32, so the largest payload is 2^32 + 71 bytes.
        assert_eq!(MAX_PAYLOAD_SIZE, (1u64 << 32) + 71);
        assert_eq!(
            MAX_ENCODED_PAYLOAD_SIZE,
            ((1u64 << 32) + 71).div_ceil(3) * 4
        );
    }

    #[test]
    fn cache_evicts_least_recently_used() {
        let mut cache = KeyCache::new(2);
        let pk = |b: u8| PublicKey::from_byte_array([b; 32]);
        let (a, b, c) = (pk(1), pk(2), pk(3));
        cache.insert(a, Box::new(Zeroizing::new([1; 32])));
        cache.insert(b, Box::new(Zeroizing::new([2; 32])));
        assert!(cache.touch(&a)); // a is now more recent than b
        cache.insert(c, Box::new(Zeroizing::new([3; 32])));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.peek(&a), Some(&[1; 32]));
        assert_eq!(cache.peek(&b), None);
        assert_eq!(cache.peek(&c), Some(&[3; 32]));
        let mut zero = KeyCache::new(0);
        zero.insert(a, Box::new(Zeroizing::new([1; 32])));
        assert_eq!(zero.len(), 0);
    }
}
