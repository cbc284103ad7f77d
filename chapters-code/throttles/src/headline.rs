//! The names of the chapter's headline figures: the guide, the appendix and the
//! comparisons read them by these constants, so a renamed figure fails to compile.

pub const NAIVE_RATE_AT_10K: &str = "naive-rate-at-10k";
pub const DEADLINE_RATE_AT_10K: &str = "deadline-rate-at-10k";
pub const GOVERNOR_BURST_RATE_AT_10K: &str = "governor-burst-rate-at-10k";
pub const SLEEP_1MS_LATENESS: &str = "sleep-1ms-lateness";
