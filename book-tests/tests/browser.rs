//! The published site (`make publish` → `book/`) in a real browser: headless Chromium
//! from the Debian packages, driven through its command line.
//!
//! A small HTTP server on a loopback port (bound to port 0) serves the site and slips
//! one script into the head of every HTML page. The script records console errors,
//! uncaught exceptions, failed resource loads and rejected promises from the first
//! moment, and after the page has loaded writes a report of what a reader would see
//! (tables and their numbers, plot sizes, sidebar links, search results, theme) into
//! the page, where `--dump-dom` picks it up. Screenshots go to `test-artifacts/browser/`.
//!
//! Every test is `#[ignore]`d so that `cargo test --workspace` needs no browser; run
//! them with `make test-browser` (or `cargo test -p book-tests --test browser --
//! --ignored`). `COW_SITE` points them at another built site; `CHROMIUM` at another
//! browser binary.

use book_tests::{book_root, summary_entries};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

const INSTRUMENT: &str = r#"<script>(function () {
  var q = new URLSearchParams(location.search);
  if (q.get('cow-theme')) { try { localStorage.setItem('mdbook-theme', q.get('cow-theme')); } catch (e) {} }
  var errors = [];
  window.addEventListener('error', function (e) {
    var t = e.target;
    errors.push(t && t !== window && (t.src || t.href) ? 'failed to load ' + (t.src || t.href) : 'error: ' + e.message);
  }, true);
  window.addEventListener('unhandledrejection', function (e) { errors.push('unhandled rejection: ' + e.reason); });
  var ce = console.error;
  console.error = function () { errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); return ce.apply(console, arguments); };
  window.print = function () {};
  // Hermetic: requests to other hosts (the Rust playground's crate list) are recorded
  // and left pending instead of depending on the network.
  var external = [];
  var realFetch = window.fetch;
  window.fetch = function (input, init) {
    var url = new URL(typeof input === 'string' ? input : input.url, location.href);
    if (url.origin !== location.origin) { external.push(url.href); return new Promise(function () {}); }
    return realFetch.call(window, input, init);
  };
  function box(el) { var r = el.getBoundingClientRect(); return { w: r.width, h: r.height }; }
  function visible(el) { var b = box(el); var s = getComputedStyle(el); return b.w > 0 && b.h > 0 && s.visibility !== 'hidden' && s.display !== 'none'; }
  function report() {
    var main = document.querySelector('main') || document.body;
    var r = {
      errors: errors,
      external: external,
      title: document.title,
      theme: document.documentElement.className,
      h1: Array.prototype.map.call(main.querySelectorAll('h1'), function (h) { return h.textContent.trim(); }),
      text: main.innerText.length,
      tables: Array.prototype.map.call(main.querySelectorAll('table'), function (t) {
        var cells = Array.prototype.filter.call(t.querySelectorAll('td'), function (td) { return /[0-9]/.test(td.textContent); });
        return { visible: visible(t), numeric: cells.length, rows: t.rows.length };
      }),
      plots: Array.prototype.map.call(main.querySelectorAll('.cow-plot svg'), function (s) {
        var b = box(s); return { w: b.w, h: b.h, bg: getComputedStyle(s).backgroundColor, marks: s.querySelectorAll('polyline, circle, rect, path').length };
      }),
      provenance: main.querySelectorAll('.cow-provenance').length,
      sidebar: Array.prototype.map.call(document.querySelectorAll('.sidebar a[href]'), function (a) { return a.href; }),
      search: Array.prototype.map.call(document.querySelectorAll('#searchresults a[href]'), function (a) { return a.href; }),
      published: (document.getElementById('cow-published') || {}).textContent || null,
      width: { page: document.documentElement.scrollWidth, window: window.innerWidth }
    };
    var pre = document.createElement('pre');
    pre.id = 'cow-report';
    pre.textContent = 'COW' + 'REPORT:' + encodeURIComponent(JSON.stringify(r)) + ':COW' + 'REPORT';
    document.body.appendChild(pre);
  }
  window.addEventListener('load', function () { setTimeout(report, 1500); });
})();</script>"#;

/// A phone-sized frame around a page (see `serve_one`).
const PHONE: &str = r#"<!doctype html><html><body style="margin:0;background:#777">
<iframe id="f" src="/PAGE" style="width:390px;height:2400px;border:0;background:#fff"></iframe>
<script>
var f = document.getElementById('f');
function poll() {
  var d = f.contentDocument, pre = d && d.getElementById('cow-report');
  if (pre) { var p = document.createElement('pre'); p.textContent = pre.textContent; document.body.appendChild(p); }
  else setTimeout(poll, 200);
}
poll();
</script></body></html>"#;

/// The built site the tests read.
fn site() -> PathBuf {
    std::env::var_os("COW_SITE")
        .map(PathBuf::from)
        .unwrap_or_else(|| book_root().join("book"))
}

fn chromium() -> Option<PathBuf> {
    let p = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    p.exists().then_some(p)
}

fn artifacts() -> PathBuf {
    let dir = book_root().join("test-artifacts").join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Server {
    port: u16,
    /// Every request that found no file.
    missing: Arc<Mutex<Vec<String>>>,
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css",
        "js" => "text/javascript",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}

fn serve_one(mut stream: TcpStream, root: &Path, missing: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let decoded = path.replace("%20", " ");
    let rel = decoded.trim_start_matches('/');
    let mut file = root.join(if rel.is_empty() { "index.html" } else { rel });
    if file.is_dir() {
        file = file.join("index.html");
    }
    let inside = !rel.split('/').any(|p| p == "..");
    // Headless Chromium will not make its window narrower than 500 px; a phone-sized
    // iframe gives the page a real 390 px viewport, and its report is copied out.
    if let Some(page) = rel.strip_prefix("__phone/") {
        let body = PHONE.replace("PAGE", page).into_bytes();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(&body);
        return;
    }
    let (status, body, ctype) = match std::fs::read(&file) {
        Ok(bytes) if inside => {
            let body = if file.extension().is_some_and(|e| e == "html") {
                let html = String::from_utf8_lossy(&bytes);
                html.replacen("<head>", &format!("<head>{INSTRUMENT}"), 1)
                    .into_bytes()
            } else {
                bytes
            };
            ("200 OK", body, content_type(&file))
        }
        _ => {
            missing.lock().unwrap().push(target.clone());
            ("404 Not Found", b"not found".to_vec(), "text/plain")
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let root = site();
        assert!(
            root.join("index.html").exists(),
            "no built site at {} — run `make publish` first (or set COW_SITE)",
            root.display()
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let missing = Arc::new(Mutex::new(Vec::new()));
        let m = missing.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, m) = (root.clone(), m.clone());
                std::thread::spawn(move || serve_one(stream, &root, &m));
            }
        });
        Server { port, missing }
    })
}

/// Skips (with a message) when there is no browser; these tests only run on request.
fn browser_or_skip() -> Option<PathBuf> {
    let b = chromium();
    if b.is_none() {
        eprintln!(
            "SKIPPED: no Chromium at /usr/bin/chromium (apt-get install chromium chromium-driver, or set CHROMIUM)"
        );
    }
    b
}

/// Loads `page` (a path with optional query) in headless Chromium at a window size,
/// optionally saving a screenshot, and returns the page's report.
fn visit(page: &str, size: (u32, u32), shot: Option<&str>) -> Value {
    let browser = chromium().expect("checked by the caller");
    let profile = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/{page}", server().port);
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg(format!("--window-size={},{}", size.0, size.1));
    if let Some(name) = shot {
        cmd.arg(format!(
            "--screenshot={}",
            artifacts().join(format!("{name}.png")).display()
        ));
    }
    cmd.arg("--dump-dom").arg(&url);
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish loading {url} within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dom = reader.join().unwrap();
    let encoded = dom
        .split("COWREPORT:")
        .nth(1)
        .and_then(|s| s.split(":COWREPORT").next())
        .unwrap_or_else(|| panic!("{url}: no report in the page (did its scripts run?)"));
    serde_json::from_str(&percent_decode(encoded)).expect("a JSON report")
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn pages() -> Vec<(String, String)> {
    summary_entries()
        .unwrap()
        .into_iter()
        .map(|(title, src)| (title, src.replace(".md", ".html")))
        .collect()
}

fn no_errors(page: &str, r: &Value) {
    let errors = r["errors"].as_array().unwrap();
    assert!(
        errors.is_empty(),
        "{page}: errors in the browser: {errors:?}"
    );
}

fn check_content(page: &str, r: &Value) {
    for (i, t) in r["tables"].as_array().unwrap().iter().enumerate() {
        assert_eq!(t["visible"], true, "{page}: table {i} is not visible");
        assert!(
            t["numeric"].as_u64().unwrap() > 0,
            "{page}: table {i} holds no numbers"
        );
    }
    for (i, p) in r["plots"].as_array().unwrap().iter().enumerate() {
        assert!(
            p["w"].as_f64().unwrap() > 50.0 && p["h"].as_f64().unwrap() > 50.0,
            "{page}: plot {i} renders at {}×{}",
            p["w"],
            p["h"]
        );
        assert!(
            p["marks"].as_u64().unwrap() > 0,
            "{page}: plot {i} is empty"
        );
    }
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn every_page_loads_cleanly_with_visible_tables_and_plots() {
    if browser_or_skip().is_none() {
        return;
    }
    let mut plots = 0;
    let mut tables = 0;
    for (title, page) in pages() {
        let r = visit(&page, (1280, 2400), Some(page.trim_end_matches(".html")));
        no_errors(&page, &r);
        assert!(
            r["h1"].as_array().unwrap().iter().any(|h| h == &title),
            "{page}: no heading {title:?}: {}",
            r["h1"]
        );
        assert!(r["text"].as_u64().unwrap() > 200, "{page}: almost no text");
        check_content(&page, &r);
        let src =
            std::fs::read_to_string(book_root().join("src").join(page.replace(".html", ".md")))
                .unwrap();
        let markers = src.matches("<!-- cmdrun -0").count() as u64;
        assert!(
            r["provenance"].as_u64().unwrap() >= markers,
            "{page}: {markers} live markers but {} provenance lines visible",
            r["provenance"]
        );
        plots += r["plots"].as_array().unwrap().len();
        tables += r["tables"].as_array().unwrap().len();
    }
    assert!(
        plots > 0 && tables > 0,
        "no plots or no tables in the whole site"
    );
    let missing = server().missing.lock().unwrap().clone();
    assert!(
        missing.is_empty(),
        "requests that found no file: {missing:?}"
    );
    eprintln!(
        "{tables} tables and {plots} plots checked; screenshots in {}",
        artifacts().display()
    );
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn sidebar_links_reach_every_chapter() {
    if browser_or_skip().is_none() {
        return;
    }
    let r = visit("brigades.html", (1280, 900), None);
    no_errors("brigades.html", &r);
    let links: Vec<String> = r["sidebar"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    for (title, page) in pages() {
        let href = links
            .iter()
            .find(|l| {
                l.split(['?', '#'])
                    .next()
                    .unwrap()
                    .ends_with(&format!("/{page}"))
            })
            .unwrap_or_else(|| panic!("the sidebar has no link to {page}: {links:?}"));
        // Follow it as a reader would and check that it lands on that chapter.
        let path = href.splitn(4, '/').nth(3).unwrap();
        let target = visit(path, (1280, 900), None);
        no_errors(path, &target);
        assert!(
            target["h1"].as_array().unwrap().iter().any(|h| h == &title),
            "sidebar link {href} does not lead to {title:?}"
        );
    }
}

/// A word of six letters or more that the page's source uses and no other page's does
/// (its most frequent such word), so a search for it must list the page.
fn distinctive_word(page: &str) -> String {
    let words = |src: &str| -> Vec<String> {
        let text = std::fs::read_to_string(book_root().join("src").join(src)).unwrap();
        text.split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() >= 6)
            .map(str::to_lowercase)
            .collect()
    };
    let me = page.replace(".html", ".md");
    let others: std::collections::HashSet<String> = pages()
        .iter()
        .map(|(_, p)| p.replace(".html", ".md"))
        .filter(|p| *p != me)
        .flat_map(|p| words(&p))
        .collect();
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for w in words(&me).into_iter().filter(|w| !others.contains(w)) {
        *counts.entry(w).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(w, _)| w)
        .unwrap_or_else(|| panic!("{page} uses no word of its own"))
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn search_finds_each_chapter_by_a_word_in_it() {
    if browser_or_skip().is_none() {
        return;
    }
    for (_, page) in pages() {
        let word = distinctive_word(&page);
        let r = visit(
            &format!("introduction.html?search={word}"),
            (1280, 1600),
            None,
        );
        no_errors("search", &r);
        let hits: Vec<&str> = r["search"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap())
            .collect();
        assert!(
            hits.iter().any(|h| h.contains(&format!("/{page}"))),
            "searching for {word:?} does not find {page}: {hits:?}"
        );
        eprintln!("search: {word:?} finds {page}");
    }
    let shot = visit(
        "introduction.html?search=spinning",
        (1280, 1600),
        Some("search-spinning"),
    );
    assert!(!shot["search"].as_array().unwrap().is_empty());
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn the_print_page_renders_everything() {
    if browser_or_skip().is_none() {
        return;
    }
    let r = visit("print.html", (1280, 2400), Some("print"));
    no_errors("print.html", &r);
    check_content("print.html", &r);
    let h1 = r["h1"].as_array().unwrap();
    for (title, _) in pages() {
        assert!(h1.iter().any(|h| h == &title), "print page lacks {title:?}");
    }
    assert!(!r["plots"].as_array().unwrap().is_empty());
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn phone_width_and_dark_theme_keep_plots_readable() {
    if browser_or_skip().is_none() {
        return;
    }
    for (_, page) in pages() {
        let slug = page.trim_end_matches(".html");
        let dark = visit(
            &format!("{page}?cow-theme=navy"),
            (1280, 2400),
            Some(&format!("{slug}.navy")),
        );
        no_errors(&page, &dark);
        assert!(
            dark["theme"].as_str().unwrap().contains("navy"),
            "{page}: the dark theme did not apply: {}",
            dark["theme"]
        );
        check_content(&page, &dark);
        for p in dark["plots"].as_array().unwrap() {
            // The plots draw dark ink, so they need their own light background.
            assert_eq!(
                p["bg"], "rgb(255, 255, 255)",
                "{page}: a plot on a dark background"
            );
        }
        let phone = visit(
            &format!("__phone/{page}"),
            (500, 2400),
            Some(&format!("{slug}.phone")),
        );
        no_errors(&page, &phone);
        check_content(&page, &phone);
        for p in phone["plots"].as_array().unwrap() {
            assert!(
                p["w"].as_f64().unwrap() <= 390.0,
                "{page}: a plot wider than a phone screen ({}; page {})",
                p["w"],
                phone["width"]
            );
        }
        let w = &phone["width"];
        assert!(
            w["page"].as_f64().unwrap() <= w["window"].as_f64().unwrap() + 1.0,
            "{page}: the page scrolls sideways at phone width ({w})"
        );
    }
}

#[test]
#[ignore = "needs a published site: make test-browser"]
fn the_published_front_page_names_the_measuring_machine_and_offers_the_results() {
    if browser_or_skip().is_none() {
        return;
    }
    let r = visit("index.html", (1280, 1200), Some("front-page"));
    no_errors("index.html", &r);
    let stamp = r["published"]
        .as_str()
        .unwrap_or_else(|| panic!("the front page does not say which machine measured it"));
    assert!(
        stamp.contains("Measured on") && stamp.contains("rustc"),
        "{stamp}"
    );
    let json = std::fs::read_to_string(site().join("cost-of-waiting-results.json")).unwrap();
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert!(!doc["results"].as_array().unwrap().is_empty());
}

/// Every relative link and fragment in the published HTML points at something that exists.
#[test]
#[ignore = "needs a published site: make test-browser"]
fn internal_links_of_the_published_site_resolve() {
    let root = site();
    assert!(
        root.join("index.html").exists(),
        "no site at {}",
        root.display()
    );
    let href_re = regex::Regex::new(r#"(?:href|src)="([^"]+)""#).unwrap();
    let id_re = regex::Regex::new(r#"id="([^"]+)""#).unwrap();
    let mut checked = 0;
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let f = e.path();
        if f.extension().is_none_or(|x| x != "html") {
            continue;
        }
        let html = std::fs::read_to_string(&f).unwrap();
        for c in href_re.captures_iter(&html) {
            let href = &c[1];
            if href.contains("://")
                || href.starts_with("data:")
                || href.starts_with("mailto:")
                || href.starts_with("javascript:")
            {
                continue;
            }
            let (path, frag) = href.split_once('#').unwrap_or((href, ""));
            let path = path.split('?').next().unwrap();
            let target = if path.is_empty() {
                f.clone()
            } else if let Some(abs) = path.strip_prefix('/') {
                root.join(abs)
            } else {
                f.parent().unwrap().join(path)
            };
            assert!(target.exists(), "{}: {href} points nowhere", f.display());
            if !frag.is_empty() && target.extension().is_some_and(|x| x == "html") {
                let t = std::fs::read_to_string(&target).unwrap();
                assert!(
                    id_re.captures_iter(&t).any(|c| &c[1] == frag),
                    "{}: {href}: no id {frag}",
                    f.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} links found");
}
