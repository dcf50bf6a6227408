//! Runs the `nostr-verify` binary on the real corpus and on corrupted inputs.

mod common;

use common::{code, int, last_json, read_index, run, s, IndexRow, TempDir};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::Path;

/// What the index says `check` must find: (valid, invalid_id, invalid_sig, duplicates, authors,
/// valid ids in order of first appearance).
fn expected_from_index(rows: &[IndexRow]) -> (u64, u64, u64, u64, u64, Vec<String>) {
    let (mut invalid_id, mut invalid_sig, mut duplicates) = (0, 0, 0);
    let mut ids = HashSet::new();
    let mut authors = HashSet::new();
    let mut valid_ids = Vec::new();
    for r in rows {
        if !r.id_ok {
            invalid_id += 1;
        } else if !r.sig_ok {
            invalid_sig += 1;
        } else if ids.insert(r.id.clone()) {
            authors.insert(r.pubkey.clone());
            valid_ids.push(r.id.clone());
        } else {
            duplicates += 1;
        }
    }
    (
        valid_ids.len() as u64,
        invalid_id,
        invalid_sig,
        duplicates,
        authors.len() as u64,
        valid_ids,
    )
}

/// `path:LINE: reason` lines of a `--rejects` file, keyed by line number.
fn rejects(file: &Path, input: &str) -> BTreeMap<u64, String> {
    let text = std::fs::read_to_string(file).expect("read rejects");
    text.lines()
        .map(|l| {
            let rest = l
                .strip_prefix(&format!("{input}:"))
                .unwrap_or_else(|| panic!("prefix: {l}"));
            let (no, reason) = rest.split_once(": ").expect("LINE: reason");
            (no.parse().expect("line number"), reason.to_string())
        })
        .collect()
}

/// Ids of the events in a `--valid` file, in order.
fn valid_ids(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("read valid");
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("valid file holds JSON");
            v["id"].as_str().expect("id").to_string()
        })
        .collect()
}

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn real_corpus_gives_the_index_counts() {
    let Some(data) = common::data_dir() else {
        return;
    };
    let corpus = data.join("events-real.jsonl");
    let rows = read_index(&data.join("events-real.index.tsv"));
    let (valid, invalid_id, invalid_sig, duplicates, authors, ids) = expected_from_index(&rows);
    // The README's figures, so a wrong index reading cannot hide a wrong count.
    assert_eq!(
        (rows.len(), valid, invalid_id, invalid_sig),
        (5882, 5877, 5, 0)
    );

    let tmp = TempDir::new("real");
    let mut outputs = Vec::new();
    for threads in ["1", "2", "3"] {
        let (rej, val) = (
            tmp.path(&format!("rej{threads}")),
            tmp.path(&format!("val{threads}")),
        );
        let out = run(
            &[
                "check",
                "--json",
                "--threads",
                threads,
                "--rejects",
                s(&rej),
                "--valid",
                s(&val),
                s(&corpus),
            ],
            None,
        );
        assert_eq!(code(&out), 1, "invalid ids make the exit status 1");
        let j = last_json(&out);
        assert_eq!(int(&j, "lines"), 5882);
        assert_eq!(int(&j, "events"), 5882);
        assert_eq!(int(&j, "valid"), valid);
        assert_eq!(int(&j, "invalid_id"), invalid_id);
        assert_eq!(int(&j, "invalid_sig"), invalid_sig);
        assert_eq!(int(&j, "unparseable"), 0);
        assert_eq!(int(&j, "duplicates"), duplicates);
        assert_eq!(int(&j, "authors"), authors);
        assert!(j["seconds"].as_f64().is_some_and(|x| x > 0.0));
        assert!(j["events_per_second"].as_f64().is_some_and(|x| x > 0.0));

        let got = rejects(&rej, s(&corpus));
        let want: BTreeMap<u64, String> = rows
            .iter()
            .filter(|r| !r.id_ok)
            .map(|r| (r.line, format!("invalid id (claimed id {})", r.id)))
            .collect();
        assert_eq!(got, want);
        assert_eq!(valid_ids(&val), ids);
        outputs.push((
            std::fs::read(&rej).expect("rej"),
            std::fs::read(&val).expect("val"),
        ));
    }
    assert!(
        outputs.windows(2).all(|w| w[0] == w[1]),
        "output depends on the thread count"
    );

    // The --valid file is itself a clean dump: every line valid, exit status 0.
    let out = run(&["check", "--json", s(&tmp.path("val2"))], None);
    assert_eq!(code(&out), 0);
    let j = last_json(&out);
    assert_eq!((int(&j, "events"), int(&j, "valid")), (valid, valid));
}

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn same_id_with_another_signature_is_a_duplicate() {
    let Some(data) = common::data_dir() else {
        return;
    };
    let file = data.join("events-real-embedded.jsonl");
    let rows = read_index(&data.join("events-real-embedded.index.tsv"));
    let (valid, _, _, duplicates, authors, ids) = expected_from_index(&rows);
    // Lines 144 and 145: one id, two different valid signatures (data README §4).
    assert_eq!(
        (rows[143].id == rows[144].id, duplicates, valid),
        (true, 1, 199)
    );
    let text = std::fs::read_to_string(&file).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    assert_ne!(
        lines[143], lines[144],
        "the two lines differ (in the signature)"
    );

    let tmp = TempDir::new("embedded");
    let val = tmp.path("valid");
    let out = run(&["check", "--json", "--valid", s(&val), s(&file)], None);
    assert_eq!(code(&out), 0, "a duplicate is not a rejection");
    let j = last_json(&out);
    assert_eq!(int(&j, "events"), 200);
    assert_eq!(int(&j, "valid"), valid);
    assert_eq!(int(&j, "duplicates"), 1);
    assert_eq!(int(&j, "authors"), authors);
    assert_eq!(valid_ids(&val), ids);
    // The first signature is the one kept.
    let kept = std::fs::read_to_string(&val).expect("read");
    assert!(kept.lines().any(|l| l == lines[143]));
    assert!(!kept.lines().any(|l| l == lines[144]));
}

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn real_malformed_events_are_reported() {
    let Some(data) = common::data_dir() else {
        return;
    };
    let file = data.join("events-real-malformed.jsonl");
    let tmp = TempDir::new("malformed-real");
    let rej = tmp.path("rej");
    let out = run(&["check", "--json", "--rejects", s(&rej), s(&file)], None);
    assert_eq!(code(&out), 1);
    let j = last_json(&out);
    assert_eq!(
        (int(&j, "lines"), int(&j, "unparseable"), int(&j, "events")),
        (2, 2, 0)
    );
    let got = rejects(&rej, s(&file));
    assert!(
        got[&1].starts_with("unparseable: bad event: invalid event ID"),
        "{}",
        got[&1]
    );
    assert!(
        got[&2].starts_with("unparseable: bad event: Invalid character"),
        "{}",
        got[&2]
    );
}

/// What a constructed line must give.
enum Want<'a> {
    Blank,
    Valid,
    Duplicate,
    InvalidId,
    InvalidSig,
    Rejected(&'a str),
}

/// The first `n` lines of the vendored sample of real events (`tests/data/events-sample.jsonl`,
/// all valid), as text and as JSON values to mutate.
fn sample_events(n: usize) -> (Vec<String>, Vec<Value>) {
    let text = std::fs::read_to_string(common::sample()).expect("read the sample");
    let lines: Vec<String> = text.lines().take(n).map(str::to_owned).collect();
    let values = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    (lines, values)
}

fn with(v: &Value, key: &str, new: Value) -> Vec<u8> {
    let mut v = v.clone();
    v[key] = new;
    serde_json::to_vec(&v).expect("serialize")
}

#[test]
fn malformed_lines_are_reported_per_line() {
    let (lines, ev) = sample_events(20);
    let hex = |v: &Value, k: &str| v[k].as_str().expect("hex").to_string();
    let mut flipped_sig = hex(&ev[3], "sig");
    let last = if flipped_sig.ends_with('0') { "1" } else { "0" };
    flipped_sig.replace_range(127.., last);
    let mut bad_utf8 = lines[5].as_bytes().to_vec();
    let at = lines[5].find("\"content\":\"").expect("content") + 11;
    bad_utf8.insert(at, 0xff);
    let utf8_reason: &str = &format!("unparseable: invalid UTF-8 at byte {at}");
    let mut cases: Vec<(Vec<u8>, Want)> = vec![
        (lines[0].clone().into_bytes(), Want::Valid),
        (Vec::new(), Want::Blank),
        (b"   \t ".to_vec(), Want::Blank),
        (
            format!("[\"EVENT\",\"sub1\",{}]", lines[1]).into_bytes(),
            Want::Valid,
        ),
        (
            format!("[\"EVENT\", {} ]", lines[2]).into_bytes(),
            Want::Valid,
        ),
        (
            with(&ev[3], "sig", Value::String(flipped_sig)),
            Want::InvalidSig,
        ),
        (
            with(
                &ev[4],
                "content",
                Value::String("edited after signing".into()),
            ),
            Want::InvalidId,
        ),
        (
            lines[4].as_bytes()[..lines[4].len() / 2].to_vec(),
            Want::Rejected("unparseable: bad event: EOF while parsing"),
        ),
        (
            format!("[\"EVENT\",\"s\",{}", &lines[6][..300]).into_bytes(),
            Want::Rejected("unparseable: not JSON: EOF while parsing"),
        ),
        (bad_utf8, Want::Rejected(utf8_reason)),
        (
            with(&ev[7], "id", Value::String(hex(&ev[7], "id")[..63].into())),
            Want::Rejected("unparseable: bad event: invalid event ID"),
        ),
        (
            with(
                &ev[7],
                "pubkey",
                Value::String(format!("{}00", hex(&ev[7], "pubkey"))),
            ),
            Want::Rejected("pubkey must be 64 lowercase hex characters, got 66"),
        ),
        (
            with(
                &ev[7],
                "sig",
                Value::String(hex(&ev[7], "sig")[..126].into()),
            ),
            Want::Rejected("unparseable: bad event: Invalid input length"),
        ),
        (
            with(
                &ev[7],
                "pubkey",
                Value::String(hex(&ev[7], "pubkey").to_uppercase()),
            ),
            Want::Rejected("pubkey must be 64 lowercase hex characters"),
        ),
        (
            with(&ev[7], "kind", Value::String("1".into())),
            Want::Rejected("invalid type: string \"1\", expected u16"),
        ),
        (
            with(&ev[7], "kind", serde_json::json!(70000)),
            Want::Rejected("expected u16"),
        ),
        (
            with(&ev[7], "created_at", Value::String("1".into())),
            Want::Rejected("invalid type: string \"1\", expected u64"),
        ),
        (
            with(&ev[7], "tags", serde_json::json!({})),
            Want::Rejected("invalid type: map, expected a sequence"),
        ),
        (
            with(&ev[7], "tags", serde_json::json!([[1]])),
            Want::Rejected("invalid type: integer `1`, expected a string"),
        ),
        (
            with(&ev[7], "content", serde_json::json!(7)),
            Want::Rejected("unparseable: bad event: invalid type: integer"),
        ),
        (
            lines[7].replacen("\"sig\":", "\"sag\":", 1).into_bytes(),
            Want::Rejected("missing field `sig`"),
        ),
        (
            b"[\"NOTICE\",\"hello\"]".to_vec(),
            Want::Rejected("unparseable: not an event: array starting with \"NOTICE\""),
        ),
        (
            format!("[\"EVENT\",7,{}]", lines[8]).into_bytes(),
            Want::Rejected("subscription id is not a string"),
        ),
        (
            format!("[\"EVENT\",\"a\",\"b\",{}]", lines[8]).into_bytes(),
            Want::Rejected("EVENT message with 4 elements"),
        ),
        (
            b"hello".to_vec(),
            Want::Rejected("unparseable: not JSON: expected value"),
        ),
        (
            b"42".to_vec(),
            Want::Rejected("unparseable: not an event: expected an object"),
        ),
        (
            b"{}".to_vec(),
            Want::Rejected("unparseable: bad event: missing field"),
        ),
        // A forged copy (content edited) listed before the genuine event does not hide it.
        (
            with(&ev[9], "content", Value::String("forged".into())),
            Want::InvalidId,
        ),
        (lines[9].clone().into_bytes(), Want::Valid),
        (format!("{}\r", lines[10]).into_bytes(), Want::Valid),
        (lines[0].clone().into_bytes(), Want::Duplicate),
        (
            format!("[\"EVENT\",\"other\",{}]", lines[1]).into_bytes(),
            Want::Duplicate,
        ),
    ];
    // The cap sits just above every other line; a longer event must be reported.
    let cap = cases.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 1;
    let long_line = String::from_utf8(common::big_event_line(cap + 1000)).expect("UTF-8");
    let too_long: &str = &format!(
        "unparseable: line too long ({} bytes, limit {cap})",
        long_line.len()
    );
    cases.push((long_line.into_bytes(), Want::Rejected(too_long)));
    cases.push((lines[11].clone().into_bytes(), Want::Valid)); // last line, no newline

    let tmp = TempDir::new("malformed");
    let file = tmp.path("input.jsonl");
    let mut bytes = Vec::new();
    for (i, (line, _)) in cases.iter().enumerate() {
        bytes.extend_from_slice(line);
        if i + 1 < cases.len() {
            bytes.push(b'\n');
        }
    }
    std::fs::write(&file, &bytes).expect("write input");
    let rej = tmp.path("rej");
    let val = tmp.path("val");
    let out = run(
        &[
            "check",
            "--json",
            "--max-line-bytes",
            &cap.to_string(),
            "--rejects",
            s(&rej),
            "--valid",
            s(&val),
            s(&file),
        ],
        None,
    );
    assert_eq!(code(&out), 1);
    let j = last_json(&out);
    let got = rejects(&rej, s(&file));
    for (i, (_, want)) in cases.iter().enumerate() {
        let no = i as u64 + 1;
        let reason = got.get(&no);
        match want {
            Want::Blank | Want::Valid | Want::Duplicate => {
                assert!(reason.is_none(), "line {no}: {reason:?}")
            }
            Want::InvalidId => assert!(
                reason.is_some_and(|r| r.starts_with("invalid id (claimed id ")),
                "line {no}: {reason:?}"
            ),
            Want::InvalidSig => assert!(
                reason.is_some_and(|r| r.starts_with("invalid signature (id ")),
                "line {no}: {reason:?}"
            ),
            Want::Rejected(text) => assert!(
                reason.is_some_and(|r| r.contains(text)),
                "line {no}: want {text:?}, got {reason:?}"
            ),
        }
    }
    let count = |f: fn(&Want) -> bool| cases.iter().filter(|(_, w)| f(w)).count() as u64;
    assert_eq!(int(&j, "lines"), cases.len() as u64);
    assert_eq!(int(&j, "blank"), count(|w| matches!(w, Want::Blank)));
    assert_eq!(int(&j, "valid"), count(|w| matches!(w, Want::Valid)));
    assert_eq!(
        int(&j, "duplicates"),
        count(|w| matches!(w, Want::Duplicate))
    );
    assert_eq!(
        int(&j, "invalid_id"),
        count(|w| matches!(w, Want::InvalidId))
    );
    assert_eq!(
        int(&j, "invalid_sig"),
        count(|w| matches!(w, Want::InvalidSig))
    );
    assert_eq!(
        int(&j, "unparseable"),
        count(|w| matches!(w, Want::Rejected(_)))
    );
    assert_eq!(
        int(&j, "events"),
        count(|w| matches!(
            w,
            Want::Valid | Want::Duplicate | Want::InvalidId | Want::InvalidSig
        ))
    );

    let want_valid: Vec<String> = [0, 1, 2, 9, 10, 11]
        .iter()
        .map(|&i| hex(&ev[i], "id"))
        .collect();
    assert_eq!(valid_ids(&val), want_valid);
}

#[test]
fn default_line_cap_is_5_mib() {
    let (lines, _) = sample_events(2);
    let tmp = TempDir::new("huge");
    let file = tmp.path("huge.jsonl");
    let cap = 5 * 1024 * 1024;
    let mut bytes = Vec::with_capacity(2 * cap + 4096);
    bytes.extend_from_slice(lines[0].as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(&common::big_event_line(cap + 1));
    bytes.push(b'\n');
    bytes.extend_from_slice(&common::big_event_line(cap));
    bytes.push(b'\n');
    bytes.extend_from_slice(lines[1].as_bytes());
    bytes.push(b'\n');
    std::fs::write(&file, &bytes).expect("write");
    let rej = tmp.path("rej");
    let out = run(&["check", "--json", "--rejects", s(&rej), s(&file)], None);
    assert_eq!(code(&out), 1);
    let j = last_json(&out);
    assert_eq!(
        (int(&j, "lines"), int(&j, "valid"), int(&j, "unparseable")),
        (4, 2, 1)
    );
    let got = rejects(&rej, s(&file));
    assert_eq!(
        got[&2],
        format!(
            "unparseable: line too long ({} bytes, limit {cap})",
            cap + 1
        )
    );
    assert!(
        got[&3].starts_with("invalid id"),
        "a line at the cap is read"
    );
}

/// The peak resident set (`VmHWM`) of process `pid`, in bytes, while it runs.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs `check --json` with `args`, feeding `count` copies of `line` through standard input, and
/// returns the summary and the peak resident set in bytes.
fn check_with_peak_rss(args: &[&str], line: &[u8], count: usize) -> (Value, u64) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_nostr-verify"))
        .args(["check", "--json"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start nostr-verify");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let line = line.to_vec();
    let writer = std::thread::spawn(move || {
        for _ in 0..count {
            if stdin.write_all(&line).is_err() {
                return;
            }
        }
    });
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    // VmHWM only grows; the last reading before the process exits is its peak.
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        if let Some(p) = peak_rss(pid) {
            peak = peak.max(p);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    writer.join().expect("writer");
    let text = reader.join().expect("reader");
    let j = serde_json::from_str(text.lines().last().expect("summary")).expect("JSON");
    (j, peak)
}

#[test]
fn memory_stays_within_the_in_flight_budget() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("*** SKIPPED: no /proc to read the peak resident set from ***");
        return;
    }
    const MIB: usize = 1 << 20;
    // Twice the default budget (the text in flight and what decoding it allocates, see
    // docs/cli.md), plus a fixed allowance for the program itself (code, read buffers).
    let budget = 64 * MIB;
    let bound = (2 * budget + 32 * MIB) as u64;
    // Every line is a well-formed event with a wrong id, so each is decoded (a content string
    // as long as the line) and hashed. 15 MiB lines under a 16 MiB cap (the former default):
    // with a fixed number of chunks per thread in flight, and every worker taking its turn (the
    // C allocator keeps freed memory per thread), 16 threads went far past the bound. 15 MiB
    // lines under the default cap are rejected unread; lines just under the default cap are all
    // checked.
    for (args, len, count, too_long) in [
        (
            &["--threads", "16", "--max-line-bytes", "16777216"][..],
            15 * MIB,
            32,
            0,
        ),
        (&["--threads", "4"], 15 * MIB, 24, 24),
        (&["--threads", "8"], 5 * MIB - 100, 64, 0),
    ] {
        let mut line = common::big_event_line(len);
        line.push(b'\n');
        let (j, peak) = check_with_peak_rss(args, &line, count);
        let count = count as u64;
        assert_eq!(
            (
                int(&j, "lines"),
                int(&j, "invalid_id"),
                int(&j, "unparseable")
            ),
            (count, count - too_long, too_long),
            "{args:?}"
        );
        eprintln!(
            "{args:?}, {count} lines of {len} bytes: peak resident set {} MiB, bound {} MiB",
            peak >> 20,
            bound >> 20
        );
        assert!(peak > 0, "no reading of the peak resident set");
        assert!(
            peak <= bound,
            "{args:?}: peak resident set {} MiB above {} MiB",
            peak >> 20,
            bound >> 20
        );
    }
}

/// Gzip of `n` newlines.
fn gzip_newlines(n: usize) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let block = vec![b'\n'; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(block.len());
        enc.write_all(&block[..k]).expect("compress");
        left -= k;
    }
    enc.finish().expect("compress")
}

#[test]
fn runs_of_blank_lines_are_skipped_in_bulk() {
    // 2^27 empty lines (128 MiB unpacked, about 128 KiB packed), then one line that is not an
    // event. Reading them line by line through the pipeline took tens of seconds.
    let n = 1usize << 27;
    let tmp = TempDir::new("blank");
    let file = tmp.path("newlines.gz");
    let mut gz = gzip_newlines(n);
    let mut tail = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    tail.write_all(b" \t\r\nhello\n").expect("compress");
    gz.extend(tail.finish().expect("compress"));
    std::fs::write(&file, &gz).expect("write");
    let rej = tmp.path("rej");
    let t0 = std::time::Instant::now();
    let out = run(&["check", "--json", "--rejects", s(&rej), s(&file)], None);
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(code(&out), 1);
    let j = last_json(&out);
    let n = n as u64;
    assert_eq!(
        (int(&j, "lines"), int(&j, "blank"), int(&j, "unparseable")),
        (n + 2, n + 1, 1)
    );
    let got = rejects(&rej, s(&file));
    assert!(
        got[&(n + 2)].starts_with("unparseable: not JSON"),
        "{got:?}"
    );
    eprintln!("{n} blank lines in {secs:.2} s");
    // Unpacking takes well under a second on an idle machine; the bound leaves room for load.
    assert!(secs < 8.0, "{n} blank lines took {secs:.1} s");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).expect("compress");
    enc.finish().expect("compress")
}

/// The summary without timing keys.
fn counts(j: &Value) -> Value {
    let mut j = j.clone();
    let map = j.as_object_mut().expect("object");
    map.remove("seconds");
    map.remove("events_per_second");
    j
}

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn gzip_and_stdin_give_the_same_counts() {
    let Some(data) = common::data_dir() else {
        return;
    };
    let corpus = data.join("events-real.jsonl");
    let plain = std::fs::read(&corpus).expect("read corpus");
    let gz = gzip(&plain);
    let tmp = TempDir::new("gzip");
    let gz_file = tmp.path("events.jsonl.gz");
    std::fs::write(&gz_file, &gz).expect("write gz");

    let reference = run(&["check", "--json", s(&corpus)], None);
    assert_eq!(code(&reference), 1);
    let want = counts(&last_json(&reference));
    assert_eq!(int(&want, "valid"), 5877);
    let runs: [(&[&str], Option<&[u8]>); 4] = [
        (&["check", "--json", s(&gz_file)], None),
        (&["check", "--json"], Some(&plain)),
        (&["check", "--json", "-"], Some(&plain)),
        (&["check", "--json"], Some(&gz)),
    ];
    for (args, stdin) in runs {
        let out = run(args, stdin);
        assert_eq!(code(&out), 1, "{args:?}");
        assert_eq!(counts(&last_json(&out)), want, "{args:?}");
    }

    // Two files: counts add up, and an event repeated in the second file is a duplicate.
    let out = run(&["check", "--json", s(&corpus), s(&gz_file)], None);
    let j = last_json(&out);
    assert_eq!(
        (int(&j, "lines"), int(&j, "valid"), int(&j, "duplicates")),
        (2 * 5882, 5877, 5877)
    );
    assert_eq!(int(&j, "invalid_id"), 10);

    // A truncated gzip stream is an I/O error (exit 2), after the lines before it were counted.
    let cut = tmp.path("cut.jsonl.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).expect("write");
    let out = run(&["check", "--json", s(&cut)], None);
    assert_eq!(code(&out), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("read error after line"), "{stderr}");
    let j = last_json(&out);
    assert!(int(&j, "lines") > 1000 && int(&j, "lines") < 5882, "{j}");
}

#[test]
fn exit_status_and_text_summary() {
    let (lines, _) = sample_events(50);
    let clean = lines.join("\n") + "\n\n";
    let out = run(&["check"], Some(clean.as_bytes()));
    assert_eq!(code(&out), 0, "all valid: exit status 0");
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "lines              51",
        "  blank            1",
        "events             50",
        "  valid            50",
        "  invalid id       0",
        "unparseable lines  0",
        "events per second",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // No progress bar when standard error is not a terminal, unless asked for.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(
        &["check", "--progress", "--threads=1"],
        Some(clean.as_bytes()),
    );
    assert_eq!(code(&out), 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with('\r') && stderr.contains("lines") && stderr.contains("events/s"),
        "{stderr:?}"
    );
    let file = common::sample();
    let out = run(&["check", "--progress", s(&file)], None);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("%"),
        "file size known: a percentage"
    );

    // No events at all (an empty input, or blank lines only): exit status 3 and a message,
    // never 0 ("every event valid" of nothing is most often the wrong file or an empty pipe).
    for (input, says) in [
        (&b"\n \n"[..], "the input holds only blank lines (2)"),
        (b"", "the input is empty"),
    ] {
        for args in [&["check"][..], &["check", "--json"]] {
            let out = run(args, Some(input));
            assert_eq!(code(&out), 3, "{args:?} {input:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(&format!("no events: {says}")), "{stderr}");
            assert!(!out.stdout.is_empty(), "the summary is still printed");
        }
    }
    // One event and blank lines: 0.
    let one = format!("\n{}\n\n", lines[0]);
    assert_eq!(code(&run(&["check"], Some(one.as_bytes()))), 0);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let tmp = TempDir::new("usage");
    let missing = tmp.path("missing.jsonl");
    let nodb = tmp.path("nodb");
    let cases: [&[&str]; 12] = [
        &[],
        &["frobnicate"],
        &["check", "--bogus"],
        &["check", "--threads", "0"],
        &["check", "--threads"],
        &["check", "--json=yes"],
        &["check", "--db", "x"],
        &["check", s(&missing)],
        &["check", s(&tmp.0)],
        &["ingest", "-"],
        &["count"],
        &["count", "--db", s(&nodb)],
    ];
    for args in cases {
        let out = run(args, Some(b""));
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with("nostr-verify: "),
            "{args:?}"
        );
    }
    let out = run(
        &["check", "--rejects", s(&tmp.path("no/such/dir/rej"))],
        Some(b""),
    );
    assert_eq!(code(&out), 2);
    // A write error in the middle of the run (200 KB of --valid output to a full disk) stops
    // it with status 2 instead of hanging the pipeline.
    if Path::new("/dev/full").exists() {
        let out = run(
            &["check", "--valid", "/dev/full", s(&common::sample())],
            None,
        );
        assert_eq!(code(&out), 2);
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write output"));
    }
}

#[test]
fn help_and_version_on_every_command() {
    // clap's convention: `nostr-verify 0.1.0`, `nostr-verify-check 0.1.0`.
    let version = format!(" {}\n", env!("CARGO_PKG_VERSION"));
    for args in [
        &["--version"][..],
        &["-V"],
        &["check", "--version"],
        &["ingest", "--version"],
        &["count", "--version"],
    ] {
        let out = run(args, None);
        assert_eq!(code(&out), 0, "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with("nostr-verify") && text.ends_with(&version),
            "{args:?}: {text}"
        );
    }
    for (args, want) in [
        (
            &["--help"][..],
            &[
                "Usage: nostr-verify",
                "check",
                "ingest",
                "count",
                "exit status",
                "3 no events in the input",
            ][..],
        ),
        (&["-h"], &["check"]),
        (&["help"], &["check", "ingest"]),
        (&["help", "check"], &["--max-line-bytes", "--rejects"]),
        (
            &["check", "--help"],
            &[
                "Usage: nostr-verify check",
                "--threads",
                "--max-in-flight-bytes",
                "[default: 5M]",
                "[default: 64M]",
            ],
        ),
        (&["check", "-h"], &["--valid"]),
        (&["ingest", "--help"], &["--db <DIR>", "--max-line-bytes"]),
        (&["count", "--help"], &["--db <DIR>", "--json"]),
    ] {
        let out = run(args, None);
        assert_eq!(code(&out), 0, "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        for w in want {
            assert!(text.contains(w), "{args:?}: {w:?} missing in\n{text}");
        }
    }
    // Byte counts take K, M and G suffixes.
    // Options that parse: one valid event in, exit status 0.
    let one_event = sample_events(1).0[0].clone().into_bytes();
    for args in [
        &[
            "check",
            "--max-line-bytes",
            "64K",
            "--max-in-flight-bytes=1M",
        ][..],
        &[
            "check",
            "--max-line-bytes",
            "1MiB",
            "--max-in-flight-bytes",
            "2G",
        ],
    ] {
        assert_eq!(code(&run(args, Some(&one_event))), 0, "{args:?}");
    }
    for args in [
        &["check", "--max-line-bytes", "0"][..],
        &["check", "--max-line-bytes", "5X"],
        &["check", "--max-in-flight-bytes", "-1"],
    ] {
        let out = run(args, Some(b""));
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("nostr-verify: "));
    }
}

#[test]
fn dash_is_standard_output_and_the_summary_moves_to_stderr() {
    let tmp = TempDir::new("dash");
    let input = b"hello\n\n[1]\n";
    for (flag, json) in [("--rejects", true), ("--rejects", false), ("--valid", true)] {
        let mut args = vec!["check", flag, "-"];
        if json {
            args.push("--json");
        }
        let out = common::run_in(&tmp.0, &args, Some(input));
        assert_eq!(code(&out), 1, "{args:?}");
        assert!(!tmp.path("-").exists(), "{args:?} created a file named -");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if flag == "--rejects" {
            assert_eq!(
                stdout.lines().collect::<Vec<_>>(),
                [
                    "-:1: unparseable: not JSON: expected value at line 1 column 1",
                    "-:3: unparseable: not an event: array starting with 1 is not an EVENT message",
                ],
                "{args:?}"
            );
        } else {
            assert!(stdout.is_empty(), "{stdout}");
        }
        if json {
            let j: Value = serde_json::from_str(stderr.trim_end()).expect("summary on stderr");
            assert_eq!((int(&j, "lines"), int(&j, "unparseable")), (3, 2));
        } else {
            assert!(stderr.contains("unparseable lines  2"), "{stderr}");
        }
    }
    // Valid events to standard output: the same bytes as a --valid file.
    let (lines, _) = sample_events(30);
    let text = lines.join("\n") + "\n";
    let file = tmp.path("valid.jsonl");
    let out = run(&["check", "--valid", s(&file)], Some(text.as_bytes()));
    assert_eq!(code(&out), 0);
    let out = common::run_in(&tmp.0, &["check", "--valid", "-"], Some(text.as_bytes()));
    assert_eq!(code(&out), 0);
    assert_eq!(out.stdout, std::fs::read(&file).expect("valid file"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid            30"));
    let out = run(&["check", "--rejects", "-", "--valid", "-"], Some(b""));
    assert_eq!(code(&out), 2);
}

fn db_counts(j: &Value) -> (u64, u64, u64) {
    let db = &j["db"];
    (int(db, "saved"), int(db, "rejected"), int(db, "errors"))
}

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn ingest_then_count_round_trips() {
    let Some(data) = common::data_dir() else {
        return;
    };
    let corpus = data.join("events-real.jsonl");
    let rows = read_index(&data.join("events-real.index.tsv"));
    let text = std::fs::read_to_string(&corpus).expect("read corpus");
    let tmp = TempDir::new("ingest");

    // Kinds 1 and 7 only: nothing replaces or deletes anything, so every valid event is stored
    // unless it has expired (NIP-40).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let mut subset = String::new();
    let mut per_kind: BTreeMap<u16, u64> = BTreeMap::new();
    let (mut expired, mut invalid) = (0, 0);
    for (line, row) in text.lines().zip(&rows) {
        if row.kind != 1 && row.kind != 7 {
            continue;
        }
        subset.push_str(line);
        subset.push('\n');
        if !(row.id_ok && row.sig_ok) {
            invalid += 1;
            continue;
        }
        let v: Value = serde_json::from_str(line).expect("JSON");
        let expiry = v["tags"].as_array().expect("tags").iter().find_map(|t| {
            (t[0] == "expiration")
                .then(|| t[1].as_str().and_then(|x| x.parse::<u64>().ok()))
                .flatten()
        });
        if expiry.is_some_and(|t| t < now) {
            expired += 1;
        } else {
            *per_kind.entry(row.kind).or_default() += 1;
        }
    }
    let stored: u64 = per_kind.values().sum();
    assert!(stored > 2500 && invalid > 0);
    let db = tmp.path("small-db");
    let out = run(
        &["ingest", "--json", "--db", s(&db)],
        Some(subset.as_bytes()),
    );
    assert_eq!(code(&out), 1, "the subset holds invalid events");
    let j = last_json(&out);
    assert_eq!(int(&j, "invalid_id"), invalid);
    assert_eq!(db_counts(&j), (stored, expired, 0));
    assert_eq!(int(&j["db"], "expired"), expired);
    // A budget below one chunk of text (and a few events for the saver's half) still makes
    // progress, a chunk and a few saves at a time, with the same result.
    let tiny = tmp.path("tiny-budget-db");
    let out = run(
        &[
            "ingest",
            "--json",
            "--max-in-flight-bytes",
            "64K",
            "--db",
            s(&tiny),
        ],
        Some(subset.as_bytes()),
    );
    assert_eq!(code(&out), 1);
    let tiny_j = last_json(&out);
    assert_eq!(db_counts(&tiny_j), db_counts(&j));
    assert_eq!(int(&tiny_j, "valid"), int(&j, "valid"));
    let out = run(&["count", "--json", "--db", s(&db)], None);
    assert_eq!(code(&out), 0);
    let c = last_json(&out);
    assert_eq!(int(&c, "events"), stored);
    let kinds: BTreeMap<u16, u64> = c["kinds"]
        .as_object()
        .expect("kinds")
        .iter()
        .map(|(k, n)| (k.parse().expect("kind"), n.as_u64().expect("count")))
        .collect();
    assert_eq!(kinds, per_kind);

    // The whole corpus: the database's own rules (deletions, replacements, ephemeral) apply.
    let db = tmp.path("db");
    let out = run(&["ingest", "--json", "--db", s(&db), s(&corpus)], None);
    assert_eq!(code(&out), 1);
    let first = last_json(&out);
    let (saved, rejected, errors) = db_counts(&first);
    assert_eq!((saved + rejected, errors), (int(&first, "valid"), 0));
    assert!(int(&first["db"], "replaced") > 0 && int(&first["db"], "deleted") > 0);
    assert_eq!(
        int(&first["db"], "ephemeral"),
        rows.iter()
            .filter(|r| (20000..30000).contains(&r.kind))
            .count() as u64
    );
    let out = run(&["count", "--json", "--db", s(&db)], None);
    let c = last_json(&out);
    let total = int(&c, "events");
    let sum: u64 = c["kinds"]
        .as_object()
        .expect("kinds")
        .values()
        .map(|n| n.as_u64().expect("n"))
        .sum();
    assert_eq!(sum, total, "per-kind counts add up to the total");
    assert!(total <= saved && total > 5000, "{total} of {saved}");
    // The ingest summary explains the difference: what the database holds now is what `count`
    // says, and the stored events removed again (older replaceable versions, deleted events)
    // make up the gap to `saved`.
    let db_j = &first["db"];
    assert_eq!(int(db_j, "held_before"), 0);
    assert_eq!(int(db_j, "held_after"), total);
    assert_eq!(int(db_j, "superseded"), saved - total);
    assert!(
        saved > total,
        "the corpus replaces and deletes some of its own events"
    );
    // Kinds come in numeric order in the JSON text (not as strings: 1, 10002, 3).
    let text = String::from_utf8_lossy(&out.stdout);
    let order: Vec<u64> = text
        .split("\"kinds\":{")
        .nth(1)
        .expect("kinds object")
        .split(',')
        .filter_map(|kv| kv.split('"').nth(1).and_then(|k| k.parse().ok()))
        .collect();
    assert!(
        order.len() > 10 && order.windows(2).all(|w| w[0] < w[1]),
        "{order:?}"
    );
    let text_out = run(&["count", "--db", s(&db)], None);
    assert!(String::from_utf8_lossy(&text_out.stdout).starts_with(&format!("events  {total}\n")));

    // Second run: nothing new is saved, nothing changes.
    let out = run(&["ingest", "--json", "--db", s(&db), s(&corpus)], None);
    assert_eq!(code(&out), 1);
    let second = last_json(&out);
    assert_eq!(db_counts(&second), (0, int(&first, "valid"), 0));
    assert_eq!(int(&second["db"], "already_stored"), total);
    assert_eq!(int(&second["db"], "held_before"), total);
    assert_eq!(int(&second["db"], "held_after"), total);
    let again = last_json(&run(&["count", "--json", "--db", s(&db)], None));
    assert_eq!(again, c);
}

#[test]
fn errors_reach_the_json_summary_and_clear_messages() {
    let tmp = TempDir::new("errors-json");
    // A corrupt gzip stream: exit 2, and the JSON summary says why.
    let bad = tmp.path("bad.jsonl.gz");
    let mut bytes = gzip(b"{\"not\":\"an event\"}\n");
    let mid = bytes.len() / 2;
    for b in &mut bytes[10..mid] {
        *b ^= 0x5a;
    }
    std::fs::write(&bad, &bytes).expect("write");
    let out = run(&["check", "--json", s(&bad)], None);
    assert_eq!(code(&out), 2);
    let j = last_json(&out);
    let err = j["error"].as_str().expect("an error field");
    assert!(err.contains("bad.jsonl.gz"), "{err}");
    // Without an error there is no error field.
    let good = tmp.path("empty.jsonl");
    std::fs::write(&good, b"").expect("write");
    let out = run(&["check", "--json", s(&good)], None);
    assert_eq!(code(&out), 3, "no events");
    assert!(last_json(&out).get("error").is_none());
    // An empty input says so on standard error.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the input is empty"), "{stderr}");
    // A missing input file under --json: a JSON line with the error, exit 2.
    let out = run(&["check", "--json", s(&tmp.path("missing.jsonl"))], None);
    assert_eq!(code(&out), 2);
    assert!(last_json(&out)["error"]
        .as_str()
        .expect("error")
        .contains("missing.jsonl"));
    // --db on a regular file: a message that says what is wrong, for ingest and count.
    let file = tmp.path("a-file");
    std::fs::write(&file, b"x").expect("write");
    for args in [
        &["ingest", "--db", s(&file), s(&good)][..],
        &["count", "--db", s(&file)][..],
    ] {
        let out = run(args, None);
        assert_eq!(code(&out), 2, "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not a directory"), "{args:?}: {stderr}");
        assert!(!stderr.contains("os error 17"), "{stderr}");
    }
    let out = run(&["count", "--json", "--db", s(&file)], None);
    assert!(last_json(&out)["error"]
        .as_str()
        .expect("error")
        .contains("not a directory"));
}
