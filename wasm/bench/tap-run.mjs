// One fetch of wasm/bench-tap.mjs, the same in node (a child process) and in the page
// (wasm/bench/tap.html): the check of what the library delivered, and the run loop that
// decides when the run is over. No dependencies; bundled into the recipes' bundle.

/**
 * What a library delivered, against the corpus ({ valid: [...], forged: [...] }): each valid
 * event exactly once, unchanged, and nothing else. While the run is measured, `add` does only
 * the id bookkeeping that decides when the run is over; the field-by-field comparison with the
 * corpus (a few µs an event, mostly its tags' JSON: about a quarter of the tap's main-thread
 * CPU when it ran inside the window) runs in `result()`, after the window.
 */
export function makeChecker(corpus) {
  const valid = new Map(corpus.valid.map((e) => [e.id, e]));
  const forged = new Set(corpus.forged.map((e) => e.id));
  const seen = new Set();
  const firsts = []; // the first delivery of each valid id, compared in result()
  const bad = { duplicates: 0, forged: 0, unknown: 0, altered: 0 };
  return {
    expected: valid.size,
    get delivered() {
      return seen.size;
    },
    /** True when `e` has the id of a valid event not delivered before (its fields are compared
     * in result()). */
    add(e) {
      const id = e && e.id;
      if (!valid.has(id)) {
        if (forged.has(id)) bad.forged++;
        else bad.unknown++;
        return false;
      }
      if (seen.has(id)) {
        bad.duplicates++;
        return false;
      }
      seen.add(id);
      firsts.push(e);
      return true;
    },
    result() {
      // An event with a valid event's id but other fields (a forged copy delivered) counts as
      // altered, not delivered.
      let altered = 0;
      for (const e of firsts) {
        const v = valid.get(e.id);
        if (e.sig !== v.sig || e.content !== v.content || e.pubkey !== v.pubkey || e.created_at !== v.created_at || e.kind !== v.kind ||
          JSON.stringify(e.tags) !== JSON.stringify(v.tags)) altered++;
      }
      const counts = { ...bad, altered };
      const delivered = seen.size - altered;
      const problems = [];
      if (delivered !== valid.size) problems.push(`${valid.size - delivered} of ${valid.size} valid events not delivered`);
      for (const [k, n] of Object.entries(counts)) if (n) problems.push(`${n} ${k}`);
      return { delivered, expected: valid.size, ...counts, problems };
    },
  };
}

/**
 * Runs `runner.fetch(relays, { kinds: [1] }, sink)` until every expected event came and the
 * library signalled its completion (its EOSE / the end of its request), or the library's
 * completion came and nothing more for 5 s, or `timeoutS` passed. `hooks.start()` is called
 * right before the fetch and `hooks.stop()` at that end, synchronously (the measured window);
 * resolves to { why, error, wallLastMs, wallEoseMs, eventsAfterEose, ...checker result }.
 */
export async function runFetch({ runner, relays, check, timeoutS, hooks }) {
  let done = false;
  let eoseAt = NaN;
  let lastAt = NaN;
  let lastProgress = 0;
  let eventsAfterEose = 0;
  let error = null;
  let why = "";
  let finish;
  const finished = new Promise((ok) => (finish = ok));
  const close = (reason) => {
    if (done) return;
    done = true;
    hooks.stop();
    why = reason;
    finish();
  };
  const sink = {
    event(e) {
      if (done) return;
      if (check.add(e)) {
        lastAt = performance.now();
        lastProgress = lastAt;
      }
      if (!Number.isNaN(eoseAt)) eventsAfterEose++;
      if (check.delivered === check.expected && !Number.isNaN(eoseAt)) close("complete");
    },
    eose() {
      if (Number.isNaN(eoseAt)) eoseAt = performance.now();
      if (check.delivered === check.expected) close("complete");
    },
    error(e) {
      error = String((e && e.stack) || e);
      close("error");
    },
  };
  hooks.start();
  const t0 = performance.now();
  lastProgress = t0;
  const watchdog = setInterval(() => {
    const now = performance.now();
    if (now - t0 > timeoutS * 1000) close(`timeout (${timeoutS} s)`);
    // The library said it was complete and nothing came for 5 s: it dropped the rest.
    else if (!Number.isNaN(eoseAt) && now - Math.max(eoseAt, lastProgress) > 5000) close("the library completed without every event");
  }, 250);
  try {
    await runner.fetch(relays, { kinds: [1] }, sink);
  } catch (e) {
    sink.error(e);
  }
  await finished;
  clearInterval(watchdog);
  return { why, error, wallLastMs: lastAt - t0, wallEoseMs: eoseAt - t0, eventsAfterEose, ...check.result() };
}

/** The parts of tap.stats() the tables show. */
export function tapSummary(stats) {
  if (!stats) return null;
  return {
    maxLatencyMs: stats.maxLatencyMs,
    batches: stats.batches,
    verified: stats.verified,
    maxBatchSize: stats.maxBatchSize,
    pauses: stats.pauses,
    maxAwaiting: stats.maxAwaiting,
    worker: stats.worker,
    workerError: stats.workerError,
    dropped: Object.values(stats.relays).reduce((s, r) => s + r.dropped.invalidId + r.dropped.invalidSig + r.dropped.malformed, 0),
    relays: stats.relays,
  };
}
