//! The write-up's published numbers (`assets/reference/throttles.toml`), and the table
//! that sets its sleep sweep beside this machine's.

use crate::experiments::{SweepKey, SweepRound};
use harness::cells;
use harness::reference::Published;
use harness::render::{Cell, Table, fmt_estimate};
use harness::{Results, Unit};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(super) struct RefRow {
    #[serde(default)]
    pub requested_ms: u64,
    #[serde(default)]
    pub with_send: bool,
    pub mean_ms: f64,
    pub error_ms: f64,
    pub stddev_ms: f64,
}

#[derive(Debug, Deserialize)]
pub(super) struct Numbers {
    pub naive: Vec<RefRow>,
    pub sweep: Vec<RefRow>,
}

/// The write-up's numbers, with its source and machines.
pub(super) fn reference() -> anyhow::Result<Published<Numbers>> {
    Published::load(include_str!("../../../../assets/reference/throttles.toml"))
}

/// A published Mean, with the three decimals the write-up printed.
pub(super) fn mean_ms(v: f64) -> String {
    format!("{v:.3} ms")
}

/// A published Error or StdDev, with the four decimals the write-up printed.
pub(super) fn spread_ms(v: f64) -> String {
    format!("{v:.4}")
}

/// The write-up's sweep as published, beside this machine's lateness.
pub(super) fn sweep(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new([
        "DelayMS",
        "write-up: Mean",
        "Error / StdDev",
        "Mean − DelayMS (ours)",
        "yours: late by",
    ]);
    for row in &refs.sweep {
        let ms = row.requested_ms;
        t.row(cells![
            ms.to_string(),
            mean_ms(row.mean_ms),
            Cell::join(
                [
                    spread_ms(row.error_ms).into(),
                    format!("{} ms", spread_ms(row.stddev_ms)).into(),
                ],
                " / "
            ),
            Unit::Nanos.format((row.mean_ms - ms as f64) * 1e6),
            r.estimate(&SweepKey::Late(ms))
                .map_or("–".into(), |e| fmt_estimate(&e, Unit::Nanos)),
        ]);
    }
    Ok(format!(
        "{}\nMean, Error and StdDev as published (BenchmarkDotNet's columns, the send \
         commented out). Mean − DelayMS is our subtraction. *Yours*: the median lateness \
         of the sweep table.\n\n{}\n",
        t.to_markdown(),
        refs.attribution()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::SWEEP_MS;

    #[test]
    fn reference_data_parses_with_every_published_row() {
        let r = reference().unwrap();
        assert_eq!(r.naive.len(), 2);
        assert_eq!(r.sweep.len(), SWEEP_MS.len());
        assert!(r.sweep.iter().map(|x| x.requested_ms).eq(SWEEP_MS));
        assert_eq!(mean_ms(1.99), "1.990 ms");
        assert_eq!(spread_ms(0.007), "0.0070");
    }
}
