//! What a page or a published results file must not carry from this machine: the
//! user's home folder and cgroup paths. A leaf: it imports nothing from the crate.

/// Removes what would name this machine's user, home folder or cgroup from a text
/// that goes into a page or the published results: cgroup folders become "this
/// cgroup", the home folder "~".
pub fn scrub(text: &str) -> String {
    let mut out = text.to_string();
    // Absolute cgroup file-system paths, up to the next space or quote.
    while let Some(i) = out.find("/sys/fs/cgroup") {
        let end = out[i..]
            .find(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == '`' || c == ')')
            .map_or(out.len(), |e| i + e);
        out.replace_range(i..end, "this cgroup");
    }
    // This process's cgroup paths as /proc/self/cgroup names them (read once).
    static CGROUPS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let cgroups = CGROUPS.get_or_init(|| {
        crate::procfs::read("/proc/self/cgroup")
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.splitn(3, ':').nth(2))
            .filter(|p| p.len() > 1)
            .map(String::from)
            .collect()
    });
    for path in cgroups {
        out = out.replace(path.as_str(), "this cgroup");
    }
    if let Some(home) = std::env::var_os("HOME").map(|h| h.to_string_lossy().into_owned())
        && home.len() > 1
    {
        out = out.replace(&home, "~");
    }
    out
}
