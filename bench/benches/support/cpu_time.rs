//! Thread CPU time for the benchmarks: a criterion [`Measurement`] and a median sampler.
//!
//! Timing uses the thread CPU clock (`CLOCK_THREAD_CPUTIME_ID`, through the `cpu-time` crate), so time the thread spends
//! descheduled on a shared machine is not counted.
#![allow(dead_code)]

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;

/// CPU time consumed by the calling thread, in nanoseconds.
pub(crate) fn thread_cpu_ns() -> u64 {
    cpu_time::ThreadTime::now().as_duration().as_nanos() as u64
}

/// Criterion measurement in thread CPU nanoseconds.
pub(crate) struct ThreadCpuTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, i: u64) -> u64 {
        thread_cpu_ns() - i
    }
    fn add(&self, v1: &u64, v2: &u64) -> u64 {
        v1 + v2
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NsFormatter
    }
}

/// Formats CPU nanoseconds with ns / µs / ms units.
struct NsFormatter;

impl ValueFormatter for NsFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else {
            (1e-6, "ms")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match *t {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Elements(n) => {
                n as f64
            }
        };
        for v in values {
            *v = n * 1e9 / *v;
        }
        "elem/s"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// Median thread CPU time per call of `f`, in ns: `samples` samples of `iters` calls each.
pub(crate) fn median_ns(samples: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..iters {
        f(); // warm-up
    }
    let per_call: Vec<f64> = (0..samples)
        .map(|_| {
            let t = thread_cpu_ns();
            for _ in 0..iters {
                f();
            }
            (thread_cpu_ns() - t) as f64 / iters as f64
        })
        .collect();
    median(&per_call)
}

/// The median of `v` (the upper one for an even count).
///
/// # Panics
/// If `v` is empty.
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The smallest value of `v` (infinity when empty).
pub(crate) fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The `main` of a bench that also prints a summary table: criterion (thread CPU time, 0.3 s
/// warm-up, 1 s measurement) unless `--summary-only` is given, then `summary`.
pub(crate) fn run_with_summary(
    benches: fn(&mut criterion::Criterion<ThreadCpuTime>),
    summary: fn(),
) {
    let summary_only = std::env::args().any(|a| a == "--summary-only");
    if !summary_only {
        let mut c = criterion::Criterion::default()
            .with_measurement(ThreadCpuTime)
            .warm_up_time(std::time::Duration::from_millis(300))
            .measurement_time(std::time::Duration::from_secs(1))
            .configure_from_args();
        benches(&mut c);
        c.final_summary();
    }
    summary();
}
