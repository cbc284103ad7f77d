//! Text from data is text. A results file may come from anyone (an import, a copied
//! results folder, a published bundle), so every string taken from a record reaches a
//! page, a terminal or a file name through one of these functions:
//!
//! - [`text`]: for a page, in HTML *and* in Markdown. The HTML specials (`& < > " '`)
//!   are escaped by `pulldown-cmark-escape` (the escaper of the Markdown parser mdbook
//!   renders the book with); every character that could make Markdown syntax
//!   (links, images, code spans, emphasis, table cells, mdbook's `{{#include}}`) becomes
//!   a numeric character reference, which Markdown shows as the character and never
//!   parses; control characters (newlines included) become spaces, so a string can
//!   never end the HTML block it stands in (a blank line would) or start a new line.
//! - [`terminal`]: for a terminal: control characters (escape sequences that clear the
//!   screen or set the title) become spaces.
//! - [`is_name`]: the strict pattern for names that may become part of a path.
//! - [`json_for_script`]: JSON for a `<script type="application/json">` element: no
//!   `<`, `>`, `&`, `{` or `}` inside its strings, so the data can neither close the
//!   element nor hold an mdbook directive (`{{#include …}}`), which mdbook's `links`
//!   preprocessor would expand even inside a script (issue 28).
//!
//! Both [`text`] and [`terminal`] also drop Unicode format characters (the
//! right-to-left override U+202E and its kin, zero-width characters, U+2028/2029),
//! which reverse or break the lines around them ([`is_format`]).
//!
//! A results file may also come from another user of the machine. [`Folder`] is the
//! one way into a folder of results: it walks the path from `/` one name at a time,
//! checks each folder's owner and mode on the open handle (the user's or root's, and no
//! one else can write it; a sticky folder such as `/tmp` may lie above when the entry
//! below it is ours), follows no link another user made, and reads and writes files
//! only relative to the checked handle, never through a link ([`Trust`]; issue 35).

/// Characters that may start or end Markdown (or mdbook) syntax in running text.
/// (Only mid-line: [`text`] never leaves a newline, so line-start syntax such as `#` or
/// `-` cannot begin.)
/// Parentheses stay: without `[`, `]` and `<` they cannot make a link or an image.
const MARKDOWN_SPECIALS: &[char] = &['\\', '`', '*', '_', '[', ']', '!', '|', '~', '{', '}'];

/// Unicode format characters (general category Cf) and the line and paragraph
/// separators (Zl, Zp): invisible characters that reorder text (bidirectional
/// overrides and isolates), hide it (zero-width characters) or break a line where no
/// newline is. No measurement writes one; the door refuses them
/// (the `validate` module) and every escaper here drops them.
pub fn is_format(c: char) -> bool {
    matches!(
        c as u32,
        0x00AD
            | 0x0600..=0x0605
            | 0x061C
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x2028..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    )
}

/// A character that [`text`] and [`terminal`] turn into a space: a control character
/// or a format character ([`is_format`]).
fn is_unprintable(c: char) -> bool {
    c.is_control() || is_format(c)
}

/// `s` escaped for a page: safe as HTML text, as an HTML attribute value in quotes, and
/// as Markdown inline text (it shows exactly the characters of `s`, minus control and
/// format characters, which become spaces). It holds no `{` or `}`, so no mdbook
/// directive can come out of it.
pub fn text(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if is_unprintable(c) { ' ' } else { c })
        .collect();
    let mut html = String::with_capacity(flat.len() + 16);
    pulldown_cmark_escape::escape_html(&mut html, &flat)
        .expect("writing into a String cannot fail");
    // `escape_html` writes only `&amp; &lt; &gt; &quot; &#39;`, none of which holds a
    // Markdown special, so the specials can be replaced after it.
    let mut out = String::with_capacity(html.len() + 16);
    for c in html.chars() {
        if MARKDOWN_SPECIALS.contains(&c) {
            out.push_str(&format!("&#{};", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` for a terminal: control and format characters become spaces (no escape
/// sequence from a file reaches the reader's terminal, and no override reverses it).
pub fn terminal(s: &str) -> String {
    s.chars()
        .map(|c| if is_unprintable(c) { ' ' } else { c })
        .collect()
}

/// `json` (the output of `serde_json`) made safe to stand inside an HTML
/// `<script type="application/json">` element of a page that mdbook preprocesses:
/// inside its strings, `<`, `>`, `&`, `{`, `}` and the format characters ([`is_format`],
/// U+2028 and U+202E among them) become `\uXXXX` escapes, which `JSON.parse` reads as
/// the same characters. Outside strings JSON holds none of `<>&`, and never two `{` in
/// a row (an object opens with `{` followed by `"` or `}`), so the result can neither
/// close the element nor hold `{{`.
pub fn json_for_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if matches!(c, '<' | '>' | '&' | '{' | '}') || is_format(c) {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    debug_assert!(!out.contains("{{"), "JSON never opens two objects in a row");
    out
}

/// The most a stored record may weigh. A full run's record here is a few hundred
/// kilobytes and a quick one under 2 MB; the cap leaves room for larger machines and
/// keeps a hostile file from costing gigabytes of memory (issue 28: a 200 MB record
/// took 9.6 GB to import, and every page marker of its experiment 6 GB after).
pub const RECORD_CAP: u64 = 8 << 20;
/// The most a results bundle (`all-results json`, `cost-of-waiting-results.json`)
/// may weigh: every experiment's record, so a multiple of [`RECORD_CAP`].
pub const BUNDLE_CAP: u64 = 64 << 20;

/// Reads a results file through the book's one door: only a regular file (a FIFO, a
/// device, a socket or a link to one is refused without blocking on it), at most `cap`
/// bytes (a larger one is refused, and never read past the cap), and nothing else.
/// The message says what the file is and never holds the path.
pub fn read_results_file(path: &std::path::Path, cap: u64) -> Result<Vec<u8>, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO for reading blocks until a writer comes; O_NONBLOCK does not, and
    // a regular file's reads ignore it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("cannot read it: {e}"))?;
    // The opened file itself, not the name: a link is judged by what it leads to.
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        let what = kind_of(&meta.file_type());
        return Err(format!(
            "it is {what}, not a regular file; a results file is a plain JSON file"
        ));
    }
    read_capped(&file, meta.len(), cap)
}

/// The bytes of an opened regular file of `len` bytes, refused past `cap`: also a file
/// that grows while it is read stops at the cap.
fn read_capped(file: &std::fs::File, len: u64, cap: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    if len > cap {
        return Err(format!(
            "it holds {len} bytes, more than the {} a results file of this book may hold",
            cap_words(cap)
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "it grew past the {} a results file of this book may hold while it was read",
            cap_words(cap)
        ));
    }
    Ok(bytes)
}

/// What a file that is not a regular one is, in words.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Words for a user: `uid 4242 (mallory)`, or `uid 4242` when the system has no name
/// for it.
pub fn whose(uid: u32) -> String {
    match user_name(uid) {
        Some(name) => format!("uid {uid} ({})", terminal(&name)),
        None => format!("uid {uid}"),
    }
}

#[cfg(unix)]
fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: a zeroed passwd is a valid out-parameter; getpwuid_r writes into it and
    // `buf` only, and `result` is null or points at `pwd`.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result = std::ptr::null_mut();
        let r = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if r != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(pwd.pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

#[cfg(not(unix))]
fn user_name(_uid: u32) -> Option<String> {
    None
}

/// Whether `gid` is this user's own private group (the user-private-group scheme of
/// Debian and Ubuntu: the primary group, named as the user, where a umask of 002 makes
/// every new folder group-writable). Its group-write bit lets no other user in, so the
/// trust checks do not count it.
#[cfg(unix)]
pub fn is_private_group(gid: u32) -> bool {
    // SAFETY: getegid has no preconditions and cannot fail.
    if gid != unsafe { libc::getegid() } {
        return false;
    }
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: a zeroed group is a valid out-parameter; getgrgid_r writes into it and
    // `buf` only, and `result` is null or points at `grp`.
    let name = unsafe {
        let mut grp: libc::group = std::mem::zeroed();
        let mut result = std::ptr::null_mut();
        let r = libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut result);
        if r != 0 || result.is_null() || grp.gr_name.is_null() {
            return false;
        }
        std::ffi::CStr::from_ptr(grp.gr_name)
            .to_string_lossy()
            .into_owned()
    };
    user_name(my_uid()).is_some_and(|user| user == name)
}

/// A bit above every mode bit that `sys::fstat` and `sys::lstatat` set when the group
/// is this user's private group ([`is_private_group`]); messages print `mode & 0o7777`.
#[cfg(unix)]
const PRIVATE_GROUP: u32 = 1 << 30;

#[cfg(unix)]
fn trusted_mode(mode: u32, gid: u32) -> u32 {
    if mode & 0o020 != 0 && is_private_group(gid) {
        mode | PRIVATE_GROUP
    } else {
        mode
    }
}

/// Whether someone other than the owner may write: the world, or a group that is not
/// the user's own private group.
#[cfg(unix)]
fn others_can_write(mode: u32) -> bool {
    mode & 0o002 != 0 || (mode & 0o020 != 0 && mode & PRIVATE_GROUP == 0)
}

/// This process's user (its effective uid).
#[cfg(unix)]
pub fn my_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// What a folder opened with [`Folder::open`] is trusted for (issue 35: trust is decided
/// by owner and mode, for reads and writes alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Results are written into it: it belongs to this user, its owner may write it and
    /// no one else can. Every folder above it belongs to this user or root and no one
    /// else can write it, except a sticky folder (`/tmp`) whose entry below is ours.
    Write,
    /// Results are read from it: as [`Trust::Write`], but root's folders and files are
    /// trusted too.
    Read,
    /// Someone else's folder, read on purpose (`import`): no owner is checked, but no
    /// symbolic link inside it is followed (the folder given itself may be one).
    Foreign,
}

/// One entry of a [`Folder`], by what it is itself (a link is a link, not what it
/// leads to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Folder,
    File,
    /// A symbolic link, and where it leads.
    Link(String),
    Other,
}

/// A folder, held open, whose owner and mode were checked on the opened handle: every
/// file read or written in it is opened relative to that handle, never through a path
/// read again, and never through a symbolic link ([`Trust`]).
pub struct Folder {
    path: std::path::PathBuf,
    trust: Trust,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

/// How many symbolic links a path may pass through before it is refused (Linux's own
/// limit).
#[cfg(unix)]
const MAX_LINKS: usize = 40;

#[cfg(unix)]
mod sys {
    //! The few system calls [`super::Folder`] needs, each on an open folder.
    use std::ffi::{CString, OsStr};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    pub fn cstr(name: &OsStr) -> io::Result<CString> {
        CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    /// Flags that open a folder only to look things up in it: no read permission
    /// needed where the system allows (`O_PATH`), never through a link.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const LOOKUP: libc::c_int =
        libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub const LOOKUP: libc::c_int =
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

    pub fn openat(
        dir: &impl AsRawFd,
        name: &OsStr,
        flags: libc::c_int,
        mode: u32,
    ) -> io::Result<OwnedFd> {
        let c = cstr(name)?;
        // SAFETY: a valid folder descriptor and a NUL-terminated name; the result is a
        // new descriptor we own, or -1.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    pub fn open_root() -> io::Result<OwnedFd> {
        let c = CString::new("/").expect("no NUL");
        // SAFETY: a NUL-terminated path; the result is a new descriptor or -1.
        let fd = unsafe { libc::open(c.as_ptr(), LOOKUP) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just opened, owned by nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Owner, mode (type bits included; [`PRIVATE_GROUP`](super::PRIVATE_GROUP) set for
    /// the user's own private group) of what `fd` is open on.
    pub fn fstat(fd: &impl AsRawFd) -> io::Result<(u32, u32)> {
        // SAFETY: a zeroed stat is a valid out-parameter for fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and a valid out-parameter.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((st.st_uid, super::trusted_mode(st.st_mode as u32, st.st_gid)))
    }

    /// Owner and mode of the entry `name` of `dir` itself (a link is not followed).
    pub fn lstatat(dir: &impl AsRawFd, name: &OsStr) -> io::Result<(u32, u32)> {
        let c = cstr(name)?;
        // SAFETY: as in `fstat`.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid folder descriptor, a NUL-terminated name, a valid out-parameter.
        let r = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((st.st_uid, super::trusted_mode(st.st_mode as u32, st.st_gid)))
    }

    pub fn readlinkat(dir: &impl AsRawFd, name: &OsStr) -> io::Result<std::path::PathBuf> {
        let c = cstr(name)?;
        let mut buf = vec![0u8; 4096];
        // SAFETY: a valid folder descriptor, a NUL-terminated name and a buffer of the
        // length given.
        let n = unsafe {
            libc::readlinkat(
                dir.as_raw_fd(),
                c.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        buf.truncate(n as usize);
        let os: std::ffi::OsString = std::os::unix::ffi::OsStringExt::from_vec(buf);
        Ok(std::path::PathBuf::from(os))
    }

    pub fn mkdirat(dir: &impl AsRawFd, name: &OsStr, mode: u32) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: a valid folder descriptor and a NUL-terminated name.
        if unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn unlinkat(dir: &impl AsRawFd, name: &OsStr) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: a valid folder descriptor and a NUL-terminated name; flags 0 removes a
        // name that is not a folder (a link's own name, never its target).
        if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn renameat(dir: &impl AsRawFd, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        // SAFETY: valid folder descriptors and NUL-terminated names.
        if unsafe { libc::renameat(dir.as_raw_fd(), a.as_ptr(), dir.as_raw_fd(), b.as_ptr()) } != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The names in the folder `dir` (not `.` or `..`).
    pub fn names(dir: &impl AsRawFd) -> io::Result<Vec<std::ffi::OsString>> {
        use std::os::fd::IntoRawFd;
        let listing = openat(
            dir,
            OsStr::new("."),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            0,
        )?;
        let raw = listing.into_raw_fd();
        // SAFETY: `raw` is an open folder descriptor; fdopendir takes it over.
        let d = unsafe { libc::fdopendir(raw) };
        if d.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `raw` is still ours to close.
            unsafe { libc::close(raw) };
            return Err(e);
        }
        let mut out = Vec::new();
        loop {
            // SAFETY: `d` is an open directory stream.
            let ent = unsafe { libc::readdir(d) };
            if ent.is_null() {
                break;
            }
            // SAFETY: readdir returned an entry whose name is NUL-terminated.
            let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
            let bytes = name.to_bytes();
            if bytes != b"." && bytes != b".." {
                out.push(OsStr::from_bytes(bytes).to_os_string());
            }
        }
        // SAFETY: `d` is open; closedir closes `raw` with it.
        unsafe { libc::closedir(d) };
        out.sort();
        Ok(out)
    }

    /// Bytes free for this user on the file system holding `fd`.
    pub fn free_bytes(fd: &impl AsRawFd) -> io::Result<u64> {
        // SAFETY: a zeroed statvfs is a valid out-parameter.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and out-parameter.
        if unsafe { libc::fstatvfs(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        #[allow(clippy::unnecessary_cast)]
        Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
    }
}

/// The file-type bits of a mode, as `u32` everywhere (`mode_t` is 16 bits on macOS).
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)]
mod ifmt {
    pub const FMT: u32 = libc::S_IFMT as u32;
    pub const LNK: u32 = libc::S_IFLNK as u32;
    pub const DIR: u32 = libc::S_IFDIR as u32;
    pub const REG: u32 = libc::S_IFREG as u32;
    pub const FIFO: u32 = libc::S_IFIFO as u32;
    pub const CHR: u32 = libc::S_IFCHR as u32;
    pub const BLK: u32 = libc::S_IFBLK as u32;
    pub const SOCK: u32 = libc::S_IFSOCK as u32;
}

#[cfg(unix)]
fn is_link(mode: u32) -> bool {
    mode & ifmt::FMT == ifmt::LNK
}

#[cfg(unix)]
fn is_dir(mode: u32) -> bool {
    mode & ifmt::FMT == ifmt::DIR
}

#[cfg(unix)]
fn is_file(mode: u32) -> bool {
    mode & ifmt::FMT == ifmt::REG
}

/// What a file of mode `mode` is, in words: where a folder was wanted, a regular file
/// too (a file in a chapter folder's place read "is not a regular file, not a folder").
#[cfg(unix)]
fn kind_of_mode(mode: u32) -> &'static str {
    match mode & ifmt::FMT {
        ifmt::REG => "a regular file",
        ifmt::FIFO => "a named pipe (FIFO)",
        ifmt::CHR | ifmt::BLK => "a device",
        ifmt::SOCK => "a socket",
        ifmt::DIR => "a folder",
        ifmt::LNK => "a symbolic link",
        _ => "not a regular file",
    }
}

/// Why the folder `path` (owner `uid`, mode `mode`) is not to be trusted as `trust`
/// asks, if it is not; `last`: it is the folder itself, not one above it.
#[cfg(unix)]
fn folder_refusal(
    path: &std::path::Path,
    uid: u32,
    mode: u32,
    trust: Trust,
    last: bool,
) -> Option<String> {
    let shown = terminal(&path.display().to_string());
    let me = my_uid();
    let perms = mode & 0o7777;
    if trust == Trust::Foreign {
        return None;
    }
    if !last {
        if uid != me && uid != 0 {
            return Some(format!(
                "{shown}, a folder on the way to the results, belongs to another user ({}), \
                 who could put something else in its place; choose a results folder \
                 (COW_RESULTS_DIR) under folders of your own",
                whose(uid)
            ));
        }
        if others_can_write(mode) && perms & 0o1000 == 0 {
            return Some(format!(
                "{shown}, a folder on the way to the results, can be written by other users \
                 (mode {perms:04o}), who could put something else in its place; choose a \
                 results folder (COW_RESULTS_DIR) under folders of your own"
            ));
        }
        return None;
    }
    let owner_ok = uid == me || (trust == Trust::Read && uid == 0);
    if !owner_ok {
        return Some(format!(
            "refusing {shown}: it belongs to another user ({}, you are {}), who could \
             replace what is there or plant links in it; set COW_RESULTS_DIR to a folder \
             of your own",
            whose(uid),
            whose(me)
        ));
    }
    if others_can_write(mode) {
        return Some(format!(
            "refusing {shown}: other users can write to it (mode {perms:04o}), so they could \
             plant files or links in it; make it private (chmod go-w {shown}) or set \
             COW_RESULTS_DIR to a folder of your own"
        ));
    }
    if trust == Trust::Write && perms & 0o200 == 0 {
        return Some(format!(
            "refusing {shown}: its owner cannot write to it (mode {perms:04o}), so no \
             result could be stored there; chmod u+w {shown} or set COW_RESULTS_DIR to \
             another folder"
        ));
    }
    None
}

impl Folder {
    /// Opens the folder `path` (made absolute against the current folder), walking down
    /// from `/` one name at a time and checking each folder on its open handle
    /// ([`Trust`]); with `create`, missing folders are made (0755). A symbolic link on
    /// the way is followed only when it belongs to this user or root (a link another
    /// user made in a shared folder is refused, naming whose it is).
    pub fn open(path: &std::path::Path, trust: Trust, create: bool) -> Result<Folder, String> {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        #[cfg(unix)]
        {
            let fd = walk(&abs, trust, create)?;
            Ok(Folder {
                path: path.to_path_buf(),
                trust,
                fd,
            })
        }
        #[cfg(not(unix))]
        {
            if create {
                std::fs::create_dir_all(&abs)
                    .map_err(|e| format!("cannot create {}: {e}", abs.display()))?;
            }
            if !abs.is_dir() {
                return Err(format!(
                    "{} is not a folder",
                    terminal(&abs.display().to_string())
                ));
            }
            Ok(Folder {
                path: path.to_path_buf(),
                trust,
            })
        }
    }

    /// The path this folder was opened by.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The folder `name` inside this one, checked the same way (never through a link);
    /// with `create`, made when missing.
    pub fn child(&self, name: &str, create: bool) -> Result<Folder, String> {
        let path = self.path.join(name);
        let shown = terminal(&path.display().to_string());
        #[cfg(unix)]
        {
            let n = std::ffi::OsStr::new(name);
            if create {
                match sys::mkdirat(&self.fd, n, 0o755) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(format!("cannot create {shown}: {e}")),
                }
            }
            let fd = sys::openat(&self.fd, n, sys::LOOKUP, 0).map_err(|e| {
                match sys::lstatat(&self.fd, n) {
                    Ok((_, mode)) if is_link(mode) => self.link_refusal(name),
                    Ok((_, mode)) if !is_dir(mode) => {
                        format!("{shown} is {}, not a folder", kind_of_mode(mode))
                    }
                    Ok((uid, mode)) => folder_refusal(&path, uid, mode, self.trust, true)
                        .unwrap_or_else(|| format!("cannot open {shown}: {e}")),
                    _ => format!("cannot open {shown}: {e}"),
                }
            })?;
            let (uid, mode) =
                sys::fstat(&fd).map_err(|e| format!("cannot inspect {shown}: {e}"))?;
            if let Some(why) = folder_refusal(&path, uid, mode, self.trust, true) {
                return Err(why);
            }
            Ok(Folder {
                path,
                trust: self.trust,
                fd,
            })
        }
        #[cfg(not(unix))]
        {
            if create {
                std::fs::create_dir_all(&path)
                    .map_err(|e| format!("cannot create {shown}: {e}"))?;
            }
            if !path.is_dir() {
                return Err(format!("{shown} is not a folder"));
            }
            Ok(Folder {
                path,
                trust: self.trust,
            })
        }
    }

    /// Why the link `name` is refused, and where it leads.
    #[cfg(unix)]
    fn link_refusal(&self, name: &str) -> String {
        let to = sys::readlinkat(&self.fd, std::ffi::OsStr::new(name))
            .map(|t| format!(" (to {})", terminal(&t.display().to_string())))
            .unwrap_or_default();
        let shown = terminal(&self.path.join(name).display().to_string());
        match self.trust {
            Trust::Foreign => format!(
                "{shown} is a symbolic link{to}: what is imported is read only from inside \
                 the folder given, and no link is followed out of it; copy the file itself"
            ),
            _ => format!(
                "{shown} is a symbolic link{to}: a results folder holds its own files and \
                 folders, and no link in it is followed"
            ),
        }
    }

    /// Every entry of this folder, sorted by name, each by what it is itself.
    pub fn entries(&self) -> Result<Vec<(String, Kind)>, String> {
        let shown = terminal(&self.path.display().to_string());
        #[cfg(unix)]
        {
            let names = sys::names(&self.fd).map_err(|e| format!("cannot list {shown}: {e}"))?;
            Ok(names
                .into_iter()
                .filter_map(|n| {
                    let (_, mode) = sys::lstatat(&self.fd, &n).ok()?;
                    let kind = if is_dir(mode) {
                        Kind::Folder
                    } else if is_file(mode) {
                        Kind::File
                    } else if is_link(mode) {
                        Kind::Link(
                            sys::readlinkat(&self.fd, &n)
                                .map(|t| t.display().to_string())
                                .unwrap_or_default(),
                        )
                    } else {
                        Kind::Other
                    };
                    Some((n.to_string_lossy().into_owned(), kind))
                })
                .collect())
        }
        #[cfg(not(unix))]
        {
            let mut out: Vec<(String, Kind)> = std::fs::read_dir(&self.path)
                .map_err(|e| format!("cannot list {shown}: {e}"))?
                .flatten()
                .filter_map(|e| {
                    let t = e.file_type().ok()?;
                    let kind = if t.is_symlink() {
                        Kind::Link(String::new())
                    } else if t.is_dir() {
                        Kind::Folder
                    } else if t.is_file() {
                        Kind::File
                    } else {
                        Kind::Other
                    };
                    Some((e.file_name().to_string_lossy().into_owned(), kind))
                })
                .collect();
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(out)
        }
    }

    /// Reads the file `name` of this folder through the door: never through a link,
    /// never blocking (a FIFO or a device is refused), at most `cap` bytes, and (but in
    /// a [`Trust::Foreign`] folder) only a file of this user or root that no one else
    /// can write. `Ok(None)`: there is no such file. The message does not hold the path.
    pub fn read(&self, name: &str, cap: u64) -> Result<Option<Vec<u8>>, String> {
        #[cfg(unix)]
        {
            let n = std::ffi::OsStr::new(name);
            let fd = match sys::openat(
                &self.fd,
                n,
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0,
            ) {
                Ok(fd) => fd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => {
                    let me = my_uid();
                    return Err(match sys::lstatat(&self.fd, n) {
                        // One we may not open (another user's, 0600) is refused for whose
                        // it is.
                        Ok((uid, _)) if self.trust != Trust::Foreign && uid != me && uid != 0 => {
                            format!(
                                "it belongs to another user ({}), not to you ({}) or root, so \
                                 it is not a result of yours",
                                whose(uid),
                                whose(me)
                            )
                        }
                        Ok((_, mode)) if is_link(mode) => {
                            let to = sys::readlinkat(&self.fd, n)
                                .map(|t| format!(" (to {})", terminal(&t.display().to_string())))
                                .unwrap_or_default();
                            format!("it is a symbolic link{to}, and no link is followed")
                        }
                        _ => format!("cannot read it: {e}"),
                    });
                }
            };
            let (uid, mode) = sys::fstat(&fd).map_err(|e| format!("cannot read it: {e}"))?;
            if !is_file(mode) {
                return Err(format!(
                    "it is {}, not a regular file; a results file is a plain JSON file",
                    kind_of_mode(mode)
                ));
            }
            if self.trust != Trust::Foreign {
                let me = my_uid();
                if uid != me && uid != 0 {
                    return Err(format!(
                        "it belongs to another user ({}), not to you ({}) or root, so it is \
                         not a result of yours",
                        whose(uid),
                        whose(me)
                    ));
                }
                let perms = mode & 0o7777;
                if others_can_write(mode) {
                    return Err(format!(
                        "other users can write to it (mode {perms:04o}); make it private \
                         (chmod go-w) to have it read"
                    ));
                }
            }
            let file = std::fs::File::from(fd);
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            read_capped(&file, len, cap).map(Some)
        }
        #[cfg(not(unix))]
        {
            let path = self.path.join(name);
            match std::fs::symlink_metadata(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Ok(m) if m.file_type().is_symlink() => {
                    Err("it is a symbolic link, and no link is followed".into())
                }
                _ => read_results_file(&path, cap).map(Some),
            }
        }
    }

    /// Opens (creating it, 0600, when missing) the file `name` of this folder for
    /// reading and writing: never through a link, never truncated.
    pub fn open_private(&self, name: &str) -> std::io::Result<std::fs::File> {
        #[cfg(unix)]
        {
            sys::openat(
                &self.fd,
                std::ffi::OsStr::new(name),
                libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600,
            )
            .map(std::fs::File::from)
        }
        #[cfg(not(unix))]
        {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(self.path.join(name))
        }
    }

    /// Creates `.<name>.<pid>.<random>.tmp` in this folder, new (a name that exists, a
    /// link included, is never opened: another random part is tried), 0600.
    fn create_temporary(&self, name: &str) -> Result<(String, std::fs::File), String> {
        let mut last = None;
        for _ in 0..16 {
            let tmp = format!(".{name}.{}.{:016x}.tmp", std::process::id(), random_u64());
            #[cfg(unix)]
            let opened = sys::openat(
                &self.fd,
                std::ffi::OsStr::new(&tmp),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600,
            )
            .map(std::fs::File::from);
            #[cfg(not(unix))]
            let opened = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(self.path.join(&tmp));
            match opened {
                Ok(file) => return Ok((tmp, file)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(format!(
                        "cannot create {}: {e}",
                        terminal(&self.path.join(&tmp).display().to_string())
                    ));
                }
            }
        }
        Err(format!(
            "cannot create a temporary file in {}: every name tried was taken ({})",
            terminal(&self.path.display().to_string()),
            last.map(|e| e.to_string()).unwrap_or_default()
        ))
    }

    /// Writes `bytes` as the file `name` of this folder atomically: a new private
    /// temporary file, then a rename over `name` (which replaces a link there, never
    /// what it leads to). Stray temporaries of dead writers are removed first.
    pub fn write_atomically(&self, name: &str, bytes: &[u8]) -> Result<(), String> {
        use std::io::Write;
        self.remove_stray_temporaries();
        let (tmp, mut file) = self.create_temporary(name)?;
        let shown = terminal(&self.path.join(name).display().to_string());
        let written = file
            .write_all(bytes)
            .and_then(|()| file.flush())
            .map_err(|e| format!("cannot write {shown}: {e}"));
        drop(file);
        let moved = written.and_then(|()| {
            self.rename(&tmp, name)
                .map_err(|e| format!("cannot move the new {shown} into place: {e}"))
        });
        if moved.is_err() {
            self.remove(&tmp);
        }
        moved
    }

    fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            sys::renameat(
                &self.fd,
                std::ffi::OsStr::new(from),
                std::ffi::OsStr::new(to),
            )
        }
        #[cfg(not(unix))]
        {
            std::fs::rename(self.path.join(from), self.path.join(to))
        }
    }

    /// Removes the name `name` of this folder if it is there (a link's name, never what
    /// it leads to; never a folder).
    pub fn remove(&self, name: &str) {
        #[cfg(unix)]
        let _ = sys::unlinkat(&self.fd, std::ffi::OsStr::new(name));
        #[cfg(not(unix))]
        let _ = std::fs::remove_file(self.path.join(name));
    }

    /// Whether a result can be stored here now: a temporary file is made, written and
    /// removed, and the file system has room for at least one record at its cap.
    pub fn probe(&self) -> Result<(), String> {
        use std::io::Write;
        let shown = terminal(&self.path.display().to_string());
        let (tmp, mut file) = self
            .create_temporary("write-probe")
            .map_err(|e| format!("{e} (set COW_RESULTS_DIR to a folder you can write)"))?;
        let written = file.write_all(&[0u8; 4096]).and_then(|()| file.sync_all());
        drop(file);
        self.remove(&tmp);
        written.map_err(|e| format!("cannot write into {shown}: {e}"))?;
        #[cfg(unix)]
        if let Ok(free) = sys::free_bytes(&self.fd)
            && free < RECORD_CAP
        {
            return Err(format!(
                "{shown} has {} KB free, less than the {} one result may take; free some \
                 space or set COW_RESULTS_DIR to another folder",
                free >> 10,
                cap_words(RECORD_CAP)
            ));
        }
        Ok(())
    }

    /// Removes temporary files that a writer of this book left when it was killed: only
    /// names it makes (`.<result or mark>.<pid>[.<random>].tmp`, the result or mark
    /// being a `.json`, a `.retried` or the probe), of a writer that is gone, owned by
    /// this user, and only in a folder checked for writing.
    pub fn remove_stray_temporaries(&self) {
        if self.trust != Trust::Write {
            return;
        }
        let Ok(entries) = self.entries() else {
            return;
        };
        for (name, kind) in entries {
            if !matches!(kind, Kind::File | Kind::Link(_)) {
                continue;
            }
            let Some(pid) = temporary_pid(&name) else {
                continue;
            };
            if pid == std::process::id() || process_alive(pid) {
                continue;
            }
            #[cfg(unix)]
            if sys::lstatat(&self.fd, std::ffi::OsStr::new(&name))
                .is_ok_and(|(uid, _)| uid == my_uid())
            {
                self.remove(&name);
            }
            #[cfg(not(unix))]
            self.remove(&name);
        }
    }
}

/// `cap` in words: `8 MB`, or bytes below a megabyte.
fn cap_words(cap: u64) -> String {
    if cap >= 1 << 20 {
        format!("{} MB", cap >> 20)
    } else {
        format!("{cap} bytes")
    }
}

/// Walks `abs` from `/`, checking each folder as [`Folder::open`] says.
#[cfg(unix)]
fn walk(abs: &std::path::Path, trust: Trust, create: bool) -> Result<std::os::fd::OwnedFd, String> {
    use std::collections::VecDeque;
    use std::ffi::OsString;
    use std::path::{Component, PathBuf};
    let parts = |p: &std::path::Path| -> Vec<OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some(OsString::from("..")),
                _ => None,
            })
            .collect()
    };
    let root = sys::open_root().map_err(|e| format!("cannot open /: {e}"))?;
    let mut stack = vec![root];
    let mut here = PathBuf::from("/");
    let mut todo: VecDeque<OsString> = parts(abs).into();
    let mut links = 0;
    if todo.is_empty() {
        let (uid, mode) = sys::fstat(&stack[0]).map_err(|e| format!("cannot inspect /: {e}"))?;
        if let Some(why) = folder_refusal(&here, uid, mode, trust, true) {
            return Err(why);
        }
    }
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
                here.pop();
            }
            continue;
        }
        let last = todo.is_empty();
        let parent = stack.last().expect("the root stays");
        let path = here.join(&name);
        let shown = terminal(&path.display().to_string());
        let entry = match sys::lstatat(parent, &name) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                match sys::mkdirat(parent, &name, 0o755) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(format!("cannot create {shown}: {e}")),
                }
                sys::lstatat(parent, &name)
            }
            other => other,
        };
        let (uid, mode) = entry.map_err(|e| format!("cannot open {shown}: {e}"))?;
        if is_link(mode) {
            if trust != Trust::Foreign && uid != my_uid() && uid != 0 {
                return Err(format!(
                    "refusing {shown}: it is a symbolic link that another user ({}) made, and \
                     it is not followed (it could lead anywhere, a home folder included); \
                     set COW_RESULTS_DIR to a folder of your own",
                    whose(uid)
                ));
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(format!("{shown}: too many symbolic links on the way"));
            }
            let target = sys::readlinkat(parent, &name)
                .map_err(|e| format!("cannot read the link {shown}: {e}"))?;
            if target.is_absolute() {
                stack.truncate(1);
                here = PathBuf::from("/");
            }
            for p in parts(&target).into_iter().rev() {
                todo.push_front(p);
            }
            continue;
        }
        let fd = sys::openat(parent, &name, sys::LOOKUP, 0).map_err(|e| {
            if !is_dir(mode) {
                format!("{shown} is {}, not a folder", kind_of_mode(mode))
            } else {
                // A folder we may not open (another user's, 0700) is refused for whose
                // it is, not for the permission it lacks.
                folder_refusal(&path, uid, mode, trust, last)
                    .unwrap_or_else(|| format!("cannot open {shown}: {e}"))
            }
        })?;
        let (uid, mode) = sys::fstat(&fd).map_err(|e| format!("cannot inspect {shown}: {e}"))?;
        if let Some(why) = folder_refusal(&path, uid, mode, trust, last) {
            return Err(why);
        }
        stack.push(fd);
        here = path;
    }
    Ok(stack.pop().expect("the root stays"))
}

/// An unpredictable 64-bit number: std's hasher keys are drawn from the operating
/// system's random source once per process, and the counter and the clock make each
/// call's number differ.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    h.write_u32(std::process::id());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    h.write_u128(now.as_nanos());
    h.finish()
}

/// The writer's pid in the name of one of this book's temporary files
/// (`.<name>.<pid>.<16 hex digits>.tmp`, or `.<name>.<pid>.tmp` from before the random
/// part), where `<name>` is a name this book writes: a `.json` file, a `.retried` mark
/// or the `write-probe`. Anything else is not ours.
pub fn temporary_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (rest, last) = inner.rsplit_once('.')?;
    let (stem, pid) = if last.len() == 16 && last.bytes().all(|b| b.is_ascii_hexdigit()) {
        let (stem, pid) = rest.rsplit_once('.')?;
        (stem, pid.parse::<u32>().ok()?)
    } else {
        (rest, last.parse::<u32>().ok()?)
    };
    let ours = stem.ends_with(".json") || stem.ends_with(".retried") || stem == "write-probe";
    ours.then_some(pid)
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true // without a cheap check, keep the file
}

/// Reads the file at `path` from a folder of results of this user: its folder is opened
/// with [`Folder::open`] ([`Trust::Read`]) and the file read through it
/// ([`Folder::read`]). `Ok(None)`: there is no such file. The message names the folder
/// when the folder is refused, and not the file's path otherwise.
pub fn read_own_file(path: &std::path::Path, cap: u64) -> Result<Option<Vec<u8>>, String> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Err("it is not a file name".into());
    };
    Folder::open(dir, Trust::Read, false)?.read(name, cap)
}

/// A name that may become part of a file name or an HTML id: `[a-z0-9-]`, starting
/// with a letter or digit, at most 64 characters.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_door_reads_regular_files_up_to_the_cap_only() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.json");
        std::fs::write(&small, b"{}").unwrap();
        assert_eq!(read_results_file(&small, 10).unwrap(), b"{}");
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; 11]).unwrap();
        let e = read_results_file(&big, 10).unwrap_err();
        assert!(e.contains("11 bytes"), "{e}");
        let e = read_results_file(dir.path(), 10).unwrap_err();
        assert!(e.contains("folder"), "{e}");
        let e = read_results_file(&dir.path().join("absent.json"), 10).unwrap_err();
        assert!(e.starts_with("cannot read it"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn the_door_refuses_a_fifo_and_a_device_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_results_file(&fifo, RECORD_CAP).unwrap_err();
        assert!(e.contains("FIFO"), "{e}");
        // A link to /dev/zero is judged by what it leads to, and not read.
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_results_file(&zero, RECORD_CAP).unwrap_err();
        assert!(e.contains("device"), "{e}");
    }

    #[test]
    fn text_cannot_make_markup_links_images_or_includes() {
        for hostile in [
            "sweep<img src=x onerror=alert(1)><script>alert(2)</script>",
            "[x](javascript:alert(1))",
            "![](http://other.host/t.png)",
            "<http://other.host/>",
            "`code` *em* _em_ ~~s~~ | cell",
            "{{#include /etc/hostname}}",
            "a\n\nb\r\u{1b}[2J\u{7}",
            "\" onmouseover=\"alert(1)",
        ] {
            let t = text(hostile);
            for bad in [
                "<", ">", "[", "]", "`", "{", "}", "\n", "\r", "\u{1b}", "\"", "'", "*", "_", "|",
                "!",
            ] {
                assert!(!t.contains(bad), "{hostile:?} -> {t:?} holds {bad:?}");
            }
        }
        // What the reader sees is the text itself.
        assert_eq!(text("a<b & c"), "a&lt;b &amp; c");
        assert_eq!(text("[x]"), "&#91;x&#93;");
        assert_eq!(text("std · mpsc · blocking"), "std · mpsc · blocking");
    }

    #[test]
    fn format_characters_are_dropped_from_pages_and_terminals() {
        let hostile = "abc\u{202E}fed\u{2028}x\u{2029}y\u{200B}z\u{2066}w\u{FEFF}";
        for t in [text(hostile), terminal(hostile)] {
            assert!(!t.chars().any(is_format), "{t:?}");
            assert!(t.contains("abc") && t.contains("fed"), "{t:?}");
        }
        assert!(!is_format('a') && !is_format('·') && !is_format('µ') && !is_format('×'));
    }

    #[test]
    fn json_for_a_script_holds_no_directive_and_cannot_close_the_element() {
        let v = serde_json::json!({
            "machine": "{{#include /proc/self/environ}} </script><script>alert(1)</script>",
            "a \"quoted {{ key": ["\\{{", "}}", "\u{2028}&\u{202E}\u{E0041}"],
            "nested": {"inner": {"x": "}}}"}},
        });
        let json = serde_json::to_string(&v).unwrap();
        let safe = json_for_script(&json);
        for bad in ["{{", "<", ">", "&", "\u{2028}", "\u{202E}", "\u{E0041}"] {
            assert!(!safe.contains(bad), "{bad:?} in {safe}");
        }
        // It reads back as the same data.
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn terminal_text_has_no_control_characters() {
        let t = terminal("box\u{1b}]0;owned\u{7}\u{1b}[2J\nname");
        assert!(!t.chars().any(char::is_control), "{t:?}");
        assert!(t.contains("owned") && t.contains("name"));
    }

    #[test]
    fn names_are_strict() {
        for good in ["brigades", "sweep", "a-1", "release"] {
            assert!(is_name(good), "{good}");
        }
        for bad in [
            "",
            "../x",
            "a/b",
            "A",
            "a b",
            "-a",
            "a.b",
            "x\u{0}",
            "é",
            &"a".repeat(65),
        ] {
            assert!(!is_name(bad), "{bad:?}");
        }
    }

    /// Issue 35, item 1: the walk from `/` refuses a link another user made (root
    /// stands for that user by handing the link to uid 4242), follows one of ours, and
    /// takes a sticky folder as a parent when the entry below it is ours.
    #[cfg(unix)]
    #[test]
    fn folders_are_trusted_by_owner_and_mode_on_the_way_down() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let sticky = dir.path().join("shared");
        std::fs::create_dir(&sticky).unwrap();
        std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let mine = sticky.join("mine");
        let f = Folder::open(&mine, Trust::Write, true).unwrap();
        f.write_atomically("x.json", b"{}").unwrap();
        assert_eq!(f.read("x.json", 10).unwrap().unwrap(), b"{}");
        assert_eq!(f.read("absent.json", 10).unwrap(), None);
        // The sticky folder itself is not a results folder.
        let e = Folder::open(&sticky, Trust::Write, false).err().unwrap();
        assert!(e.contains("mode 1777"), "{e}");
        // A link of ours is followed; a file of ours behind a link is not read.
        let link = sticky.join("link");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        assert!(Folder::open(&link, Trust::Read, false).is_ok());
        std::os::unix::fs::symlink(mine.join("x.json"), mine.join("y.json")).unwrap();
        let e = f.read("y.json", 10).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        // A folder below that others can write is refused for reading too.
        let open = mine.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = f.child("open", false).err().unwrap();
        assert!(e.contains("mode 0777") && e.contains("open"), "{e}");
        // A regular file where a folder is wanted is named as one, below a folder and
        // on the walk from / alike.
        std::fs::write(mine.join("plain"), b"").unwrap();
        for e in [
            f.child("plain", true).err().unwrap(),
            Folder::open(&mine.join("plain"), Trust::Write, true)
                .err()
                .unwrap(),
        ] {
            assert!(e.contains("is a regular file, not a folder"), "{e}");
        }
        if my_uid() != 0 {
            eprintln!("NOT CHECKED HERE: another user's link (not root)");
            return;
        }
        std::os::unix::fs::lchown(&link, Some(4242), Some(4242)).unwrap();
        for trust in [Trust::Read, Trust::Write] {
            let e = Folder::open(&link.join("sub"), trust, true).err().unwrap();
            assert!(
                e.contains("uid 4242") && e.contains(&link.display().to_string()),
                "{e}"
            );
        }
        assert!(
            !mine.join("sub").exists(),
            "made through another user's link"
        );
        assert!(whose(0).starts_with("uid 0 (root"), "{}", whose(0));
    }
}
