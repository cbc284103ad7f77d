//! The names of the chapter's headline figures: the guide, the appendix and the
//! comparisons read them by these constants, so a renamed figure fails to compile.

pub const STD_MPSC_BLOCKING_P50: &str = "std-mpsc-blocking-p50";
pub const STD_MPSC_SPINNING_P50: &str = "std-mpsc-spinning-p50";
pub const STD_UDP_BLOCKING_P50: &str = "std-udp-blocking-p50";
pub const STD_UDP_SPINNING_P50: &str = "std-udp-spinning-p50";
pub const ATOMIC_FLOOR_ONE_WAY: &str = "atomic-floor-one-way-unpinned";
