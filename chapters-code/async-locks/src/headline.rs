//! The names of the chapter's headline figures: the guide, the appendix and the
//! comparisons read them by these constants, so a renamed figure fails to compile.

pub const DESIGN2_MULTI_THREAD_LATENESS_P50: &str = "design2-multi-thread-lateness-p50";
pub const FIX_MULTI_THREAD_LATENESS_P50: &str = "fix-multi-thread-lateness-p50";
pub const STD_MUTEX_MULTI_THREAD_LATENESS_P50: &str = "std-mutex-multi-thread-lateness-p50";
pub const NO_LOCK_MULTI_THREAD_LATENESS_P50: &str = "no-lock-multi-thread-lateness-p50";
