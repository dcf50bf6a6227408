//! `nostr-verify`: check and ingest Nostr event dumps. See `docs/cli.md`.

use clap::{Args, Parser, Subcommand};
use nostr_verify_cli::budget::Budget;
use nostr_verify_cli::ingest::{self, DbCounts, Saver};
use nostr_verify_cli::input::Input;
use nostr_verify_cli::pipeline::{self, Options, Pos, Record, Summary};
use serde_json::json;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Verifies Nostr events, one per line: an event object, ["EVENT",<sub>,{event}] or
/// ["EVENT",{event}]. Blank lines are skipped; gzip input is decompressed.
#[derive(Parser, Debug)]
#[command(
    name = "nostr-verify",
    version,
    propagate_version = true,
    subcommand_required = true,
    after_help = "exit status: 0 every event valid, 1 some line or event rejected, 2 usage or I/O error,\n3 no events in the input (empty, or blank lines only)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check every line's event: id and BIP-340 signature.
    Check(CheckArgs),
    /// Check, then save the valid events into a nostr-lmdb database (created if missing).
    Ingest {
        /// The database directory.
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        #[command(flatten)]
        check: CheckArgs,
    },
    /// Show how many events a nostr-lmdb database holds, in total and per kind.
    Count {
        /// The database directory.
        #[arg(long, value_name = "DIR")]
        db: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
struct CheckArgs {
    /// Input files, plain or gzip; none, or -, reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<String>,
    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N", value_parser = positive)]
    threads: Option<usize>,
    /// Print the summary as one JSON object on its last line.
    #[arg(long)]
    json: bool,
    /// Write `FILE:LINE: reason` for every rejected line (- for standard output).
    #[arg(long, value_name = "FILE")]
    rejects: Option<PathBuf>,
    /// Write every valid event (first occurrence), one per line (- for standard output).
    #[arg(long, value_name = "FILE")]
    valid: Option<PathBuf>,
    // The defaults are `pipeline::DEFAULT_MAX_LINE_BYTES` and `budget::DEFAULT_MAX_IN_FLIGHT_BYTES`
    // written as help shows them; the tests check both the help text and the behaviour.
    /// Reject longer lines without reading them into memory; K, M, G suffixes are powers of 1024.
    #[arg(long, value_name = "BYTES", value_parser = bytes, default_value = "5M")]
    max_line_bytes: usize,
    /// Budget for the bytes in flight: lines read but not yet reported, events not yet saved.
    #[arg(long, value_name = "BYTES", value_parser = bytes, default_value = "64M")]
    max_in_flight_bytes: usize,
    /// Draw a progress bar on standard error [default: when it is a terminal].
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// Never draw the progress bar.
    #[arg(long, overrides_with = "progress")]
    no_progress: bool,
}

/// A positive integer.
fn positive(s: &str) -> Result<usize, String> {
    s.parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("expected a positive integer, got {s:?}"))
}

/// A positive byte count: an integer with an optional K, M or G suffix (1024, 1024², 1024³),
/// optionally followed by `iB` or `B`.
fn bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.as_bytes().last() {
        Some(b'K' | b'k') => (&t[..t.len() - 1], 10),
        Some(b'M' | b'm') => (&t[..t.len() - 1], 20),
        Some(b'G' | b'g') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    digits
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .and_then(|n| n.checked_mul(1usize << shift))
        .ok_or_else(|| format!("expected a positive byte count such as 65536 or 64M, got {s:?}"))
}

/// Exit status 2: usage or I/O errors.
fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("nostr-verify: {msg}");
    ExitCode::from(2)
}

/// [`fail`], and with `--json` also one JSON object `{"error": msg}` on standard output, so a
/// script reading the JSON line sees the failure too.
fn fail_json(as_json: bool, msg: impl std::fmt::Display) -> ExitCode {
    if as_json {
        println!("{}", json!({ "error": msg.to_string() }));
    }
    fail(msg)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let text = e.render().to_string();
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    fail(format!("missing command\n\n{text}"))
                }
                _ => fail(text.strip_prefix("error: ").unwrap_or(&text).trim_end()),
            };
        }
    };
    match cli.command {
        Command::Check(args) => check_or_ingest(None, args),
        Command::Ingest { db, check } => check_or_ingest(Some(&db), check),
        Command::Count { db, json } => count(&db, json),
    }
}

fn count(dir: &Path, as_json: bool) -> ExitCode {
    let contents = match ingest::count(dir) {
        Ok(c) => c,
        Err(e) => return fail_json(as_json, e),
    };
    if as_json {
        // Kinds in numeric order (a `serde_json::Map` would sort the keys as strings: 1, 10002, 3).
        let kinds: Vec<String> = contents
            .kinds
            .iter()
            .map(|(k, n)| format!("\"{k}\":{n}"))
            .collect();
        println!(
            "{{\"events\":{},\"kinds\":{{{}}}}}",
            contents.total,
            kinds.join(",")
        );
    } else {
        println!("events  {}", contents.total);
        for (kind, n) in &contents.kinds {
            println!("kind {kind:<6} {n}");
        }
    }
    ExitCode::SUCCESS
}

/// Standard output, for `--rejects -` and `--valid -`.
fn is_stdout(path: &Option<PathBuf>) -> bool {
    path.as_deref() == Some(Path::new("-"))
}

/// An output file for `--rejects` / `--valid`; `-` is standard output.
fn create(path: &Option<PathBuf>) -> io::Result<Option<BufWriter<Box<dyn Write>>>> {
    let Some(p) = path else { return Ok(None) };
    let w: Box<dyn Write> = if is_stdout(path) {
        Box::new(io::stdout())
    } else {
        Box::new(File::create(p)?)
    };
    Ok(Some(BufWriter::with_capacity(1 << 20, w)))
}

fn check_or_ingest(db: Option<&Path>, args: CheckArgs) -> ExitCode {
    let as_json = args.json;
    let specs = if args.files.is_empty() {
        vec!["-".to_string()]
    } else {
        args.files.clone()
    };
    if specs.iter().filter(|s| *s == "-").count() > 1 {
        return fail_json(as_json, "standard input (-) given more than once");
    }
    if is_stdout(&args.rejects) && is_stdout(&args.valid) {
        return fail_json(
            as_json,
            "--rejects and --valid cannot both be standard output (-)",
        );
    }
    // With a report on standard output, the summary goes to standard error so the two never mix.
    let summary_to_stderr = is_stdout(&args.rejects) || is_stdout(&args.valid);
    let mut inputs = Vec::with_capacity(specs.len());
    for spec in &specs {
        match Input::open(spec) {
            Ok(i) => inputs.push(i),
            Err(e) => return fail_json(as_json, format!("{spec}: {e}")),
        }
    }
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let (mut rejects, mut valid) = match (create(&args.rejects), create(&args.valid)) {
        (Ok(r), Ok(v)) => (r, v),
        (Err(e), _) | (_, Err(e)) => {
            return fail_json(as_json, format!("cannot create output file: {e}"))
        }
    };
    // `ingest` splits the budget: half for the check pipeline, half for the events queued for
    // the database. Sharing one pool would let the reader's chunks fill it and leave the saver one
    // event at a time, one write transaction per event.
    let total = args.max_in_flight_bytes;
    let (check_bytes, save_bytes) = match db {
        Some(_) => (total / 2, total - total / 2),
        None => (total, 0),
    };
    let budget = Arc::new(Budget::new(check_bytes));
    let mut saver = match db {
        Some(dir) => match Saver::open(dir, Arc::new(Budget::new(save_bytes))) {
            Ok(s) => Some(s),
            Err(e) => return fail_json(as_json, e),
        },
        None => None,
    };

    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut opts = Options::new(threads);
    opts.max_line_bytes = args.max_line_bytes;
    opts.max_in_flight_bytes = args.max_in_flight_bytes;
    opts.progress = if args.progress {
        true
    } else if args.no_progress {
        false
    } else {
        io::stderr().is_terminal()
    };

    let mut save_error: Option<String> = None;
    let result =
        pipeline::run_with_budget(inputs, &opts, &budget, |pos: Pos, record: Record<'_>| {
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
        Err(e) => return fail_json(as_json, format!("cannot write output: {e}")),
    };
    for w in [rejects.as_mut(), valid.as_mut()].into_iter().flatten() {
        if let Err(e) = w.flush() {
            return fail_json(as_json, format!("cannot write output: {e}"));
        }
    }
    let db = match saver.map(Saver::finish) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => return fail_json(as_json, e),
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
    if summary.threads < threads {
        eprintln!(
            "nostr-verify: the system refused threads; checked on {} instead of {threads}",
            summary.threads
        );
    }
    let out: Box<dyn Write> = if summary_to_stderr {
        Box::new(io::stderr())
    } else {
        Box::new(io::stdout())
    };
    if let Err(e) = print_summary(out, &summary, db.as_ref(), args.json) {
        return fail_json(as_json, format!("cannot write the summary: {e}"));
    }
    for e in &summary.io_errors {
        eprintln!("nostr-verify: {e}");
    }
    if !summary.io_errors.is_empty() {
        ExitCode::from(2)
    } else if summary.rejected() > 0 {
        ExitCode::from(1)
    } else if summary.events == 0 {
        // Nothing was verified: most often the wrong file or an empty pipe, which must not
        // read as "every event valid".
        if summary.lines == 0 {
            eprintln!("nostr-verify: no events: the input is empty (no lines read)");
        } else {
            eprintln!(
                "nostr-verify: no events: the input holds only blank lines ({})",
                summary.lines
            );
        }
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes the summary (text, or one JSON object) to `out`.
fn print_summary(
    mut out: Box<dyn Write>,
    s: &Summary,
    db: Option<&DbCounts>,
    as_json: bool,
) -> io::Result<()> {
    let threads = s.threads;
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
        if let (false, Some(map)) = (s.io_errors.is_empty(), v.as_object_mut()) {
            map.insert("error".into(), json!(s.io_errors.join("; ")));
        }
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
                    "held_before": db.held_before,
                    "superseded": db.superseded(),
                    "held_after": db.held_after,
                }),
            );
        }
        writeln!(out, "{v}")?;
        return out.flush();
    }
    writeln!(out, "lines              {}", s.lines)?;
    if s.blank > 0 {
        writeln!(out, "  blank            {}", s.blank)?;
    }
    writeln!(out, "events             {}", s.events)?;
    writeln!(out, "  valid            {}", s.valid)?;
    writeln!(out, "  invalid id       {}", s.invalid_id)?;
    writeln!(out, "  invalid sig      {}", s.invalid_sig)?;
    writeln!(out, "  duplicates       {}", s.duplicates)?;
    writeln!(out, "unparseable lines  {}", s.unparseable)?;
    writeln!(out, "distinct authors   {}", s.authors)?;
    writeln!(
        out,
        "elapsed            {:.3} s ({threads} threads)",
        s.seconds
    )?;
    writeln!(out, "events per second  {eps:.0}")?;
    if let Some(db) = db {
        writeln!(out, "database")?;
        writeln!(out, "  saved            {}", db.saved)?;
        writeln!(out, "  rejected         {}", db.rejected())?;
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
                writeln!(out, "    {name:<15}{n}")?;
            }
        }
        if db.errors > 0 {
            writeln!(out, "  errors           {}", db.errors)?;
        }
        // `saved` counts what each save stored; later saves of the same input may remove some
        // again (a newer replaceable or addressable version, a deletion request), so what the
        // database holds (what `count` shows) is not simply the earlier total plus `saved`.
        writeln!(
            out,
            "  holds now        {} (held {} before; {} saved, {} of the stored events removed again by newer versions or deletions)",
            db.held_after,
            db.held_before,
            db.saved,
            db.superseded()
        )?;
    }
    out.flush()
}
