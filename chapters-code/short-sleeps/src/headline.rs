//! The names of the chapter's headline figures: the guide, the appendix and the
//! comparisons read them by these constants, so a renamed figure fails to compile.

pub const NANOSLEEP_1NS_DEFAULT_SLACK: &str = "nanosleep-1ns-default-slack";
pub const NANOSLEEP_1NS_SLACK_1NS: &str = "nanosleep-1ns-slack-1ns";
pub const SCHED_YIELD: &str = "sched-yield";
pub const THREAD_SLEEP_1MS_LATE: &str = "thread-sleep-1ms-late";
