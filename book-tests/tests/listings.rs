//! Issue 27: a reader can place every listing. Each `{{#include FILE:ANCHOR}}` of a
//! page stands in a code block captioned, just above it, with the file it comes from
//! (the path in the repository), so a listing is never a snippet of nowhere.

use book_tests::book_root;

#[test]
fn every_listing_is_captioned_with_its_file() {
    let include = regex::Regex::new(r"\{\{#include \.\./([^:}]+)(?::[^}]*)?\}\}").unwrap();
    let mut seen = 0;
    let mut missing = Vec::new();
    for e in std::fs::read_dir(book_root().join("src"))
        .unwrap()
        .flatten()
    {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(m) = include.captures(line) else {
                continue;
            };
            seen += 1;
            let file = &m[1];
            assert!(
                book_root().join(file).is_file(),
                "{}: {file} does not exist",
                path.display()
            );
            // The fence opens on the line above; the caption is the paragraph before it.
            let caption = format!("<p class=\"cow-listing-file\"><code>{file}</code></p>");
            let above = i
                .checked_sub(3)
                .map(|j| lines[j].trim())
                .unwrap_or_default();
            if above != caption {
                missing.push(format!("{}:{}: {file}", path.display(), i + 1));
            }
        }
    }
    assert!(seen > 0, "no listings found");
    assert!(
        missing.is_empty(),
        "listings without a caption naming their file:\n{}",
        missing.join("\n")
    );
}
