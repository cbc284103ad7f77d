//! The one reader of Linux's own files (`/proc`, `/sys`, `/etc/os-release`, `/boot`):
//! every sensor, counter and machine fact that comes from them reads it here. A leaf:
//! it imports nothing from the crate.
//!
//! Only a Linux build reads them (`cfg`): elsewhere every reader returns `None`. Not
//! because the files are missing there: Wine runs a Windows build on Linux and shows
//! the host's files through its `Z:` drive, so `/proc/stat` opened by a Windows build
//! under Wine is the Linux host's. Read, they described the host as the machine of a
//! Windows record and counted the measured process among "other processes".

use std::path::Path;

/// A Linux file's text, trimmed; `None` when it cannot be read or is empty, and on
/// every other OS.
#[cfg(target_os = "linux")]
pub fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Not Linux: no Linux file is read (see the module's note).
#[cfg(not(target_os = "linux"))]
pub fn read(_path: impl AsRef<Path>) -> Option<String> {
    None
}

/// The paths in a Linux folder (`/proc/self/task`); `None` when it cannot be read, and
/// on every other OS.
pub fn entries(path: impl AsRef<Path>) -> Option<Vec<std::path::PathBuf>> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let dir = std::fs::read_dir(path).ok()?;
    Some(dir.flatten().map(|e| e.path()).collect())
}

/// A file that holds one unsigned number (`/proc/sys/kernel/pid_max`).
pub fn read_u64(path: impl AsRef<Path>) -> Option<u64> {
    read(path)?.parse().ok()
}

/// The fields of a `stat` file (`/proc/<pid>/stat`, `/proc/<pid>/task/<tid>/stat`)
/// that the harness reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    /// The command name (between the parentheses; it may hold spaces).
    pub comm: String,
    /// `R` running or runnable, `S` sleeping, …
    pub state: char,
    pub ppid: u32,
    /// Threads in the process (field 20).
    pub threads: u64,
    /// When the process started, in clock ticks after boot (field 22), as written.
    pub starttime: String,
}

/// A process's or thread's `stat` file.
pub fn stat(path: impl AsRef<Path>) -> Option<Stat> {
    parse_stat(&read(path)?)
}

fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text.get(close + 2..)?.split_whitespace().collect();
    // After the name: state, ppid, …, starttime (field 22 of the whole line).
    Some(Stat {
        comm,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        threads: rest.get(17)?.parse().ok()?,
        starttime: rest.get(19)?.to_string(),
    })
}

/// Only the state letter of a `stat` file (`R`: running or runnable), read into a
/// buffer on the stack: the noise sensors read it for every thread of other processes.
pub fn state(path: impl AsRef<Path>) -> Option<char> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    use std::io::Read;
    let mut buf = [0u8; 1024];
    let n = std::fs::File::open(path).ok()?.read(&mut buf).ok()?;
    state_of(&buf[..n])
}

fn state_of(text: &[u8]) -> Option<char> {
    let close = text.iter().rposition(|&b| b == b')')?;
    text.get(close + 2)
        .filter(|b| b.is_ascii_alphabetic())
        .map(|&b| b as char)
}

/// Nanoseconds a thread has spent runnable but waiting for a CPU: the second field of
/// a `schedstat` file (`/proc/thread-self/schedstat`).
pub fn run_delay_ns(path: impl AsRef<Path>) -> Option<u64> {
    parse_schedstat(&read(path)?)
}

fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_with_spaces_in_the_name() {
        let line = "4242 (my (odd) cmd) R 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.comm, "my (odd) cmd");
        assert_eq!(s.state, 'R');
        assert_eq!(s.ppid, 17);
        assert_eq!(s.starttime, "987654");
        assert_eq!(s.threads, 1);
        assert_eq!(state_of(line.as_bytes()), Some('R'));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(state_of(b"garbage"), None);
    }

    #[test]
    fn schedstat_lines_parse() {
        assert_eq!(parse_schedstat("123 456 7\n"), Some(456));
        assert_eq!(parse_schedstat("123"), None);
        assert_eq!(parse_schedstat("a b c"), None);
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn no_linux_file_is_read_elsewhere() {
        let dir = std::env::temp_dir().join(format!("cow-procfs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("stat"),
            "1 (x) R 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 1 1",
        )
        .unwrap();
        std::fs::write(dir.join("schedstat"), "1 2 3").unwrap();
        assert_eq!(read(dir.join("stat")), None);
        assert_eq!(stat(dir.join("stat")), None);
        assert_eq!(state(dir.join("stat")), None);
        assert_eq!(run_delay_ns(dir.join("schedstat")), None);
        assert_eq!(entries(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reads_itself() {
        let me = stat("/proc/thread-self/stat").unwrap();
        assert_eq!(me.state, 'R');
        assert_eq!(state("/proc/thread-self/stat"), Some('R'));
        assert!(stat("/proc/self/stat").unwrap().threads >= 1);
        assert!(read_u64("/proc/sys/kernel/pid_max").is_some());
        assert!(!entries("/proc/self/task").unwrap().is_empty());
    }
}
