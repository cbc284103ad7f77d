//! The names of the chapter's headline figures: the guide, the appendix and the
//! comparisons read them by these constants, so a renamed figure fails to compile.

pub const THREADS_PER_HOP: &str = "threads-per-hop";
pub const ASYNC_CURRENT_SOCKET_PER_HOP: &str = "async-current-socket-per-hop";
pub const ASYNC_CURRENT_CHANNEL_PER_HOP: &str = "async-current-channel-per-hop";
pub const ASYNC_TASK_BYTES: &str = "async-task-bytes";
