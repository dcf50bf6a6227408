//! Benchmark: throughput of `nostr-verify check` against a single-threaded `Event::from_json` +
//! `Event::verify` loop over the same lines, measured in one run.
//!
//! ```text
//! cargo run --profile bench -p nostr-verify-bench --example check_bench -- [FILE] [REPS]
//! ```
//! FILE defaults to `../shared/data/events-real.jsonl` (run from the repository root), REPS to 7.
//! Repetitions are interleaved (baseline, check with 1 thread, check with 2 threads, ...) so
//! machine load hits all three alike; medians are reported. The baseline is timed both in
//! wall-clock time and in thread CPU time (`CLOCK_THREAD_CPUTIME_ID`, immune to other processes);
//! `check` runs on several threads: its wall-clock time is the figure that counts, and its
//! process CPU time (all threads, `CLOCK_PROCESS_CPUTIME_ID`; nothing else runs in the process
//! meanwhile) shows what it would reach on an idle machine, where N threads get N cores:
//! `events / (cpu / N)`, capped by nothing but the reader and the collector threads. The last
//! row compares `--threads 2` with `--threads 1` per event, process CPU and wall clock, as
//! medians of each repetition's own ratio.

use nostr::event::Event;
use nostr_verify_cli::input::Input;
use nostr_verify_cli::pipeline::{self, Options};
use std::time::Instant;

/// This thread's CPU time in seconds.
fn thread_cpu_seconds() -> f64 {
    cpu_time::ThreadTime::now().as_duration().as_secs_f64()
}

/// The whole process's CPU time in seconds.
fn process_cpu_seconds() -> f64 {
    cpu_time::ProcessTime::now().as_duration().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "../shared/data/events-real.jsonl".to_string());
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(7).max(1);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let n = lines.len() as f64;

    let (mut base_wall, mut base_cpu) = (Vec::new(), Vec::new());
    let mut check_wall: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut check_cpu: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut base_valid = 0;
    let mut check_events = [0u64; 2];
    for _ in 0..reps {
        let (w0, c0) = (Instant::now(), thread_cpu_seconds());
        let mut valid = 0usize;
        for line in &lines {
            if let Ok(event) = Event::from_json(line) {
                valid += usize::from(event.verify().is_ok());
            }
        }
        base_cpu.push(thread_cpu_seconds() - c0);
        base_wall.push(w0.elapsed().as_secs_f64());
        base_valid = std::hint::black_box(valid);

        for (slot, threads) in [1usize, 2].into_iter().enumerate() {
            let input = Input::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let (w0, c0) = (Instant::now(), process_cpu_seconds());
            let summary = pipeline::run(vec![input], &Options::new(threads), |_, _| Ok(()))
                .expect("no output to fail");
            check_cpu[slot].push(process_cpu_seconds() - c0);
            check_wall[slot].push(w0.elapsed().as_secs_f64());
            check_events[slot] = summary.valid + summary.duplicates;
        }
    }
    assert!(
        check_events.iter().all(|&v| v == base_valid as u64),
        "same verdicts"
    );

    let rate = |secs: f64| n / secs;
    let bw = median(base_wall);
    let bc = median(base_cpu);
    println!(
        "input: {path}, {} events, {base_valid} valid, {reps} interleaved repetitions, medians",
        lines.len()
    );
    println!(
        "baseline  from_json + verify, 1 thread   wall {:8.1} ms  {:8.0} events/s",
        bw * 1e3,
        rate(bw)
    );
    println!(
        "baseline  (thread CPU time)                   {:8.1} ms  {:8.0} events/s",
        bc * 1e3,
        rate(bc)
    );
    for (slot, threads) in [1usize, 2].into_iter().enumerate() {
        let cw = median(check_wall[slot].clone());
        println!(
            "check     --threads {threads}                   wall {:8.1} ms  {:8.0} events/s  = {:.2}x baseline wall, {:.2}x baseline CPU",
            cw * 1e3,
            rate(cw),
            bw / cw,
            bc / cw
        );
        let cc = median(check_cpu[slot].clone());
        let idle = cc / threads as f64;
        println!(
            "          (process CPU {:6.1} ms; on {threads} idle cores {:8.0} events/s  = {:.2}x baseline CPU)",
            cc * 1e3,
            rate(idle),
            bc / idle
        );
    }
    // The same run's --threads 2 against --threads 1, per event: the second worker may not add
    // work (process CPU at most 1.15x), and on two idle cores it should cut the wall clock.
    // Ratios are medians of each repetition's own ratio.
    let per_event = |v: &[f64]| median(v.to_vec()) * 1e6 / n;
    let ratio = |a: &[f64], b: &[f64]| median(a.iter().zip(b).map(|(x, y)| x / y).collect());
    println!(
        "2 threads vs 1   process CPU {:6.2} vs {:6.2} µs/event = {:.2}x (target <= 1.15x); \
         wall {:6.2} vs {:6.2} µs/event = {:.2}x faster",
        per_event(&check_cpu[1]),
        per_event(&check_cpu[0]),
        ratio(&check_cpu[1], &check_cpu[0]),
        per_event(&check_wall[1]),
        per_event(&check_wall[0]),
        ratio(&check_wall[0], &check_wall[1]),
    );
}
