//! The published site (`make publish` → `book/`) in a real browser: headless Chromium
//! driven over WebDriver (chromedriver, through the fantoccini client).
//!
//! tower-http's `ServeDir` serves the site on a loopback port bound to port 0 and notes
//! every request that finds no file. Before any script of a page runs, a script injected
//! through the DevTools protocol (`Page.addScriptToEvaluateOnNewDocument`, reached through
//! chromedriver's `goog/cdp/execute`) records console errors, uncaught exceptions, failed
//! loads, rejected promises and requests to other hosts, which it leaves pending: the site
//! must not need the network, and Chromium's resolver knows no host but the loopback one.
//! What a reader would see is then measured in the page with `execute_script`; the phone
//! width is DevTools' device emulation. Screenshots go to `test-artifacts/browser/`.
//!
//! Compiled only with the `browser` feature, and every test `#[ignore]`d, so that
//! `cargo test --workspace` needs no browser and builds no WebDriver client; run them
//! with `make test-browser` (or `cargo test -p book-tests --features browser --test it
//! -- --ignored --test-threads=1 browser::`). `COW_SITE` points them at another built site,
//! `CHROMIUM` at another browser binary and `CHROMEDRIVER` at its matching driver.

use axum::handler::HandlerWithoutStateExt;
use axum::http::{Method, StatusCode, Uri};
use book_tests::{book_root, summary_entries};
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tower_http::services::ServeDir;

/// A desktop reader's window, the same with room for a whole-page screenshot, and a phone.
const DESKTOP: (u32, u32) = (1280, 900);
const TALL: (u32, u32) = (1280, 2400);
const PHONE: (u32, u32) = (390, 2400);

/// Runs in every document before its own scripts.
const INSTRUMENT: &str = r#"(() => {
  const cow = window.__cow = { errors: [], external: [], alerts: [] };
  // A script that should never run (one smuggled in by a results file) calls alert().
  window.alert = m => { cow.alerts.push(String(m)); };
  addEventListener('error', e => {
    const t = e.target;
    cow.errors.push(t && t !== window && (t.src || t.href) ? 'failed to load ' + (t.src || t.href) : 'error: ' + e.message);
  }, true);
  addEventListener('unhandledrejection', e => cow.errors.push('unhandled rejection: ' + e.reason));
  const consoleError = console.error;
  console.error = (...args) => { cow.errors.push('console.error: ' + args.join(' ')); return consoleError.apply(console, args); };
  window.print = () => {};
  const realFetch = window.fetch;
  window.fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input.url, location.href);
    if (url.origin !== location.origin) { cow.external.push(url.href); return new Promise(() => {}); }
    return realFetch.call(window, input, init);
  };
})();"#;

/// What a reader would see on the loaded page, once its fonts are in and it has been laid out.
const REPORT: &str = r#"return (async () => {
  const cow = window.__cow;
  if (!cow) throw new Error('the instrumenting script did not run');
  await document.fonts.ready;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const main = document.querySelector('main') || document.body;
  const all = (root, sel) => Array.from(root.querySelectorAll(sel));
  const box = el => el.getBoundingClientRect();
  const visible = el => {
    const b = box(el), s = getComputedStyle(el);
    return b.width > 0 && b.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  const foreign = performance.getEntriesByType('resource').map(e => e.name)
    .filter(u => new URL(u).origin !== location.origin);
  return {
    errors: cow.errors,
    alerts: cow.alerts,
    body: document.body.innerText,
    external: cow.external.concat(foreign),
    theme: document.documentElement.className,
    h1: all(main, 'h1').map(h => h.textContent.trim()),
    text: main.innerText.length,
    column: box(main).width,
    viewport: window.innerWidth,
    page: document.scrollingElement.scrollWidth,
    // Boxes between the text and the window that are wider inside than out: mdBook's
    // .content scrolls, so a page that overflows scrolls there rather than the document.
    sideways: (() => {
      const wide = [];
      for (let el = main; el; el = el.parentElement) {
        const by = el.scrollWidth - el.clientWidth;
        if (by > 1) wide.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '') + ' by ' + by + ' px');
      }
      return wide;
    })(),
    tables: all(main, 'table').map(t => {
      const wrapper = t.parentElement.classList.contains('table-wrapper') ? t.parentElement : t;
      return {
        visible: visible(t),
        numeric: all(t, 'td').filter(td => /[0-9]/.test(td.textContent)).length,
        head: all(t, 'th').slice(0, 3).map(th => th.textContent.trim()),
        width: Math.max(box(t).width, t.scrollWidth),
        // How narrow the table can get: every cell wrapped where it may.
        least: (() => {
          const was = t.style.width;
          t.style.width = 'min-content';
          const w = box(t).width;
          t.style.width = was;
          return w;
        })(),
        box: box(wrapper).width,
        overflow: getComputedStyle(wrapper).overflowX,
      };
    }),
    plots: all(main, '.cow-plot svg').map(s => ({
      w: box(s).width, h: box(s).height, bg: getComputedStyle(s).backgroundColor,
      marks: s.querySelectorAll('polyline, circle, rect, path').length,
    })),
    provenance: all(main, '.cow-provenance').length,
    listings: all(main, 'pre > code').map(c => {
      const lines = c.textContent.split('\n').filter(l => l.trim() !== '');
      return {
        indent: lines.length ? Math.min(...lines.map(l => l.length - l.trimStart().length)) : 0,
        first: (lines[0] || '').trim(),
      };
    }),
    play_buttons: document.querySelectorAll('.play-button').length,
    published: (document.getElementById('cow-published') || {}).textContent || null,
  };
})();"#;

/// The built site the tests read.
fn site() -> PathBuf {
    std::env::var_os("COW_SITE")
        .map(PathBuf::from)
        .unwrap_or_else(|| book_root().join("book"))
}

/// `$VAR` if set, else the Debian path.
fn binary(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default))
}

fn artifacts() -> PathBuf {
    let dir = book_root().join("test-artifacts").join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The site on a loopback port, served from a thread of its own for the whole test run.
struct Site {
    base: String,
    /// Every request that found no file.
    missing: Arc<Mutex<Vec<String>>>,
}

fn served() -> &'static Site {
    static SITE: OnceLock<Site> = OnceLock::new();
    SITE.get_or_init(|| {
        let root = site();
        assert!(
            root.join("index.html").exists(),
            "no built site at {} — run `make publish` first (or set COW_SITE)",
            root.display()
        );
        serve(root)
    })
}

/// `root` on a loopback port, served from a thread of its own for the rest of the run.
fn serve(root: PathBuf) -> Site {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let missing = Arc::new(Mutex::new(Vec::new()));
    let noted = missing.clone();
    let not_found = move |uri: Uri| async move {
        noted.lock().unwrap().push(uri.to_string());
        StatusCode::NOT_FOUND
    };
    let files = ServeDir::new(root).not_found_service(not_found.into_service());
    let app = axum::Router::new().fallback_service(files);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    Site { base, missing }
}

/// A chromedriver on a port of its own choosing; killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start(bin: &Path) -> Driver {
        let mut child = Command::new(bin)
            .arg("--port=0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // "ChromeDriver was started successfully on port 38215."
        let port: u16 = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| {
                let digits = l.split("successfully on port ").nth(1)?;
                digits
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("{} did not say which port it took", bin.display()));
        std::thread::spawn(move || lines.for_each(drop));
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A DevTools command sent through chromedriver.
#[derive(Debug)]
struct Cdp(&'static str, Value);

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (Method, Option<String>) {
        let body = json!({ "cmd": self.0, "params": self.1 });
        (Method::POST, Some(body.to_string()))
    }
}

/// One browser session on the served site.
#[derive(Clone)]
struct Browser {
    client: Client,
    base: String,
}

impl Browser {
    async fn cdp(&self, cmd: &'static str, params: Value) -> Value {
        self.client
            .issue_cmd(Cdp(cmd, params))
            .await
            .unwrap_or_else(|e| panic!("DevTools {cmd}: {e}"))
    }

    fn url(&self, page: &str) -> String {
        format!("{}/{page}", self.base)
    }

    /// Loads `page` in a viewport of `size` CSS pixels with mdBook's `theme`, and measures it.
    async fn open(&self, page: &str, size: (u32, u32), theme: &str) -> Value {
        // DevTools' device emulation sets the viewport itself, exact to the pixel, and
        // at phone width with a phone's handling of <meta name="viewport">.
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": size.0, "height": size.1, "deviceScaleFactor": 1, "mobile": size.0 < 500 }),
        )
        .await;
        let set_theme =
            format!("try {{ localStorage.setItem('mdbook-theme', '{theme}'); }} catch (e) {{}}");
        let id = self
            .cdp(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": set_theme }),
            )
            .await["identifier"]
            .clone();
        let url = self.url(page);
        self.client
            .goto(&url)
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        self.cdp(
            "Page.removeScriptToEvaluateOnNewDocument",
            json!({ "identifier": id }),
        )
        .await;
        self.report(page).await
    }

    async fn report(&self, page: &str) -> Value {
        self.client
            .execute(REPORT, vec![])
            .await
            .unwrap_or_else(|e| panic!("{page}: cannot measure the page: {e}"))
    }

    async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(artifacts().join(format!("{name}.png")), png).unwrap();
    }
}

/// The browser and its driver. A missing one fails the test (these tests run only on
/// request, so a request without a browser is an error), unless `COW_SKIP_BROWSER` is
/// set: then the test passes without a browser and says so (`make test-browser` says
/// it again as its last line, where it is seen).
fn browser_or_skip() -> Option<(PathBuf, PathBuf)> {
    if let Some(why) = std::env::var_os("COW_SKIP_BROWSER") {
        eprintln!(
            "SKIPPED on purpose: COW_SKIP_BROWSER={}",
            why.to_string_lossy()
        );
        return None;
    }
    let chromium = binary("CHROMIUM", "/usr/bin/chromium");
    let driver = binary("CHROMEDRIVER", "/usr/bin/chromedriver");
    for (what, path, var) in [
        ("Chromium", &chromium, "CHROMIUM"),
        ("chromedriver", &driver, "CHROMEDRIVER"),
    ] {
        assert!(
            path.exists(),
            "no {what} at {} (apt-get install chromium chromium-driver, or set {var}; \
             COW_SKIP_BROWSER=1 skips the browser tests on purpose)",
            path.display()
        );
    }
    Some((chromium, driver))
}

/// Runs `test` against a fresh headless browser session on the served site, then ends the
/// session (and the browser) whether the test passed or panicked.
fn with_browser<F, Fut>(test: F)
where
    F: FnOnce(Browser) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some(_) = browser_or_skip() else {
        return;
    };
    with_browser_at(served().base.clone(), test);
}

/// [`with_browser`] on the site served at `base`.
fn with_browser_at<F, Fut>(base: String, test: F)
where
    F: FnOnce(Browser) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some((chromium, chromedriver)) = browser_or_skip() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let driver = Driver::start(&chromedriver);
        let profile = tempfile::tempdir().unwrap();
        let caps = json!({
            "browserName": "chrome",
            "timeouts": { "pageLoad": 60_000, "script": 30_000 },
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
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
                    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                    format!("--user-data-dir={}", profile.path().display()),
                    format!("--window-size={},{}", DESKTOP.0, DESKTOP.1),
                ],
            },
        });
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps.as_object().unwrap().clone())
            .connect(&driver.url)
            .await
            .unwrap_or_else(|e| panic!("chromedriver could not start {}: {e}", chromium.display()));
        let browser = Browser {
            client: client.clone(),
            base,
        };
        browser
            .cdp(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": INSTRUMENT }),
            )
            .await;
        let outcome = tokio::spawn(test(browser)).await;
        let _ = client.close().await;
        drop(driver);
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    });
}

fn pages() -> Vec<(String, String)> {
    summary_entries()
        .unwrap()
        .into_iter()
        .map(|(title, src)| (title, src.replace(".md", ".html")))
        .collect()
}

fn slug(page: &str) -> &str {
    page.trim_end_matches(".html")
}

fn list(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// No errors in the browser, and nothing asked of another host.
fn no_errors(page: &str, r: &Value) {
    let errors = list(&r["errors"]);
    assert!(
        errors.is_empty(),
        "{page}: errors in the browser: {errors:?}"
    );
    let external = list(&r["external"]);
    assert!(
        external.is_empty(),
        "{page}: requests to other hosts (the site must work offline): {external:?}"
    );
}

fn check_content(page: &str, r: &Value) {
    for (i, t) in list(&r["tables"]).iter().enumerate() {
        assert_eq!(t["visible"], true, "{page}: table {i} is not visible");
        assert!(
            t["numeric"].as_u64().unwrap() > 0,
            "{page}: table {i} holds no numbers"
        );
    }
    for (i, p) in list(&r["plots"]).iter().enumerate() {
        assert!(
            num(&p["w"]) > 50.0 && num(&p["h"]) > 50.0,
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

/// How a table is named in a failure: its first header cells.
fn table_name(t: &Value) -> String {
    let head: Vec<&str> = list(&t["head"]).iter().filter_map(Value::as_str).collect();
    format!("[{}]", head.join(" | "))
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn every_page_loads_cleanly_with_visible_tables_and_plots() {
    with_browser(|b| async move {
        let mut plots = 0;
        let mut tables = 0;
        for (title, page) in pages() {
            let r = b.open(&page, TALL, "light").await;
            b.screenshot(slug(&page)).await;
            no_errors(&page, &r);
            assert!(
                list(&r["h1"]).iter().any(|h| h == &title),
                "{page}: no heading {title:?}: {}",
                r["h1"]
            );
            assert!(r["text"].as_u64().unwrap() > 200, "{page}: almost no text");
            check_content(&page, &r);
            let sideways = list(&r["sideways"]);
            assert!(
                sideways.is_empty(),
                "{page}: the page scrolls sideways, inside {sideways:?}"
            );
            let src =
                std::fs::read_to_string(book_root().join("src").join(page.replace(".html", ".md")))
                    .unwrap();
            let markers = src.matches("<!-- cmdrun -0").count() as u64;
            assert!(
                r["provenance"].as_u64().unwrap() >= markers,
                "{page}: {markers} live markers but {} provenance lines visible",
                r["provenance"]
            );
            plots += list(&r["plots"]).len();
            tables += list(&r["tables"]).len();
        }
        assert!(
            plots > 0 && tables > 0,
            "no plots or no tables in the whole site"
        );
        let missing = served().missing.lock().unwrap().clone();
        assert!(
            missing.is_empty(),
            "requests that found no file: {missing:?}"
        );
        eprintln!(
            "{tables} tables and {plots} plots checked; screenshots in {}",
            artifacts().display()
        );
    });
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn sidebar_links_reach_every_chapter() {
    with_browser(|b| async move {
        let r = b.open("brigades.html", DESKTOP, "light").await;
        no_errors("brigades.html", &r);
        // From each page, click the next chapter's link in its sidebar, as a reader would.
        for (title, page) in pages() {
            let mut link = None;
            let mut hrefs = Vec::new();
            for a in b
                .client
                .find_all(Locator::Css("#sidebar a[href]"))
                .await
                .unwrap()
            {
                let href = a.prop("href").await.unwrap().unwrap_or_default();
                if href
                    .split(['?', '#'])
                    .next()
                    .unwrap()
                    .ends_with(&format!("/{page}"))
                {
                    link = Some((a, href));
                    break;
                }
                hrefs.push(href);
            }
            let (a, href) =
                link.unwrap_or_else(|| panic!("the sidebar has no link to {page}: {hrefs:?}"));
            a.click()
                .await
                .unwrap_or_else(|e| panic!("cannot click the sidebar link to {page}: {e}"));
            b.client
                .wait()
                .at_most(Duration::from_secs(30))
                .for_url(&url::Url::parse(&href).unwrap())
                .await
                .unwrap_or_else(|e| panic!("the sidebar link {href} did not load: {e}"));
            let target = b.report(&page).await;
            no_errors(&page, &target);
            assert!(
                list(&target["h1"]).iter().any(|h| h == &title),
                "sidebar link {href} does not lead to {title:?}: {}",
                target["h1"]
            );
        }
    });
}

/// A word of six letters or more that the page's source uses and no other page's does
/// (its most frequent such word), so a search for it must list the page.
fn distinctive_word(page: &str) -> String {
    let words = |src: &str| -> Vec<String> {
        let text = std::fs::read_to_string(book_root().join("src").join(src)).unwrap();
        // The page's prose: not its markers, listings or their file captions, whose
        // words (file names) the search index does not hold as words.
        let prose: Vec<&str> = text
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                !(l.starts_with("<!--")
                    || l.starts_with("{{#")
                    || l.starts_with("<p class=\"cow-listing-file\">"))
            })
            .collect();
        prose
            .join("\n")
            .split(|c: char| !c.is_ascii_alphabetic())
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

/// Opens the search bar with its button, types `word` and waits (up to 10 s) until a
/// result links to `want`; returns the results' links.
async fn search(b: &Browser, word: &str, want: &str) -> Vec<String> {
    let r = b.open("introduction.html", (1280, 1600), "light").await;
    no_errors("introduction.html", &r);
    b.client
        .find(Locator::Id("search-toggle"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.client
        .find(Locator::Id("searchbar"))
        .await
        .unwrap()
        .send_keys(word)
        .await
        .unwrap();
    let start = Instant::now();
    loop {
        let hits = b
            .client
            .execute("return Array.from(document.querySelectorAll('#searchresults a[href]'), a => a.href);", vec![])
            .await
            .unwrap();
        let hits: Vec<String> = list(&hits)
            .iter()
            .filter_map(|h| h.as_str().map(String::from))
            .collect();
        if hits.iter().any(|h| h.contains(want)) || start.elapsed() > Duration::from_secs(10) {
            return hits;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn search_finds_each_chapter_by_a_word_in_it() {
    with_browser(|b| async move {
        for (_, page) in pages() {
            let word = distinctive_word(&page);
            let hits = search(&b, &word, &format!("/{page}")).await;
            let r = b.report("search").await;
            no_errors("search", &r);
            assert!(
                hits.iter().any(|h| h.contains(&format!("/{page}"))),
                "searching for {word:?} does not find {page}: {hits:?}"
            );
            eprintln!("search: {word:?} finds {page}");
        }
        let hits = search(&b, "spinning", "/spinning-vs-sleeping.html").await;
        b.screenshot("search-spinning").await;
        assert!(!hits.is_empty(), "searching for \"spinning\" finds nothing");
    });
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn the_print_page_renders_everything() {
    with_browser(|b| async move {
        let r = b.open("print.html", TALL, "light").await;
        b.screenshot("print").await;
        no_errors("print.html", &r);
        check_content("print.html", &r);
        let h1 = list(&r["h1"]);
        for (title, _) in pages() {
            assert!(h1.iter().any(|h| h == &title), "print page lacks {title:?}");
        }
        assert!(!list(&r["plots"]).is_empty());
    });
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn phone_width_and_dark_theme_keep_plots_and_tables_readable() {
    with_browser(|b| async move {
        for (_, page) in pages() {
            let slug = slug(&page);
            let dark = b.open(&page, TALL, "navy").await;
            b.screenshot(&format!("{slug}.navy")).await;
            no_errors(&page, &dark);
            assert!(
                dark["theme"].as_str().unwrap().contains("navy"),
                "{page}: the dark theme did not apply: {}",
                dark["theme"]
            );
            check_content(&page, &dark);
            for p in list(&dark["plots"]) {
                // The plots draw dark ink, so they need their own light background.
                assert_eq!(
                    p["bg"], "rgb(255, 255, 255)",
                    "{page}: a plot on a dark background"
                );
            }

            let phone = b.open(&page, PHONE, "light").await;
            b.screenshot(&format!("{slug}.phone")).await;
            no_errors(&page, &phone);
            check_content(&page, &phone);
            let viewport = num(&phone["viewport"]);
            assert_eq!(
                viewport,
                f64::from(PHONE.0),
                "{page}: the phone viewport did not apply"
            );
            for p in list(&phone["plots"]) {
                assert!(
                    num(&p["w"]) <= viewport,
                    "{page}: a plot wider than a phone screen ({} px)",
                    p["w"]
                );
            }
            // A table wider than the screen scrolls inside its own box ...
            for t in list(&phone["tables"]) {
                if num(&t["width"]) > num(&t["box"]) + 1.0 {
                    assert!(
                        matches!(t["overflow"].as_str(), Some("auto" | "scroll")),
                        "{page}: table {} ({} px) overflows its box ({} px) without scrolling",
                        table_name(t),
                        t["width"],
                        t["box"]
                    );
                }
                assert!(
                    num(&t["box"]) <= viewport,
                    "{page}: the box of table {} is {} px wide on a {viewport} px screen",
                    table_name(t),
                    t["box"]
                );
            }
            // ... and the page itself never scrolls sideways.
            assert!(
                num(&phone["page"]) <= viewport,
                "{page}: the page scrolls sideways at phone width ({} px on a {viewport} px screen)",
                phone["page"]
            );
            let sideways = list(&phone["sideways"]);
            assert!(
                sideways.is_empty(),
                "{page}: the page scrolls sideways at phone width, inside {sideways:?}"
            );
        }
    });
}

/// At 1280 × 900, with the sidebar open as a first visit shows it, every table fits the
/// text column. Lists every table that does not, on every page.
#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn tables_fit_the_text_column_at_1280_px() {
    with_browser(|b| async move {
        let mut wide = Vec::new();
        let mut tables = 0;
        // The table that is widest when wrapped as far as it may, as a share of its column:
        // the margin the next machine's numbers have before it overflows (--nocapture).
        let mut widest = (0.0_f64, String::new());
        for (_, page) in pages() {
            let r = b.open(&page, DESKTOP, "light").await;
            b.screenshot(&format!("{}.1280x900", slug(&page))).await;
            no_errors(&page, &r);
            let column = num(&r["column"]);
            for t in list(&r["tables"]) {
                tables += 1;
                let width = num(&t["width"]);
                let least = num(&t["least"]);
                if least / column > widest.0 {
                    widest = (least / column, format!("{page}: {}", table_name(t)));
                }
                if width > column + 0.5 {
                    wide.push(format!(
                        "{page}: table {} is {width:.0} px wide, the text column {column:.0} px",
                        table_name(t)
                    ));
                }
            }
        }
        assert!(tables > 0, "no tables in the whole site");
        println!(
            "widest table, wrapped as far as it may: {:.0} % of the text column ({})",
            widest.0 * 100.0,
            widest.1
        );
        assert!(
            wide.is_empty(),
            "{} of {tables} tables are wider than the text column at {}×{}:\n  {}",
            wide.len(),
            DESKTOP.0,
            DESKTOP.1,
            wide.join("\n  ")
        );
    });
}

/// Every code listing is dedented: its lines' common leading indentation is zero.
#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn code_listings_start_at_column_0() {
    with_browser(|b| async move {
        let mut indented = Vec::new();
        let mut listings = 0;
        for (_, page) in pages() {
            let r = b.open(&page, DESKTOP, "light").await;
            no_errors(&page, &r);
            for l in list(&r["listings"]) {
                listings += 1;
                let indent = l["indent"].as_u64().unwrap();
                if indent > 0 {
                    indented.push(format!(
                        "{page}: indented by {indent}: {}",
                        l["first"].as_str().unwrap()
                    ));
                }
            }
        }
        assert!(listings > 0, "no code listings in the whole site");
        assert!(
            indented.is_empty(),
            "{} of {listings} code listings do not start at column 0:\n  {}",
            indented.len(),
            indented.join("\n  ")
        );
    });
}

/// The listings are the measured code, not playground examples: no Play buttons
/// (book.toml: `[output.html.playground] runnable = false`).
#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn no_play_buttons_anywhere() {
    with_browser(|b| async move {
        let mut found = Vec::new();
        for page in pages()
            .into_iter()
            .map(|(_, p)| p)
            .chain(["print.html".to_string()])
        {
            let r = b.open(&page, DESKTOP, "light").await;
            no_errors(&page, &r);
            let n = r["play_buttons"].as_u64().unwrap();
            if n > 0 {
                found.push(format!("{page}: {n}"));
            }
        }
        assert!(
            found.is_empty(),
            "Play buttons on the pages: {}",
            found.join(", ")
        );
    });
}

#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn the_published_front_page_names_the_measuring_machine_and_offers_the_results() {
    with_browser(|b| async move {
        let r = b.open("index.html", (1280, 1200), "light").await;
        b.screenshot("front-page").await;
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
        assert_eq!(doc["format"], "cost-of-waiting-results");
        assert!(!list(&doc["records"]).is_empty());
        assert!(!list(&doc["figures"]).is_empty());
    });
}

/// The Compare machines page reads a results file chosen in its file input, with no
/// request made: the published results against themselves show no difference; a copy
/// with one figure moved shows that one beyond both intervals; an old file is refused.
#[test]
#[ignore = "needs Chromium and a published site: make test-browser"]
fn the_compare_page_reads_a_chosen_results_file() {
    let published = site().join("cost-of-waiting-results.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&published).unwrap()).unwrap();
    let figures = list(&doc["figures"]).len();
    assert!(
        figures > 0,
        "the published results hold no headline figures"
    );
    let dir = tempfile::tempdir().unwrap();
    // The first figure moved well clear of its own interval.
    let mut doubled = doc.clone();
    let clear = num(&doc["figures"][0]["hi"]) * 3.0 + 1.0;
    for (key, k) in [("lo", 1.0), ("median", 1.1), ("hi", 1.2)] {
        doubled["figures"][0][key] = json!(clear * k);
    }
    let doubled_path = dir.path().join("doubled.json");
    std::fs::write(&doubled_path, doubled.to_string()).unwrap();
    let old_path = dir.path().join("old.json");
    std::fs::write(
        &old_path,
        r#"{"book": "The Cost of Waiting", "results": []}"#,
    )
    .unwrap();
    with_browser(move |b| async move {
        let page = "compare-machines.html";
        let choose = |path: PathBuf| {
            let b = b.clone();
            async move {
                b.open(page, DESKTOP, "light").await;
                let input = b
                    .client
                    .find(Locator::Id("cow-compare-file"))
                    .await
                    .unwrap();
                input.send_keys(&path.display().to_string()).await.unwrap();
                let start = Instant::now();
                loop {
                    let text = b
                        .client
                        .find(Locator::Id("cow-compare-result"))
                        .await
                        .unwrap()
                        .text()
                        .await
                        .unwrap();
                    if !text.contains("No file chosen") {
                        let r = b.report(page).await;
                        no_errors(page, &r);
                        return text;
                    }
                    assert!(
                        start.elapsed() < Duration::from_secs(20),
                        "the page never read {}",
                        path.display()
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let same = choose(published.clone()).await;
        assert_eq!(same.matches("1.00×").count(), figures, "{same}");
        // Against itself a figure is *about the same* where its own interval lies within
        // the threshold, else unresolved: the harness's rule (`verdict_with`), which the
        // page's script ports (the sixth review found the two disagreeing).
        let narrow = list(&doc["figures"])
            .iter()
            .filter(|f| {
                num(&f["rounds"]) >= f64::from(harness::stats::VERDICT_MIN_ROUNDS)
                    && harness::stats::relative_difference(num(&f["lo"]), num(&f["hi"]))
                        <= harness::stats::threshold()
            })
            .count();
        assert_eq!(same.matches("about the same").count(), narrow, "{same}");
        assert_eq!(
            same.matches("no clear difference").count(),
            figures - narrow,
            "{same}"
        );
        b.screenshot("compare-machines").await;
        let other = choose(doubled_path).await;
        assert!(other.contains("beyond both intervals"), "{other}");
        let old = choose(old_path).await;
        assert!(old.contains("older version of the book"), "{old}");
        // Issue 19: an unknown unit was shown without one and compared; a median given
        // as a string showed "NaN×". Both files are refused, saying why.
        let hostile = book_root().join("book-tests/tests/fixtures/hostile");
        for (file, why) in book_tests::HOSTILE_COMPARE_FILES {
            let text = choose(hostile.join(file)).await;
            assert!(
                text.starts_with("Cannot compare") && text.contains(why) && !text.contains("NaN"),
                "{file}: {text}"
            );
        }
    });
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

/// Issue 28: the whole book built from a results folder whose every record carries
/// hostile text, and whose records of one chapter carry `{{#include FILE}}` and
/// `</script><script>alert(…)</script>` in every text field (`tests/hostile.rs` builds it
/// into `target/book-tests/hostile-html`; `make test-browser` builds it first when it is
/// missing). Every page loads in Chromium without an error, no smuggled script runs
/// (`alert` is recorded, never shown), the included file's content is on no page, and
/// the hostile text is there as text.
#[test]
#[ignore = "needs Chromium and the hostile build of tests/hostile.rs: make test-browser"]
fn a_book_built_from_hostile_results_runs_no_smuggled_script() {
    let root = book_tests::target_dir()
        .join("book-tests")
        .join("hostile-html");
    assert!(
        root.join("index.html").exists(),
        "no hostile build at {}: run `cargo test -p book-tests --test it hostile::` first \
         (make test-browser does)",
        root.display()
    );
    let mut pages: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".html") && n != "404.html" && n != "toc.html")
        .collect();
    pages.sort();
    assert!(pages.len() > 5, "{pages:?}");
    let site = serve(root);
    with_browser_at(site.base.clone(), |b| async move {
        let mut hostile_text_seen = 0;
        for page in &pages {
            let r = b.open(page, DESKTOP, "light").await;
            no_errors(page, &r);
            let alerts = list(&r["alerts"]);
            assert!(
                alerts.is_empty(),
                "{page}: a smuggled script ran: {alerts:?}"
            );
            let body = r["body"].as_str().unwrap_or_default();
            assert!(
                !body.contains("cow-secret-"),
                "{page}: an included file's content is on the page"
            );
            if body.contains("cow-hostile") {
                hostile_text_seen += 1;
            }
        }
        assert!(
            hostile_text_seen > 0,
            "no page shows the hostile text as text"
        );
        b.screenshot("hostile-compare-machines").await;
    });
}
