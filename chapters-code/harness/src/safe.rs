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
    use std::io::Read;
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
    if meta.len() > cap {
        return Err(format!(
            "it holds {} bytes, more than the {} MB a results file of this book may hold",
            meta.len(),
            cap >> 20
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while read stops at the cap all the same.
    (&file)
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "it grew past the {} MB a results file of this book may hold while it was read",
            cap >> 20
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
}
