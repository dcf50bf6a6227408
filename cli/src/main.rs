//! `nostr-verify`: check and ingest Nostr event dumps. See `docs/cli.md`.

use nostr_verify_cli::ingest::{self, DbCounts, Saver};
use nostr_verify_cli::input::Input;
use nostr_verify_cli::pipeline::{self, Options, Pos, Record, Summary};
use serde_json::json;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: nostr-verify check  [OPTIONS] [FILE ...]
       nostr-verify ingest --db DIR [OPTIONS] [FILE ...]
       nostr-verify count  --db DIR [--json]

Verifies Nostr events, one per line: an event object, [\"EVENT\",<sub>,{event}] or
[\"EVENT\",{event}]. Blank lines are skipped; gzip input is decompressed. No FILE, or -,
reads standard input. `ingest` also saves the valid events into a nostr-lmdb database
(created if missing); `count` shows what a database holds.

options:
  --threads N            worker threads (default: all cores)
  --json                 print the summary as one JSON object on the last line
  --rejects FILE         write `FILE:LINE: reason` for every rejected line
  --valid FILE           write every valid event (first occurrence), one per line
  --max-line-bytes N     reject longer lines without reading them into memory (default 16 MiB)
  --progress / --no-progress   force the progress bar on standard error on or off
                         (default: on when standard error is a terminal)

exit status: 0 every event valid, 1 some line or event rejected, 2 usage or I/O error";

/// Exit status 2: usage or I/O errors.
fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("nostr-verify: {msg}");
    ExitCode::from(2)
}

fn usage_error(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("nostr-verify: {msg}\n\n{USAGE}");
    ExitCode::from(2)
}

#[derive(Default)]
struct Args {
    files: Vec<String>,
    db: Option<PathBuf>,
    threads: Option<usize>,
    json: bool,
    rejects: Option<PathBuf>,
    valid: Option<PathBuf>,
    max_line_bytes: Option<usize>,
    progress: Option<bool>,
}

fn parse_args(cmd: &str, mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args::default();
    let mut only_files = false;
    while let Some(arg) = it.next() {
        if only_files || arg == "-" || !arg.starts_with('-') {
            a.files.push(arg);
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{name} needs {what}"))
        };
        let number = |s: String, name: &str| -> Result<usize, String> {
            s.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{name}: expected a positive integer, got {s:?}"))
        };
        match name.as_str() {
            "--" => only_files = true,
            "--json" => a.json = true,
            "--progress" => a.progress = Some(true),
            "--no-progress" => a.progress = Some(false),
            "--db" => a.db = Some(PathBuf::from(value("a directory")?)),
            "--threads" => a.threads = Some(number(value("a number")?, &name)?),
            "--max-line-bytes" => a.max_line_bytes = Some(number(value("a number")?, &name)?),
            "--rejects" => a.rejects = Some(PathBuf::from(value("a file name")?)),
            "--valid" => a.valid = Some(PathBuf::from(value("a file name")?)),
            _ => return Err(format!("unknown option {arg}")),
        }
        if inline.is_some()
            && matches!(
                name.as_str(),
                "--json" | "--progress" | "--no-progress" | "--"
            )
        {
            return Err(format!("{name} takes no value"));
        }
    }
    match cmd {
        "check" if a.db.is_some() => Err("check does not take --db".into()),
        "ingest" if a.db.is_none() => Err("ingest needs --db DIR".into()),
        "count" if a.db.is_none() => Err("count needs --db DIR".into()),
        "count" if !a.files.is_empty() || a.rejects.is_some() || a.valid.is_some() => {
            Err("count takes only --db DIR and --json".into())
        }
        _ => Ok(a),
    }
}

fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let Some(cmd) = argv.next() else {
        return usage_error("missing command");
    };
    match cmd.as_str() {
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        "check" | "ingest" | "count" => {}
        _ => return usage_error(format!("unknown command {cmd:?}")),
    }
    let args = match parse_args(&cmd, argv) {
        Ok(a) => a,
        Err(e) => return usage_error(e),
    };
    if cmd == "count" {
        return count(&args);
    }
    check_or_ingest(&cmd, args)
}

fn count(args: &Args) -> ExitCode {
    let Some(dir) = &args.db else {
        return usage_error("count needs --db DIR");
    };
    let contents = match ingest::count(dir) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if args.json {
        let kinds: serde_json::Map<String, serde_json::Value> = contents
            .kinds
            .iter()
            .map(|(k, n)| (k.to_string(), json!(n)))
            .collect();
        println!("{}", json!({ "events": contents.total, "kinds": kinds }));
    } else {
        println!("events  {}", contents.total);
        for (kind, n) in &contents.kinds {
            println!("kind {kind:<6} {n}");
        }
    }
    ExitCode::SUCCESS
}

/// An output file for `--rejects` / `--valid`.
fn create(path: &Option<PathBuf>) -> io::Result<Option<BufWriter<File>>> {
    path.as_ref()
        .map(|p| File::create(p).map(|f| BufWriter::with_capacity(1 << 20, f)))
        .transpose()
}

fn check_or_ingest(cmd: &str, args: Args) -> ExitCode {
    let specs = if args.files.is_empty() {
        vec!["-".to_string()]
    } else {
        args.files.clone()
    };
    if specs.iter().filter(|s| *s == "-").count() > 1 {
        return usage_error("standard input (-) given more than once");
    }
    let mut inputs = Vec::with_capacity(specs.len());
    for spec in &specs {
        match Input::open(spec) {
            Ok(i) => inputs.push(i),
            Err(e) => return fail(format!("{spec}: {e}")),
        }
    }
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let (mut rejects, mut valid) = match (create(&args.rejects), create(&args.valid)) {
        (Ok(r), Ok(v)) => (r, v),
        (Err(e), _) | (_, Err(e)) => return fail(format!("cannot create output file: {e}")),
    };
    let mut saver = match &args.db {
        Some(dir) if cmd == "ingest" => match Saver::open(dir) {
            Ok(s) => Some(s),
            Err(e) => return fail(e),
        },
        _ => None,
    };

    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut opts = Options::new(threads);
    if let Some(n) = args.max_line_bytes {
        opts.max_line_bytes = n;
    }
    opts.progress = args.progress.unwrap_or_else(|| io::stderr().is_terminal());

    let mut save_error: Option<String> = None;
    let result = pipeline::run(inputs, &opts, |pos: Pos, record: Record<'_>| {
        let name = &names[pos.input];
        let line = pos.line;
        match record {
            Record::Valid { event, json } => {
                if let Some(w) = valid.as_mut() {
                    w.write_all(json.as_bytes())?;
                    w.write_all(b"\n")?;
                }
                if let Some(s) = saver.as_mut() {
                    if let Err(e) = s.save(event) {
                        save_error.get_or_insert(e);
                    }
                }
            }
            Record::Duplicate { .. } => {}
            Record::InvalidId(e) => {
                if let Some(w) = rejects.as_mut() {
                    writeln!(w, "{name}:{line}: invalid id (claimed id {})", e.id)?;
                }
            }
            Record::InvalidSignature(e) => {
                if let Some(w) = rejects.as_mut() {
                    writeln!(w, "{name}:{line}: invalid signature (id {})", e.id)?;
                }
            }
            Record::Unparseable(p) => {
                if let Some(w) = rejects.as_mut() {
                    writeln!(w, "{name}:{line}: {p}")?;
                }
            }
        }
        Ok(())
    });
    let mut summary = match result {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot write output: {e}")),
    };
    for w in [rejects.as_mut(), valid.as_mut()].into_iter().flatten() {
        if let Err(e) = w.flush() {
            return fail(format!("cannot write output: {e}"));
        }
    }
    let db = match saver.map(Saver::finish) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => return fail(e),
    };
    if let Some(e) = save_error {
        summary.io_errors.push(e);
    }
    if let Some(DbCounts {
        errors,
        first_error,
        ..
    }) = &db
    {
        if *errors > 0 {
            summary.io_errors.push(format!(
                "{errors} events could not be saved: {}",
                first_error.as_deref().unwrap_or("database error")
            ));
        }
    }
    print_summary(&summary, db.as_ref(), threads, args.json);
    for e in &summary.io_errors {
        eprintln!("nostr-verify: {e}");
    }
    if !summary.io_errors.is_empty() {
        ExitCode::from(2)
    } else if summary.rejected() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_summary(s: &Summary, db: Option<&DbCounts>, threads: usize, as_json: bool) {
    let eps = s.events_per_second();
    if as_json {
        let mut v = json!({
            "lines": s.lines,
            "blank": s.blank,
            "events": s.events,
            "valid": s.valid,
            "invalid_id": s.invalid_id,
            "invalid_sig": s.invalid_sig,
            "unparseable": s.unparseable,
            "duplicates": s.duplicates,
            "authors": s.authors,
            "threads": threads,
            "seconds": (s.seconds * 1e6).round() / 1e6,
            "events_per_second": eps.round(),
        });
        if let (Some(db), Some(map)) = (db, v.as_object_mut()) {
            map.insert(
                "db".into(),
                json!({
                    "saved": db.saved,
                    "rejected": db.rejected(),
                    "already_stored": db.already_stored,
                    "deleted": db.deleted,
                    "replaced": db.replaced,
                    "expired": db.expired,
                    "ephemeral": db.ephemeral,
                    "vanished": db.vanished,
                    "invalid_delete": db.invalid_delete,
                    "other": db.other,
                    "errors": db.errors,
                }),
            );
        }
        println!("{v}");
        return;
    }
    println!("lines              {}", s.lines);
    if s.blank > 0 {
        println!("  blank            {}", s.blank);
    }
    println!("events             {}", s.events);
    println!("  valid            {}", s.valid);
    println!("  invalid id       {}", s.invalid_id);
    println!("  invalid sig      {}", s.invalid_sig);
    println!("  duplicates       {}", s.duplicates);
    println!("unparseable lines  {}", s.unparseable);
    println!("distinct authors   {}", s.authors);
    println!("elapsed            {:.3} s ({threads} threads)", s.seconds);
    println!("events per second  {eps:.0}");
    if let Some(db) = db {
        println!("database");
        println!("  saved            {}", db.saved);
        println!("  rejected         {}", db.rejected());
        for (name, n) in [
            ("already stored", db.already_stored),
            ("deleted", db.deleted),
            ("replaced", db.replaced),
            ("expired", db.expired),
            ("ephemeral", db.ephemeral),
            ("vanished", db.vanished),
            ("invalid delete", db.invalid_delete),
            ("other", db.other),
        ] {
            if n > 0 {
                println!("    {name:<15}{n}");
            }
        }
        if db.errors > 0 {
            println!("  errors           {}", db.errors);
        }
    }
}
