//! The README's code blocks, checked as a user would paste them.
//!
//! The README is the crate's front page, and its Rust blocks are complete programs (no hidden
//! lines) for users to paste into `src/main.rs`. They are not doctests (`lib.rs` includes the
//! README only outside `cfg(doctest)`); instead:
//! - `readme_blocks_are_paste_ready` (fast, always runs) checks the shape: every Rust block has
//!   a `fn main`, no rustdoc hidden lines and no `cfg` gates, and every crate it uses has a
//!   dependency line in the README;
//! - `readme_programs_build_and_run` (minutes: it builds the dependencies afresh) writes each
//!   block into its own package of a scratch workspace under `target/tmp/readme/`, with the
//!   README's dependency lines (this checkout in place of the git URL and `Cargo.lock` as the
//!   starting lock file), builds them all and runs every block not marked `no_run`.
//!   Run it with `cargo test --release --test readme -- --ignored`; `.ci/run` does.
//!
//! Which dependency lines a block gets: the first `toml` block of the README (the "Install"
//! section), then the `toml` blocks that come before it in its own `###` section. A block that
//! starts with `[dependencies]` is a whole section that replaces the lines so far (the README
//! says "replace"); a block without it holds extra lines to append, and may not name a crate
//! the lines so far already have (appended, that is Cargo's `duplicate key` error).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository URL the README's dependency lines use.
const GIT_URL: &str = "https://github.com/nostr-verify/nostr-verify";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One fenced code block.
#[derive(Debug)]
struct Block {
    /// The info string after the opening fence (`rust`, `rust,no_run`, `toml`, ...).
    info: String,
    /// The `###` (or `##`) heading it sits under.
    section: String,
    /// 1-based line of the opening fence.
    line: usize,
    code: String,
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut open: Option<Block> = None;
    for (i, line) in readme.lines().enumerate() {
        if let Some(block) = open.as_mut() {
            if line.trim_start() == "```" {
                out.push(open.take().expect("open block"));
            } else {
                block.code.push_str(line);
                block.code.push('\n');
            }
        } else if let Some(info) = line.trim_start().strip_prefix("```") {
            open = Some(Block {
                info: info.trim().to_owned(),
                section: section.clone(),
                line: i + 1,
                code: String::new(),
            });
        } else if line.starts_with("## ") || line.starts_with("### ") {
            section = line.trim_start_matches('#').trim().to_owned();
        }
    }
    assert!(open.is_none(), "README.md: a code block is never closed");
    out
}

fn is_rust(b: &Block) -> bool {
    b.info.split(',').next() == Some("rust")
}

/// `name = value` dependency lines of a `toml` block, keyed by crate name.
fn dependency_lines(b: &Block) -> BTreeMap<String, String> {
    let mut deps = BTreeMap::new();
    for line in b.code.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line == "[dependencies]" {
            continue;
        }
        let (name, _) = line
            .split_once(" = ")
            .unwrap_or_else(|| panic!("README.md:{}: not a dependency line: {line}", b.line));
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "README.md:{}: not a crate name: {name}",
            b.line
        );
        deps.insert(name.to_owned(), line.to_owned());
    }
    deps
}

/// Each Rust block with the dependency lines it is built with.
fn programs(all: &[Block]) -> Vec<(&Block, BTreeMap<String, String>)> {
    let base_block = all
        .iter()
        .find(|b| b.info == "toml")
        .expect("README.md has a toml block with the dependency lines");
    let base = dependency_lines(base_block);
    let mut out = Vec::new();
    for (i, b) in all.iter().enumerate().filter(|(_, b)| is_rust(b)) {
        let mut deps = base.clone();
        for extra in all[..i]
            .iter()
            .filter(|e| e.info == "toml" && e.section == b.section && e.line != base_block.line)
        {
            if let Err(e) = merge(&mut deps, extra) {
                panic!("README.md:{}: {e}", extra.line);
            }
        }
        out.push((b, deps));
    }
    out
}

/// Applies one section-local `toml` block to `deps`: a whole `[dependencies]` section replaces
/// them; extra lines are appended, and one that names a crate already there is an error (the
/// user's manifest would then hold the key twice).
fn merge(deps: &mut BTreeMap<String, String>, block: &Block) -> Result<(), String> {
    let lines = dependency_lines(block);
    let whole = block.code.lines().map(str::trim).find(|l| !l.is_empty()) == Some("[dependencies]");
    if whole {
        *deps = lines;
        return Ok(());
    }
    for (name, line) in lines {
        if deps.contains_key(&name) {
            return Err(format!(
                "the extra line `{line}` names `{name}`, which the lines above already have: \
                 appended, that is a duplicate key (give a whole `[dependencies]` block instead)"
            ));
        }
        deps.insert(name, line);
    }
    Ok(())
}

/// The crates a program names: `use x::`, `x::path` at the start of an expression, `#[x::...]`.
fn crates_used(code: &str) -> Vec<String> {
    let mut used = Vec::new();
    for word in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
        let Some((first, _)) = word.split_once("::") else {
            continue;
        };
        let known = [
            "nostr",
            "nostr_verify",
            "nostr_sdk",
            "nostr_verify_sdk",
            "tokio",
        ];
        if known.contains(&first) && !used.iter().any(|u| u == first) {
            used.push(first.to_owned());
        }
    }
    used
}

#[test]
fn readme_blocks_are_paste_ready() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let all = blocks(&readme);
    let progs = programs(&all);
    assert!(
        progs.len() >= 5,
        "README.md has {} Rust blocks",
        progs.len()
    );
    for (b, deps) in &progs {
        let at = format!("README.md:{} ({})", b.line, b.section);
        let opts: Vec<&str> = b.info.split(',').skip(1).collect();
        assert!(
            opts.iter().all(|o| *o == "no_run"),
            "{at}: `{}`: every Rust block is built (only `no_run` may be added)",
            b.info
        );
        assert!(b.code.contains("fn main("), "{at}: no `fn main`");
        for line in b.code.lines() {
            let t = line.trim_start();
            assert!(
                !(t == "#" || t.starts_with("# ")),
                "{at}: rustdoc hidden line, a syntax error when pasted: {line}"
            );
            assert!(
                !t.starts_with("#[cfg") && !t.starts_with("#![cfg"),
                "{at}: a cfg gate compiles the program away in the user's crate: {line}"
            );
        }
        for krate in crates_used(&b.code) {
            let dep = krate.replace('_', "-");
            assert!(
                deps.contains_key(&dep),
                "{at}: uses `{krate}` but its dependency lines have no `{dep}`: {:?}",
                deps.keys()
            );
        }
        if b.code.contains("#[tokio::main]") {
            let tokio = &deps["tokio"];
            assert!(
                tokio.contains("macros") && tokio.contains("rt-multi-thread"),
                "{at}: #[tokio::main] needs tokio's macros and rt-multi-thread: {tokio}"
            );
        }
    }
    // The base lines point at this repository, not at crates.io's other `nostr-verify`.
    let base = dependency_lines(all.iter().find(|b| b.info == "toml").expect("toml"));
    assert!(
        base["nostr-verify"].contains(GIT_URL),
        "{}",
        base["nostr-verify"]
    );
}

#[test]
fn the_shape_check_catches_what_breaks_a_paste() {
    // A hidden line, a cfg gate and a missing dependency line are each caught.
    let readme = "### A\n```toml\n[dependencies]\nnostr = \"1\"\n```\n\
                  ```rust\n# fn hidden() {}\nfn main() { tokio::spawn(async {}); }\n```\n";
    let all = blocks(readme);
    let progs = programs(&all);
    assert_eq!(progs.len(), 1);
    assert!(progs[0].0.code.lines().any(|l| l.starts_with("# ")));
    assert_eq!(crates_used(&progs[0].0.code), ["tokio"]);
    assert!(!progs[0].1.contains_key("tokio"));
    // A whole `[dependencies]` block replaces the base lines; extra lines are appended.
    let readme = "### Add\n```toml\n[dependencies]\nnostr = \"1\"\nhex = \"0.4\"\n```\n### B\n\
                  ```toml\n[dependencies]\nnostr = \"2\"\n```\n```toml\ntokio = \"1\"\n```\n\
                  ```rust\nfn main() {}\n```\n";
    let all = blocks(readme);
    let progs = programs(&all);
    assert_eq!(progs[0].1["nostr"], "nostr = \"2\"");
    assert_eq!(progs[0].1["tokio"], "tokio = \"1\"");
    assert!(!progs[0].1.contains_key("hex"));
    // Extra lines that name a crate the base lines have would be a duplicate key when appended.
    let all = blocks(
        "### Add\n```toml\n[dependencies]\nnostr = \"1\"\n```\n```toml\nnostr = \"2\"\n```\n",
    );
    let mut deps = dependency_lines(&all[0]);
    let err = merge(&mut deps, &all[1]).expect_err("a duplicate key");
    assert!(err.contains("duplicate key"), "{err}");
}

/// Rewrites a README dependency line to use this checkout instead of the git URL.
fn local(line: &str, name: &str) -> String {
    let dir = match name {
        "nostr-verify" => root(),
        "nostr-verify-sdk" => root().join("nostr-verify-sdk"),
        _ => return line.to_owned(),
    };
    line.replace(
        &format!("git = \"{GIT_URL}\""),
        &format!("path = {:?}", dir.display().to_string()),
    )
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    text
}

#[test]
#[ignore = "builds every README block in a scratch crate (minutes): cargo test --release --test readme -- --ignored"]
fn readme_programs_build_and_run() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let all = blocks(&readme);
    let progs = programs(&all);
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme");
    let ws = scratch.join("ws");
    if ws.exists() {
        std::fs::remove_dir_all(&ws).expect("clear the old scratch workspace");
    }
    let mut members = Vec::new();
    for (i, (b, deps)) in progs.iter().enumerate() {
        let name = format!("readme-block-{i}");
        let dir = ws.join(&name);
        std::fs::create_dir_all(dir.join("src")).expect("mkdir");
        let mut manifest = format!(
            "# README.md line {} ({})\n[package]\nname = \"{name}\"\nversion = \"0.0.0\"\n\
             edition = \"2021\"\npublish = false\n\n[dependencies]\n",
            b.line, b.section
        );
        for (dep, line) in deps {
            manifest.push_str(&local(line, dep));
            manifest.push('\n');
        }
        std::fs::write(dir.join("Cargo.toml"), manifest).expect("write Cargo.toml");
        std::fs::write(dir.join("src/main.rs"), &b.code).expect("write main.rs");
        members.push(name);
    }
    std::fs::write(
        ws.join("Cargo.toml"),
        format!("[workspace]\nresolver = \"2\"\nmembers = {members:?}\n"),
    )
    .expect("write the workspace manifest");
    // Start from the versions this repository is tested with.
    std::fs::copy(root().join("Cargo.lock"), ws.join("Cargo.lock")).expect("copy Cargo.lock");

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = scratch.join("target");
    run(
        Command::new(&cargo)
            .args(["build", "--workspace", "--bins"])
            .current_dir(&ws)
            .env("CARGO_TARGET_DIR", &target)
            // A pasted program should not warn either (unused imports and the like).
            .env("RUSTFLAGS", "-D warnings"),
        "cargo build of the README programs",
    );
    let mut ran = 0;
    for (i, (b, _)) in progs.iter().enumerate() {
        if b.info.contains("no_run") {
            continue;
        }
        let bin = target.join("debug").join(format!("readme-block-{i}"));
        let text = run(
            &mut Command::new(&bin),
            &format!("README.md:{} ({})", b.line, b.section),
        );
        println!("README.md:{} ({}):\n{text}", b.line, b.section);
        ran += 1;
    }
    assert!(ran >= 4, "only {ran} README programs ran");
}
