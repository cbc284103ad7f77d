//! The chapter binary: the harness's command line, plus `pace`, which runs the
//! [`Throttle`](crate::Throttle) on its own so a reader can try a rate.

use crate::throttle::Throttle;
use std::process::ExitCode;
use std::time::Instant;

/// Parses a rate given on the command line, with the `Throttle`'s own checks.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let rate: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of operations per second"))?;
    crate::throttle::period_ns(rate).map_err(|e| e.to_string())?;
    Ok(rate)
}

const PACE_USAGE: &str = "usage: throttles pace RATE [COUNT]   (RATE in ops/s, COUNT operations, default 100, at most 1,000,000)";

/// `pace RATE [COUNT]`: paces COUNT empty operations and prints the achieved rate.
pub fn pace(args: &[String]) -> ExitCode {
    let Some(rate) = args.first() else {
        eprintln!("{PACE_USAGE}");
        return ExitCode::from(2);
    };
    let rate = match parse_rate(rate) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}\n{PACE_USAGE}");
            return ExitCode::from(2);
        }
    };
    let count: u64 = match args.get(1).map(|c| c.parse::<u64>()) {
        None => 100,
        Some(Ok(c)) if (2..=1_000_000).contains(&c) => c,
        Some(_) => {
            eprintln!("error: COUNT must be a whole number from 2 to 1,000,000\n{PACE_USAGE}");
            return ExitCode::from(2);
        }
    };
    let expected = count as f64 / rate;
    if expected > 600.0 {
        eprintln!(
            "error: {count} operations at {rate} ops/s would take {expected:.0} s; the limit is 600 s"
        );
        return ExitCode::from(2);
    }
    let mut throttle = match Throttle::per_second(rate) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut first = None;
    let mut last = Instant::now();
    for _ in 0..count {
        throttle.wait();
        last = Instant::now();
        first.get_or_insert(last);
    }
    let span = (last - first.unwrap_or(last)).as_secs_f64();
    println!(
        "{count} operations at a target of {rate} ops/s: achieved {:.1} ops/s over {:.3} s",
        (count - 1) as f64 / span.max(1e-9),
        span
    );
    ExitCode::SUCCESS
}

pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("pace") {
        return pace(&args[2..]);
    }
    harness::cli::main(&crate::CHAPTER)
}
