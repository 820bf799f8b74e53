//! Headless Chromium for the viewer's browser tests and benchmark: a loopback file server for
//! `dist/` and bundles, chromedriver, and a WebDriver session with the flags this network needs.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

/// The committed, built viewer.
pub(crate) fn dist_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist")
}

/// Where screenshots are kept: `target/viewer-screenshots/` of the workspace (or of
/// `CARGO_TARGET_DIR`).
pub(crate) fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("viewer-screenshots");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Serves `dist/` at `/` and `bundles` at `/bundles/` on 127.0.0.1, one thread per connection;
/// a file missing from `dist/` is looked up in `bundles` too (for pages made by a test). Any
/// site may fetch from it (`Access-Control-Allow-Origin: *`), as from a public bucket.
pub(crate) struct FileServer {
    pub port: u16,
}

impl FileServer {
    pub(crate) fn start(dist: PathBuf, bundles: PathBuf) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local addr").port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (dist, bundles) = (dist.clone(), bundles.clone());
                std::thread::spawn(move || serve(stream, &dist, &bundles));
            }
        });
        FileServer { port }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!(
            "http://127.0.0.1:{}/{}",
            self.port,
            path.trim_start_matches('/')
        )
    }
}

fn serve(mut stream: TcpStream, dist: &Path, bundles: &Path) {
    let mut line = String::new();
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    if reader.read_line(&mut line).is_err() {
        return;
    }
    // Drain the headers.
    let mut h = String::new();
    while reader.read_line(&mut h).map(|n| n > 2).unwrap_or(false) {
        h.clear();
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or("/");
    let file = match path.strip_prefix("/bundles/") {
        Some(rest) => bundles.join(rest),
        None if path == "/" => dist.join("index.html"),
        None => {
            let rel = path.trim_start_matches('/');
            Some(dist.join(rel))
                .filter(|p| p.is_file())
                .unwrap_or_else(|| bundles.join(rel))
        }
    };
    let (status, body) = match std::fs::read(&file) {
        Ok(b) if !path.contains("..") => ("200 OK", b),
        _ => ("404 Not Found", b"not found".to_vec()),
    };
    let mime = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// Chromium and chromedriver, found on `PATH` (or `LLMSWEEP_CHROMIUM`, `LLMSWEEP_CHROMEDRIVER`).
pub(crate) struct Browser {
    pub chromium: PathBuf,
    pub chromedriver: PathBuf,
}

impl Browser {
    /// The browser, or `None` (after saying why) when it is missing and not required. With
    /// `LLMSWEEP_REQUIRE_BROWSER=1` a missing browser fails the test.
    pub(crate) fn find() -> Option<Browser> {
        let found = find_exe(
            "LLMSWEEP_CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
        )
        .zip(find_exe("LLMSWEEP_CHROMEDRIVER", &["chromedriver"]));
        match found {
            Some((chromium, chromedriver)) => Some(Browser {
                chromium,
                chromedriver,
            }),
            None if std::env::var("LLMSWEEP_REQUIRE_BROWSER").as_deref() == Ok("1") => {
                panic!(
                    "LLMSWEEP_REQUIRE_BROWSER=1 but chromium or chromedriver is missing: run .ci/install-viewer-tools.sh"
                )
            }
            None => {
                eprintln!(
                    "skipping browser test: chromium or chromedriver not found (set LLMSWEEP_REQUIRE_BROWSER=1 to fail instead)"
                );
                None
            }
        }
    }
}

fn find_exe(var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// A chromedriver process and a session with a fresh profile; both end when dropped.
pub(crate) struct Session {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Drop for Session {
    /// Ends chromedriver and the browser it started: they share a process group of their own,
    /// so a test that panicked before [`Session::close`] leaves no browser behind.
    fn drop(&mut self) {
        let group = format!("-{}", self.driver.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Chromium's flags here: headless, and quiet on the network (no background connections).
pub(crate) const CHROMIUM_FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

impl Session {
    /// Starts chromedriver and a browser window of `size` CSS pixels; `extra` flags are added
    /// (e.g. `--force-dark-mode`).
    pub(crate) async fn start(b: &Browser, size: (u32, u32), extra: &[&str]) -> Session {
        let port = free_port();
        let driver = Command::new(&b.chromedriver)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        wait_for_port(port, Duration::from_secs(20));
        let profile = tempfile::tempdir().expect("profile dir");
        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.push(format!("--window-size={},{}", size.0, size.1));
        args.push("--force-device-scale-factor=1".into());
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": b.chromium, "args": args }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("WebDriver session starts");
        Session {
            client,
            driver,
            _profile: profile,
        }
    }

    /// Ends the WebDriver session (the browser quits), then chromedriver.
    pub(crate) async fn close(self) {
        let _ = self.client.clone().close().await;
    }

    /// Runs `script` (a function body) and returns its value.
    pub(crate) async fn js(&self, script: &str) -> serde_json::Value {
        self.js_with(script, Vec::new()).await
    }

    /// Runs `script` with `arguments` and returns its value.
    pub(crate) async fn js_with(
        &self,
        script: &str,
        args: Vec<serde_json::Value>,
    ) -> serde_json::Value {
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Polls `script` (an expression) until it is truthy; panics with `what` after `timeout`.
    pub(crate) async fn wait(
        &self,
        what: &str,
        script: &str,
        timeout: Duration,
    ) -> serde_json::Value {
        let start = Instant::now();
        loop {
            let v = self.js(&format!("return ({script});")).await;
            if !(v.is_null() || v == json!(false) || v == json!(0) || v == json!("")) {
                return v;
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for {what} ({script})");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Saves a screenshot of the window as `<name>.png` in [`screenshot_dir`].
    pub(crate) async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("screenshot");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write screenshot");
        path
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn wait_for_port(port: u16, timeout: Duration) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < timeout,
            "chromedriver did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Counts pixels of every `canvas` matching `selector` that differ from the canvas's corner
/// pixel (its background): `[[slug, count], …]`.
pub(crate) const INKED_PIXELS_JS: &str = r#"
    return [...document.querySelectorAll(arguments[0] || 'canvas')].map(c => {
        const ctx = c.getContext('2d');
        const d = ctx.getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) {
            if (Math.abs(d[i] - d[0]) + Math.abs(d[i+1] - d[1]) + Math.abs(d[i+2] - d[2]) > 40) n++;
        }
        return [c.closest('figure').dataset.chart, n];
    });
"#;

/// Every Content-Security-Policy violation of the page so far, buffered ones from before the
/// call included: `["directive blocked-url", …]`.
pub(crate) const CSP_VIOLATIONS_JS: &str = r#"
    return new Promise((done) => {
        const seen = [];
        const take = (rs) => seen.push(...rs.map(r => r.body.effectiveDirective + ' ' + r.body.blockedURL));
        const o = new ReportingObserver(take, { types: ['csp-violation'], buffered: true });
        o.observe();
        setTimeout(() => { take(o.takeRecords()); o.disconnect(); done(seen); }, 300);
    });
"#;

/// Appends an inline script that sets `window.injected`, and says whether the page's policy
/// refused it: `[ran, violated directive or null]`.
pub(crate) const INJECT_INLINE_SCRIPT_JS: &str = r#"
    return new Promise((done) => {
        let violated = null;
        document.addEventListener('securitypolicyviolation', (e) => { violated = e.effectiveDirective; });
        const s = document.createElement('script');
        s.textContent = 'window.injected = true';
        document.body.append(s);
        setTimeout(() => done([window.injected === true, violated]), 300);
    });
"#;
