//! Helpers shared by the CLI's integration tests.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `../shared/data` beside the checkout (or `$NOSTR_VERIFY_DATA`), read in place.
///
/// This crate's manifest is `<checkout>/cli`, so the folder is two levels up, at
/// `<checkout>/../shared/data`. When it is missing the test says so loudly and is skipped
/// (`None`); under `CI=true` a missing folder fails the test instead.
pub(crate) fn data_dir() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NOSTR_VERIFY_DATA") {
        let p = PathBuf::from(p);
        if p.is_dir() {
            return Some(p);
        }
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cand = manifest.join("..").join("..").join("shared").join("data");
    if cand.join("README.md").is_file() {
        return Some(cand);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("../shared/data is missing: under CI=true the shared test data must be present");
    }
    eprintln!("\n*** SKIPPED: ../shared/data not found beside the checkout; data-driven test not run ***\n");
    None
}

/// The small sample of real events vendored in the checkout (`tests/data/events-sample.jsonl`:
/// 300 valid events from public repositories, sources in `tests/data/README.md`). Tests that
/// need real events but not the whole corpus read it, so they run in any clone.
pub(crate) fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tests")
        .join("data")
        .join("events-sample.jsonl")
}

#[path = "../../../tests/common/scale.rs"]
#[allow(unreachable_pub)] // shared with the other crates' tests, where it is `pub`
mod scale;
#[allow(unused_imports)] // not every suite scales its counts
pub(crate) use scale::scale;

/// A fresh, empty directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    /// Creates `nostr-verify-cli-<test>-<pid>`.
    pub(crate) fn new(test: &str) -> TempDir {
        let p =
            std::env::temp_dir().join(format!("nostr-verify-cli-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    /// A path inside the directory.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the binary with `args`, feeding `stdin` (empty when `None`).
pub(crate) fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    spawn_and_feed(
        Command::new(env!("CARGO_BIN_EXE_nostr-verify")).args(args),
        stdin,
    )
}

/// Starts `cmd` with piped standard streams, writes `stdin` (empty when `None`) from a thread,
/// and collects its output.
fn spawn_and_feed(cmd: &mut Command, stdin: Option<&[u8]>) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nostr-verify");
    let input = stdin.map(<[u8]>::to_vec).unwrap_or_default();
    let mut pipe = child.stdin.take().expect("stdin pipe");
    let writer = std::thread::spawn(move || {
        // The binary may exit before reading everything (usage errors); that is fine.
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for nostr-verify");
    writer.join().expect("stdin writer");
    out
}

/// The exit code (panics if the process was killed by a signal).
pub(crate) fn code(out: &Output) -> i32 {
    out.status.code().expect("exited normally")
}

/// The JSON object on the last line of standard output.
pub(crate) fn last_json(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_else(|| {
        panic!(
            "no output; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(last).unwrap_or_else(|e| panic!("last line is not JSON ({e}): {last}"))
}

/// `summary[key]` as an integer.
pub(crate) fn int(v: &serde_json::Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing or not an integer in {v}"))
}

/// One row of an `*.index.tsv` file.
pub(crate) struct IndexRow {
    pub(crate) line: u64,
    pub(crate) id: String,
    pub(crate) pubkey: String,
    pub(crate) kind: u16,
    pub(crate) id_ok: bool,
    pub(crate) sig_ok: bool,
}

/// Reads an `*.index.tsv` file (header skipped).
pub(crate) fn read_index(path: &Path) -> Vec<IndexRow> {
    let text = std::fs::read_to_string(path).expect("read index");
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            IndexRow {
                line: f[0].parse().expect("line"),
                id: f[1].to_string(),
                pubkey: f[2].to_string(),
                kind: f[3].parse().expect("kind"),
                id_ok: f[4] == "1",
                sig_ok: f[5] == "1",
            }
        })
        .collect()
}

/// `path` as `&str` (test paths are UTF-8).
pub(crate) fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Runs the binary with `args` in the directory `dir`, feeding `stdin`.
pub(crate) fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    spawn_and_feed(
        Command::new(env!("CARGO_BIN_EXE_nostr-verify"))
            .args(args)
            .current_dir(dir),
        stdin,
    )
}

/// An event line whose `content` makes it `len` bytes long. Its id is wrong (so the line is an
/// `invalid id` rejection), every field is well-formed.
pub(crate) fn big_event_line(len: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"id":"{:064x}","pubkey":"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798","created_at":1,"kind":1,"tags":[],"sig":"{:0128x}","content":""#,
        7, 0
    );
    let mut line = head.into_bytes();
    let tail = b"\"}";
    line.resize(len - tail.len(), b'a');
    line.extend_from_slice(tail);
    line
}
