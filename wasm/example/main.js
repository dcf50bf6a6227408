// The page: hands events to the worker and shows one verdict per event. With
// `?events=URL` it fetches the events from URL and verifies them at once (the headless
// Chromium test, wasm/test/browser.mjs, reads the outcome from document.body.dataset).
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const waiting = new Map();
let nextId = 0;
worker.onmessage = ({ data }) => {
  const w = waiting.get(data.id);
  waiting.delete(data.id);
  if (data.error) w.reject(new Error(data.error));
  else w.resolve(data);
};
worker.onerror = (e) => {
  document.body.dataset.state = "error";
  document.body.dataset.error = "worker: " + (e.message || "failed to start");
};

/** Verifies `events` in the worker: resolves to { verdicts: Uint8Array, ms, engine }. */
export function verifyInWorker(events) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, events });
  });
}

function parse(text) {
  const t = text.trim();
  if (t.startsWith("[")) return JSON.parse(t);
  return t.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

function show(events, verdicts, ms) {
  const ok = verdicts.reduce((a, b) => a + b, 0);
  document.getElementById("summary").textContent =
    `${ok} valid of ${events.length} in ${ms.toFixed(1)} ms (in the worker)`;
  const list = document.getElementById("results");
  list.replaceChildren(
    ...events.map((e, i) => {
      const li = document.createElement("li");
      li.className = verdicts[i] ? "good" : "bad";
      li.textContent = `${verdicts[i] ? "valid" : "INVALID"} ${String(e?.id).slice(0, 16)}… ${String(e?.content ?? "").slice(0, 60)}`;
      return li;
    }),
  );
}

document.getElementById("verify").onclick = async () => {
  try {
    const events = parse(document.getElementById("events").value);
    const { verdicts, ms } = await verifyInWorker(events);
    show(events, verdicts, ms);
  } catch (e) {
    document.getElementById("summary").textContent = String(e);
  }
};

const src = new URLSearchParams(location.search).get("events");
if (src) {
  (async () => {
    try {
      const events = await (await fetch(src)).json();
      const first = await verifyInWorker(events);
      const again = await verifyInWorker(events); // the worker's Verifier, warm key cache
      show(events, first.verdicts, first.ms);
      Object.assign(document.body.dataset, {
        verdicts: Array.from(first.verdicts).join(""),
        again: Array.from(again.verdicts).join(""),
        single: Array.from(first.single).join(""),
        stats: JSON.stringify(again.stats),
        state: "done",
      });
    } catch (e) {
      Object.assign(document.body.dataset, { state: "error", error: String(e && e.stack || e) });
    }
  })();
}
