//! One auto-closing tap subscription, driven per relay.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use nostr_sdk::prelude::{ClientMessage, Event, EventId, RelayUrl, ReqExitPolicy, SubscriptionId};
use nostr_sdk::Client;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::delivery::Core;
use crate::transport::{TapEvent, TapHandle};

#[derive(Debug, Clone, Copy)]
enum RelayState {
    /// Before EOSE: events received.
    Open {
        events: u16,
    },
    /// After EOSE: events received since, and the end for `WaitDurationAfterEOSE`.
    AfterEose {
        events: u16,
        until: Option<Instant>,
    },
    Done,
}

/// One auto-closing tap subscription: applies the exit policy and the idle timeout per relay,
/// de-duplicates and forwards to the caller's stream.
pub(super) struct Driver {
    pub(super) client: Client,
    pub(super) tap: TapHandle,
    pub(super) core: Arc<Core>,
    pub(super) id: SubscriptionId,
    pub(super) policy: ReqExitPolicy,
    /// The overall timeout.
    pub(super) deadline: Option<Instant>,
    /// A relay is done after this long without an event of the subscription.
    pub(super) idle: Option<Duration>,
}

impl Driver {
    pub(super) async fn run(
        self,
        relays: HashSet<RelayUrl>,
        mut rx: mpsc::Receiver<TapEvent>,
        etx: mpsc::Sender<Event>,
    ) {
        let start = Instant::now();
        let mut state: HashMap<RelayUrl, RelayState> = relays
            .into_iter()
            .map(|r| (r, RelayState::Open { events: 0 }))
            .collect();
        // Last event (or the start) per relay, for the idle timeout.
        let mut last: HashMap<RelayUrl, Instant> =
            state.keys().map(|r| (r.clone(), start)).collect();
        let mut seen: HashSet<EventId> = HashSet::new();
        let mut consumer_gone = false;
        while !consumer_gone && state.values().any(|s| !matches!(s, RelayState::Done)) {
            let mut wake = self.deadline;
            let mut sooner = |t: Instant| wake = Some(wake.map_or(t, |w| w.min(t)));
            for (url, s) in &state {
                if let RelayState::AfterEose { until: Some(u), .. } = s {
                    sooner(*u);
                }
                if let (Some(idle), false) = (self.idle, matches!(s, RelayState::Done)) {
                    sooner(last[url] + idle);
                }
            }
            let next = match wake {
                Some(w) => tokio::time::timeout_at(w, rx.recv()).await,
                None => Ok(rx.recv().await),
            };
            let ev = match next {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(_) => {
                    let now = Instant::now();
                    if self.deadline.is_some_and(|d| now >= d) {
                        break; // overall timeout: the SDK's handler sends CLOSE
                    }
                    let mut idle_done = Vec::new();
                    for (url, s) in state.iter_mut() {
                        if let RelayState::AfterEose { until: Some(u), .. } = s {
                            if *u <= now {
                                *s = RelayState::Done;
                            }
                        }
                        if let Some(idle) = self.idle {
                            if !matches!(s, RelayState::Done) && last[url] + idle <= now {
                                *s = RelayState::Done;
                                idle_done.push(url.clone());
                            }
                        }
                    }
                    if !idle_done.is_empty() {
                        let _ = self
                            .client
                            .send_msg_to(idle_done, ClientMessage::close(self.id.clone()))
                            .await;
                    }
                    continue;
                }
            };
            match ev {
                TapEvent::Event {
                    relay_url,
                    subscription_id,
                    event,
                } => {
                    let deliver = self.core.admit(&relay_url, &subscription_id, &event).await;
                    let Some(s) = state.get_mut(&relay_url) else {
                        continue;
                    };
                    if matches!(s, RelayState::Done) {
                        continue;
                    }
                    last.insert(relay_url.clone(), Instant::now());
                    if deliver && seen.insert(event.id) && etx.send(*event).await.is_err() {
                        consumer_gone = true;
                    }
                    if self.count_event(s) {
                        *s = RelayState::Done;
                        let _ = self
                            .client
                            .send_msg_to([relay_url], ClientMessage::close(self.id.clone()))
                            .await;
                    }
                }
                TapEvent::Eose { relay_url, .. } => {
                    if let Some(s) = state.get_mut(&relay_url) {
                        *s = match (self.policy, *s) {
                            (_, RelayState::Done) => RelayState::Done,
                            (ReqExitPolicy::ExitOnEOSE, _) => RelayState::Done,
                            (ReqExitPolicy::WaitDurationAfterEOSE(d), _) => RelayState::AfterEose {
                                events: 0,
                                until: Some(Instant::now() + d),
                            },
                            (ReqExitPolicy::WaitForEventsAfterEOSE(0), _) => RelayState::Done,
                            (ReqExitPolicy::WaitForEventsAfterEOSE(_), _) => {
                                RelayState::AfterEose {
                                    events: 0,
                                    until: None,
                                }
                            }
                            (ReqExitPolicy::WaitForEvents(_), s) => s,
                        };
                    }
                }
                TapEvent::Closed {
                    relay_url, message, ..
                } => {
                    // `auth-required:` is retried by the SDK after authentication.
                    if !message.starts_with("auth-required:") {
                        state.insert(relay_url, RelayState::Done);
                    }
                }
                TapEvent::Disconnected { relay_url } => {
                    if let Some(s) = state.get_mut(&relay_url) {
                        *s = RelayState::Done;
                    }
                }
            }
        }
        self.tap.unregister(&self.id);
    }

    /// Counts one event for a relay; `true` if the relay's exit policy is now met.
    fn count_event(&self, s: &mut RelayState) -> bool {
        match (self.policy, s) {
            (ReqExitPolicy::WaitForEvents(n), RelayState::Open { events })
            | (ReqExitPolicy::WaitForEvents(n), RelayState::AfterEose { events, .. }) => {
                *events = events.saturating_add(1);
                *events >= n
            }
            (ReqExitPolicy::WaitForEventsAfterEOSE(n), RelayState::AfterEose { events, .. }) => {
                *events = events.saturating_add(1);
                *events >= n
            }
            _ => false,
        }
    }
}
