//! The chapter's registry: its experiments, views, headline figures and findings, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{
    Arm, FLOOR, FloorKey, FloorRound, FloorRun, GAPS, PINNING, RunKey, Runs, VARIANTS,
};
use crate::{Placement, Runtime, Transport, Wait};
use crate::{headline, views};
use harness::render::Better;
use harness::{Evidence, Finding, Headline, Unit, Why};

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
            .about("median one-way hand-over between two spinning threads through one atomic, unpinned"),
    ],
    findings: [
        views::SPIN_OR_BLOCK, views::CPU, views::GAP, PLACEMENT, FLOOR_FIGURE,
        views::TOKIO_TASK, PLACEMENT_MIX, GAP_PLACEMENT, PROBE_READS, FIRST_MESSAGE, CLOCK_STEP,
        FLOOR_OUTLIER,
    ],
);

// The chapter's threats to validity: what could make one of its figures wrong, what the
// chapter does about it, and the figures before and after that control.

const CHAN_BLOCK: RunKey = RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Block);

/// Unpinned, rounds differ in where the receiver lands: the blocking std channel
/// unpinned against the same pinned to different CPUs, in the same rounds.
pub static PLACEMENT_MIX: Finding<Runs> = Finding::threat(
    "threat-placement-mix",
    &VARIANTS,
    "Unpinned, the scheduler puts the receiver on the sender's CPU at some wake-ups and not \
     at others, in a mix that differs by round, so an unpinned median mixes two placements",
    "Spin against block is judged with both threads pinned to different CPUs, in the same \
     rounds as the unpinned variants; the cost table's same CPU column gives the unpinned \
     runs' share, and the decision row on placement pins both threads to judge the contrast. \
     Shown: the unpinned blocking std channel's messages split by where they \
     were taken, each round's median of each kind (rounds that had any): on the sender's \
     CPU, then on another CPU. One set of runs, split afterwards: a round need not hold \
     both kinds, so the two are judged on their intervals, as figures measured apart, \
     and a verdict needs 6 rounds with each kind; the placement decision row judges the \
     same contrast with both threads pinned, in every round",
    |r| {
        let side = |same: bool| {
            let per_round: Vec<f64> = r
                .data()
                .filter_map(|x| {
                    let run = x.find(&CHAN_BLOCK)?;
                    let d = if same {
                        &run.latency_same_cpu
                    } else {
                        &run.latency_other_cpu
                    };
                    d.quantile(0.5)
                })
                .collect();
            harness::Estimate::of_rounds(&per_round)
        };
        // One set of runs split after the fact: a round need not have messages of both
        // kinds, so the two sides are not paired by round but judged on their intervals.
        let c = harness::stats::Comparison::unpaired(side(true)?, side(false)?);
        Some(Evidence::pair(
            "on the sender's CPU",
            "on another CPU",
            Unit::Nanos,
            c,
        ))
    },
);

/// The gap's row pairs two arms that, unpinned, a round can place differently: both are
/// pinned (to different CPUs for the decision row, and here to the sender's CPU).
pub static GAP_PLACEMENT: Finding<Runs> = Finding::threat(
    "threat-gap-placement",
    &VARIANTS,
    "No added gap against after the gap: unpinned, a round can put one arm on the \
     sender's CPU and the other not, so the pair compares two placements",
    "Both arms run pinned to different CPUs (the decision row) and both on the sender's \
     CPU, in the same rounds; the unpinned pair's same CPU share per round is under the \
     speedups table. On the sender's CPU: no added gap, then after the gap",
    |r| {
        let spin = RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Spin);
        let same = spin.placed(Placement::SameCpu);
        Evidence::readings(
            r,
            ("no added gap", &same.arm(Arm::NoGap)),
            ("after the gap", &same),
        )
    },
)
.better(Better::Lower);

/// The receiver's own bookkeeping after each message lands in its CPU time: the
/// receiver reads its CPU clock where that bookkeeping begins and ends, and the answer
/// sums only the CPU in between.
pub static PROBE_READS: Finding<Runs> = Finding::threat(
    "threat-probe-reads",
    &VARIANTS,
    "The receiver's CPU per message includes its own reads after each message (the clock, \
     its CPU, `/proc/thread-self/schedstat`, `getrusage`)",
    "The receiver also reads its CPU clock where those reads begin and where they end; the \
     answer's CPU row sums only its CPU from one end to the next begin (its waiting), with \
     nothing subtracted, and the cost table keeps the reads in. Blocking std channel, \
     pinned to different CPUs: its CPU with them, then without",
    |r| {
        let k = CHAN_BLOCK.placed(Placement::OtherCpu);
        let with = |x: &Runs| x.find(&k)?.receiver_cpu_per_message_ns;
        let c = r.compare_of(with, |x| x.find(&k)?.receiver_wait_cpu_per_message_ns)?;
        Some(Evidence::pair("with the reads", "without", Unit::Nanos, c))
    },
)
.better(Better::Smaller);

/// A channel's first message pays for its first use: one warm-up message, untimed.
pub static FIRST_MESSAGE: Finding<Runs> = Finding::threat(
    "threat-first-message",
    &VARIANTS,
    "A channel's first message pays for first use (allocation, cold caches)",
    "Each run sends one warm-up message first, untimed; the gap-why table shows it. \
     The spinning std channel with no added gap, pinned to different CPUs (one placement, \
     so first use differs, and possibly the receiver's start-up): its first message, then its timed median. \
     Timed latencies are pooled, not kept in order, so whether the first timed message is \
     still special is not shown",
    |r| {
        let k = RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Spin)
            .placed(Placement::OtherCpu)
            .arm(Arm::NoGap);
        let c = r.compare_of(|x| x.find(&k)?.first_ns, |x| x.find(&k)?.p50_ns)?;
        Some(Evidence::pair("first", "timed", Unit::Nanos, c))
    },
);

/// Where a blocking receiver is woken, with both threads pinned.
pub static PLACEMENT: Finding<Runs> = Finding::new(
    "blocking-placement",
    &PINNING,
    "A blocking receiver on the sender's CPU, or another (pinned; the sender sleeps right after it sends)",
    |r| {
        let k = |p| RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Block).placed(p);
        // The gap is the run's, in the evidence, as the other rows give theirs.
        let same = format!("same CPU ({} ms gap)", r.param("gap_ms")?);
        Evidence::readings(
            r,
            (&same, &k(Placement::SameCpu)),
            ("different CPUs", &k(Placement::OtherCpu)),
        )
    },
)
.better(Better::Lower)
.advice(
    "If you pin a waker that blocks right after waking, pin its waiter to the same CPU, not \
     another. Against no pinning this row judges nothing (the pinning table's unpinned rows)",
    "Give a blocking receiver a CPU of its own",
    "Placement gave no clear gain; leave it to the scheduler",
)
.why(Why::Hypothesis(
    "an interrupt wakes the other CPU, maybe from idle. On one CPU none is needed: the woken \
     receiver may run inside the sender's send call, preempting it, or once the sender sleeps",
));

/// The least a hand-over costs: two spinning threads and one atomic, on two CPUs
/// where pinning is possible.
pub static FLOOR_FIGURE: Finding<FloorRound> = Finding::new(
    "atomic-floor",
    &FLOOR,
    "The least a hand-over between two spinning threads costs",
    |r| {
        Evidence::reading(
            r,
            "one way, two pinned CPUs",
            &FloorKey(Placement::OtherCpu),
        )
        .or_else(|| Evidence::reading(r, "one way, unpinned", &FloorKey(Placement::Unpinned)))
    },
)
.always(
    "A hand-over through one atomic, with a pause per look, costs about this here; a bare \
     cache-line move may cost less, a channel's costs more (the rows above); rounds may split \
     by vCPU placement",
)
.why(Why::Hypothesis(
    "a cache line moving between two logical CPUs (the host decides whether they are separate \
     cores), plus the pause (`spin_loop`) each loop takes between two looks, which is not \
     measured apart; the floor table gives what the clock adds to each sample",
));

/// The floor is a few tens of nanoseconds, about what a clock read costs: each sample
/// times a batch of round trips between two reads, and each round also times a tenth
/// of its round trips one at a time, the control.
pub static CLOCK_STEP: Finding<FloorRound> = Finding::threat(
    "threat-clock-step",
    &FLOOR,
    "The floor is a few tens of ns, about what one clock read costs. Timed one round \
     trip at a time, the reads' own cost sits in every sample (at least half a read one \
     way; the difference shown also holds loop overhead and clock steps), and a median does not remove a bias that every sample shares",
    "Each sample times a batch of round trips between two clock reads, so a read's cost \
     is spread over the batch (the floor table gives its size and share). Shown: the same \
     rounds on different CPUs, timed one round trip at a time, then in batches",
    |r| {
        fn run(x: &FloorRound) -> Option<&FloorRun> {
            x.runs.iter().find(|f| f.placement == Placement::OtherCpu)
        }
        let c = r.compare_of(
            |x| run(x)?.one_by_one_p50_ns,
            |x| run(x).filter(|_| x.per_sample() > 1)?.p50_ns,
        )?;
        Some(Evidence::pair(
            "one at a time",
            "in batches",
            Unit::Nanos,
            c,
        ))
    },
)
.better(Better::Smaller);

/// A round that reads far from the others, which the stopping rule does not look for.
pub static FLOOR_OUTLIER: Finding<FloorRound> = Finding::threat(
    "threat-floor-outlier",
    &FLOOR,
    "A floor round can read far from the others (a second mode, not a few slow samples: a \
     round's figure is a median of many samples; our hypothesis, untested, is the host's placement of the machine's virtual CPUs at \
     that moment, which can change within a process), and a short run stops at \
     the first round whose interval is tight",
    "Each round is a fresh process and the figure a median over rounds; this row counts \
     the rounds on different CPUs whose median is over twice or under half the median \
     over rounds",
    |r| {
        let floor = FloorKey(Placement::OtherCpu);
        let all = r.estimate(&floor)?;
        let p50 = |x: &FloorRound| {
            x.runs
                .iter()
                .find(|f| FloorKey(f.placement) == floor)?
                .p50_ns
        };
        let rounds: Vec<f64> = r.data().filter_map(p50).collect();
        let far = rounds
            .iter()
            .filter(|v| **v > 2.0 * all.median || **v < 0.5 * all.median)
            .count();
        Some(Evidence::count(
            "rounds over twice or under half the median",
            far as u32,
            rounds.len() as u32,
        ))
    },
);
