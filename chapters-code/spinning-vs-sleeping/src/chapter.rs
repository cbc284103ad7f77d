//! The chapter's registry: its experiments, views, headline figures and findings, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{FLOOR, FloorKey, GAPS, PINNING, RunKey, VARIANTS};
use crate::{Placement, Runtime, Transport, Wait};
use crate::{headline, views};
use harness::Headline;

/// The chapter: its experiments, views and headline figures.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [VARIANTS, GAPS, PINNING, FLOOR],
    views: [
        views::GAPS_LATENCY, views::LATENCY, views::SPEEDUPS, views::CDF_STD, views::CDF_TOKIO,
        views::COST, views::GAPS_TABLE, views::GAPS_CPU, views::GAP_WHY, views::PINNING_TABLE,
        views::FLOOR_TABLE, views::FLOOR_CDF, views::ARMS,
        views::REFERENCE,
    ],
    headlines: [
        Headline::new(headline::STD_MPSC_BLOCKING_P50, &VARIANTS, &RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Block))
            .params(&["gap_ms"])
            .about("median send-to-receive latency of a std channel whose receiver blocks"),
        Headline::new(headline::STD_MPSC_SPINNING_P50, &VARIANTS, &RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Spin))
            .params(&["gap_ms"])
            .about("median send-to-receive latency of a std channel whose receiver spins"),
        Headline::new(headline::STD_UDP_BLOCKING_P50, &VARIANTS, &RunKey::variant(Runtime::Std, Transport::Udp, Wait::Block)).params(&["gap_ms"]),
        Headline::new(headline::STD_UDP_SPINNING_P50, &VARIANTS, &RunKey::variant(Runtime::Std, Transport::Udp, Wait::Spin)).params(&["gap_ms"]),
        Headline::new(headline::ATOMIC_FLOOR_ONE_WAY, &FLOOR, &FloorKey(Placement::Unpinned))
            .params(&["round_trips"])
            .about("median one-way hand-over between two spinning threads through one atomic"),
    ],
    findings: [
        views::SPIN_OR_BLOCK, views::CPU, views::GAP, views::PLACEMENT, views::FLOOR_FIGURE,
        views::TOKIO_TASK,
    ],
);
