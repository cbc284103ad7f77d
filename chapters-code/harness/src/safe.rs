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

/// Characters that may start or end Markdown (or mdbook) syntax in running text.
/// (Only mid-line: [`text`] never leaves a newline, so line-start syntax such as `#` or
/// `-` cannot begin.)
/// Parentheses stay: without `[`, `]` and `<` they cannot make a link or an image.
const MARKDOWN_SPECIALS: &[char] = &['\\', '`', '*', '_', '[', ']', '!', '|', '~', '{', '}'];

/// `s` escaped for a page: safe as HTML text, as an HTML attribute value in quotes, and
/// as Markdown inline text (it shows exactly the characters of `s`, minus control
/// characters, which become spaces).
pub fn text(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
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

/// `s` for a terminal: control characters become spaces (no escape sequence from a
/// file reaches the reader's terminal).
pub fn terminal(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
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
