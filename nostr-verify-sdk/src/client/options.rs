//! The options of [`VerifiedClient`](super::VerifiedClient) and of its auto-closing
//! subscriptions.

use std::sync::Arc;
use std::time::Duration;

use nostr_gossip::NostrGossip;
use nostr_sdk::pool::policy::AdmitPolicy;
use nostr_sdk::prelude::ReqExitPolicy;

#[cfg(doc)]
use crate::transport::TapHandle;

/// Options of an auto-closing subscription through the tap
/// ([`VerifiedClient::subscribe`] with `Some(opts)`): the same conditions as nostr-relay-pool
/// 0.44's `SubscribeAutoCloseOptions` (whose fields it keeps private, hence a type of this
/// crate), applied per relay as its `handle_auto_closing` does.
///
/// [`VerifiedClient::subscribe`]: crate::VerifiedClient::subscribe
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoCloseOptions {
    /// When a relay's part ends (default `ExitOnEOSE`).
    pub exit_policy: ReqExitPolicy,
    /// The whole subscription ends after this long (default: never, as the SDK's).
    pub timeout: Option<Duration>,
    /// A relay's part ends when it sent no event of the subscription for this long (counted
    /// from the REQ, then from its last event; default: never).
    pub idle_timeout: Option<Duration>,
}

impl AutoCloseOptions {
    /// Sets the exit policy.
    pub fn exit_policy(mut self, policy: ReqExitPolicy) -> Self {
        self.exit_policy = policy;
        self
    }

    /// Sets the overall timeout.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the idle timeout.
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }
}

/// Options of [`VerifiedClient`].
///
/// [`VerifiedClient`]: crate::VerifiedClient
#[derive(Clone, Default)]
pub struct VerifiedClientOptions {
    /// The gossip store given to `ClientBuilder::gossip`, if any: events delivered through the
    /// tap bypass the SDK's admission middleware, so the client feeds them to gossip itself.
    pub gossip: Option<Arc<dyn NostrGossip>>,
    /// The admission policy given to `ClientBuilder::admit_policy`, if any (applied to tap
    /// events the same way, after gossip).
    pub admit_policy: Option<Arc<dyn AdmitPolicy>>,
    /// Capacity of each subscription's tap channel (default 1024 when 0). A full channel stops
    /// the relay's reader (back-pressure).
    pub channel_capacity: usize,
    /// What to do with a relay that sends forged events (default: count them only).
    pub forged_policy: ForgedEventPolicy,
}

/// What [`VerifiedClient`] does with a relay that sends forged events: an id that is not the
/// hash of the event, or an invalid signature ([`crate::TapStats::forged`] in that relay's
/// [`TapHandle::relay_stats`]). Such events are always dropped; the policy decides what
/// happens to the relay.
///
/// [`VerifiedClient`]: crate::VerifiedClient
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForgedEventPolicy {
    /// Count them per relay, nothing else (the default).
    #[default]
    Count,
    /// Disconnect the relay (`Relay::disconnect`: status `Terminated`, no automatic reconnect)
    /// at its first forged event. `Client::connect_relay` connects it again; its count is kept,
    /// so the next forged event disconnects it again.
    Disconnect,
    /// Ban the relay (`Relay::ban`: status `Banned`, it never reconnects) once it has sent this
    /// many forged events (0 counts as 1).
    BanAfter(u64),
}

impl std::fmt::Debug for VerifiedClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedClientOptions")
            .field("gossip", &self.gossip.is_some())
            .field("admit_policy", &self.admit_policy.is_some())
            .field("channel_capacity", &self.channel_capacity)
            .field("forged_policy", &self.forged_policy)
            .finish()
    }
}

/// An [`AutoCloseOptions`] with `policy` and an overall `timeout`.
pub(super) fn closing(timeout: Duration, policy: ReqExitPolicy) -> AutoCloseOptions {
    AutoCloseOptions::default()
        .exit_policy(policy)
        .timeout(Some(timeout))
}
