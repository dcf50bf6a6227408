/**
 * The WebSocket tap and the batching verifier of nostr-verify-wasm.
 *
 * The tap wraps a WebSocket class: incoming `["EVENT", sub, event]` text frames are verified in
 * batches (the id recomputed, the signature checked: nostr-tools' `verifyEvent` semantics,
 * libsecp256k1's verdicts) and dropped when invalid; every other frame, and the error and
 * close events, are dispatched in wire order behind the events before them, so an EOSE never
 * overtakes its events.
 */

/** Options of {@link tapWebSocket}. */
export interface TapOptions {
  /** Verify in a worker (worker_threads in node, a module Web Worker in browsers; one shared by
   * every tap and batch verifier of the page or process). `false`: on the main thread.
   * Default `true`. */
  worker?: boolean;
  /** Browsers: the URL of `tap-worker.js` when a bundler moves it. */
  workerUrl?: string | URL;
  /** Browsers: the URL of `nostr_verify_wasm_bg.wasm` when a bundler moves it (the worker,
   * or the main thread in inline mode, loads the module from there). */
  wasmUrl?: string | URL;
  /** A batch is sent once this many EVENT frames wait (default 1,024); otherwise at the end
   * of each burst of messages. */
  maxBatch?: number;
  /** Close a socket (code 4001) after this many forged events (invalid id or signature) from
   * it; 0 (the default) never. Frames it sends after that are discarded. */
  closeAfterForged?: number;
  /** How many delivered (id, sig) pairs `verifyEvent` remembers (default 65,536). */
  remember?: number;
  /** What `verifyEvent` answers for an event the tap did not deliver (an event the app made
   * itself, say): e.g. nostr-tools' `verifyEvent`. Default: `false`. */
  fallback?: (event: unknown) => boolean;
}

/** Counters of one relay URL (all sockets opened to it through the tap). */
export interface TapRelayStats {
  /** Sockets opened to this URL. */
  sockets: number;
  /** Messages received. */
  frames: number;
  /** EVENT frames received. */
  events: number;
  /** EVENT frames delivered (valid). */
  delivered: number;
  /** EVENT frames dropped, by reason. */
  dropped: { invalidId: number; invalidSig: number; malformed: number };
  /** Sockets to this URL closed by `closeAfterForged`. */
  closedForForgery: number;
}

/** Counters of a tap. */
export interface TapStats {
  /** Per relay URL, as given to the constructor. */
  relays: Record<string, TapRelayStats>;
  /** Batches sent to the verifier. */
  batches: number;
  /** EVENT frames sent to the verifier. */
  verified: number;
  /** Of those, frames the verifier parsed with `JSON.parse` rather than in Rust: frames the Rust
   * reader cannot prove it reads as `JSON.parse` does (a fraction or exponent in a number, an
   * escaped lone surrogate, a duplicated field, anything but `["EVENT", sub, {...}]`), all of
   * a batch holding a lone surrogate, and all in engines without `String.prototype.isWellFormed`. */
  parsedInJs: number;
  /** The largest batch. */
  maxBatchSize: number;
  /** EVENT frames that were copies of an event verified lately or on its way (the same event
   * from another relay): they took that verdict without a second verification. */
  copies: number;
  /** The longest time from the arrival of a batch's first frame to its verdicts (ms): the
   * tap's own delay. */
  maxVerdictMs: number;
  /** The longest time an event waited between its arrival and its delivery (ms): the tap's
   * delay plus the time the library spent on the frames dispatched before it. */
  maxLatencyMs: number;
  /** EVENT frames waiting for a verdict now (gathered or sent to the verifier). */
  pending: number;
  /** The most EVENT frames that were waiting for a verdict at once. */
  maxAwaiting: number;
  /** Times the tap paused its sockets that can pause (the `ws` package's) because 4 batches'
   * worth of frames (`maxBatch` each) waited for verdicts; they resume at 2. The flood then
   * waits in the kernel's socket buffers, as when a library verifies inline. */
  pauses: number;
  /** Messages not dispatched because their socket was closing (closed by the app or for
   * forgery), as a native WebSocket discards them. */
  discarded: number;
  /** EVENT frames dropped because no verdict could be had (the module failed to load). */
  unverified: number;
  /** Delivered (id, sig) pairs `verifyEvent` remembers now. */
  remembered: number;
  /** Whether verification runs in a worker (false inline, or after the worker failed). */
  worker: boolean;
  /** Why the worker failed, if it did. */
  workerError: string | null;
  /** The worker's warm-up before `ready` (null inline, or before `ready`). */
  warmUp: TapWarmUp | null;
}

/**
 * The worker's warm-up, which `ready` waits for: batches of eight real events (48, 192 and
 * 1,024 frames, the smallest ending with a forged copy), run until each size is 2.5 times
 * faster than at first (the engine's optimizing tier has compiled the hot code) or for 1.5 s,
 * so that the first real batches do not pay for compiling.
 */
export interface TapWarmUp {
  /** Batches run. */
  rounds: number;
  /** Wall time of the warm-up (ms). */
  ms: number;
  /** Whether the forged copy was rejected (it always is: false means the warm-up stopped). */
  forgedRejected: boolean;
  /** Whether every size reached 2.5 times its first speed within the 1.5 s. */
  optimized: boolean;
}

/** A WebSocket class whose instances wrap a socket of the tapped class. */
export interface TapWebSocketClass {
  new (url: string | URL, protocols?: string | string[], ...rest: unknown[]): WebSocket;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
}

/** What {@link tapWebSocket} returns. */
export interface Tap {
  /** Pass this class to the library (nostr-tools' `websocketImplementation`, rx-nostr's
   * `websocketCtor`, …) or install it as `globalThis.WebSocket`. */
  WebSocket: TapWebSocketClass;
  /** Synchronous: `true` only for an event the tap delivered: the same id and sig, and the
   * same fields under the id (compared through a keyed 64-bit fingerprint of the event's
   * fields and sig, so a copy with altered content is refused); else the `fallback`'s answer,
   * by default `false`. For the libraries' own verification hooks. */
  verifyEvent(event: unknown, url?: string): boolean;
  /** The worker is loaded and warmed up (`stats().warmUp`), or the inline module loaded. */
  ready: Promise<void>;
  /** Counters, per relay URL and in total. */
  stats(): TapStats;
  /** Closes the tap's open sockets (code 1000) and releases its worker. */
  close(): Promise<void>;
}

/**
 * Taps a WebSocket class (default `globalThis.WebSocket`; in node 20 pass `require("ws")`).
 */
export function tapWebSocket(WebSocketImpl?: unknown, options?: TapOptions): Tap;

/** Options of {@link createBatchVerifier}. */
export interface BatchVerifierOptions {
  /** Verify in a worker (default) or on the main thread (`false`). */
  worker?: boolean;
  /** Browsers: the URL of `tap-worker.js` when a bundler moves it. */
  workerUrl?: string | URL;
  /** Browsers: the URL of `nostr_verify_wasm_bg.wasm` when a bundler moves it. */
  wasmUrl?: string | URL;
  /** A batch is sent once this many calls wait (default 1,024). */
  maxBatch?: number;
}

/** What {@link createBatchVerifier} returns. */
export interface BatchVerifier {
  /** Resolves with nostr-tools' `verifyEvent` verdict; calls made close together are verified
   * as one batch. Never rejects for a malformed event (it resolves `false`). */
  verify(event: unknown): Promise<boolean>;
  /** The worker is loaded and warmed up (`stats().warmUp`), or the inline module loaded. */
  ready: Promise<void>;
  /** Counters. */
  stats(): {
    batches: number;
    verified: number;
    maxBatchSize: number;
    pending: number;
    worker: boolean;
    workerError: string | null;
    warmUp: TapWarmUp | null;
  };
  /** Answers the calls still pending, then releases the worker. */
  close(): Promise<void>;
}

/** A batching verifier for asynchronous hooks (rx-nostr's `verifier`, nostr-fetch's
 * `eventVerifier`, NDK's `signatureVerificationFunction`). */
export function createBatchVerifier(options?: BatchVerifierOptions): BatchVerifier;
