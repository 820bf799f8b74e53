//! What the terminal shows of a run: [`Printer`] turns the engine's events into the target's
//! lines, a table per sweep with a row per point, a progress bar for the running point and notes.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{FlagKind, Point, PointStatus, Summary, Sweep, SweepKind};
use llmsweep_shared::shorten;

use crate::load::events::{Event, Sink};
use crate::output::table::{self, Column};
use llmsweep_shared::charts::axis::{fixed, steady_cell};

/// A table column: header, width (a cell wider than the width widens only its own row, so
/// nothing is ever cut), and whether the narrow table shows it.
struct Col(&'static str, usize, Show);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Show {
    Always,
    /// In the narrow table only when the GPUs are read (tokens per joule).
    WithGpu,
    /// In the narrow table only when the server says it decodes speculatively (acceptance).
    WithSpec,
    WideOnly,
}

use Show::{Always, WideOnly, WithGpu, WithSpec};

const THROUGHPUT: &[Col] = &[
    Col("C", 4, Always),
    Col("ok/fail", 7, Always),
    Col("agg tok/s", 10, WideOnly),
    Col("steady tok/s", 14, Always),
    Col("per-user tok/s", 14, Always),
    Col("TTFT p50/p99 s", 14, Always),
    Col("ITL p50 ms", 11, WideOnly),
    Col("TTFT mean/p90 s", 15, WideOnly),
    Col("TPOT mean/p90 ms", 16, WideOnly),
    Col("e2e mean/p90 s", 14, WideOnly),
    Col("peak queue", 10, WideOnly),
    Col("accept", 6, WithSpec),
    Col("tokens got/asked", 17, WideOnly),
    Col("wall s", 6, Always),
    Col("tok/J", 6, WithGpu),
];

const CONTEXT: &[Col] = &[
    Col("input", 7, Always),
    Col("C", 3, Always),
    Col("ok/fail", 8, Always),
    Col("TTFT p50 s", 11, Always),
    Col("prefill tok/s", 14, Always),
    Col("decode tok/s", 13, Always),
    Col("e2e p50 s", 10, WideOnly),
    Col("server input", 13, WideOnly),
    Col("TTFT mean/p90 s", 15, WideOnly),
];

const RATE: &[Col] = &[
    Col("req/s asked", 11, Always),
    Col("got", 7, Always),
    Col("ok/fail", 7, Always),
    Col("tok/s", 9, Always),
    Col("TTFT p50/p99 s", 15, Always),
    Col("TPOT p50 ms", 11, Always),
    Col("e2e p50/p99 s", 14, WideOnly),
    Col("TTFT mean/p90 s", 15, WideOnly),
    Col("TPOT mean/p90 ms", 16, WideOnly),
    Col("e2e mean/p90 s", 14, WideOnly),
    Col("lag p99 ms", 10, Always),
    Col("in flight max/mean", 18, WideOnly),
    Col("goodput", 14, Always),
];

/// Which columns the live tables show: the narrow table fits a 100-column terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Width {
    /// The columns that fit 100 characters, with tokens per joule when the GPUs are read
    /// (`gpu`) and the acceptance length when the server decodes speculatively (`spec`).
    Narrow { gpu: bool, spec: bool },
    /// Every column (`--wide`, or a terminal wide enough for them).
    Wide,
}

impl Default for Width {
    fn default() -> Width {
        Width::NARROW
    }
}

impl Width {
    /// The narrow table with no optional column.
    pub(crate) const NARROW: Width = Width::Narrow {
        gpu: false,
        spec: false,
    };

    /// Wide when asked, or when standard output is a terminal wide enough for every column;
    /// `gpu`: the GPUs are read, so tokens per joule is worth a column; `spec`: the server
    /// decodes speculatively, so its acceptance length is.
    pub(crate) fn choose(wide: bool, gpu: bool, spec: bool) -> Width {
        let fits = console::Term::stdout()
            .size_checked()
            .is_some_and(|(_, cols)| usize::from(cols) >= table_width(THROUGHPUT, Width::Wide));
        if wide || fits {
            Width::Wide
        } else {
            Width::Narrow { gpu, spec }
        }
    }

    fn shows(self, c: &Col) -> bool {
        match (self, c.2) {
            (Width::Wide, _) | (_, Always) => true,
            (Width::Narrow { gpu, .. }, WithGpu) => gpu,
            (Width::Narrow { spec, .. }, WithSpec) => spec,
            (Width::Narrow { .. }, WideOnly) => false,
        }
    }
}

/// Characters of a table's header line up to the flags column, plus room for a few flag words.
fn table_width(cols: &[Col], w: Width) -> usize {
    let shown: Vec<&Col> = cols.iter().filter(|c| w.shows(c)).collect();
    shown.iter().map(|c| c.1).sum::<usize>() + 3 * shown.len() + 12
}

/// Prints the throughput table, a row at a time.
#[derive(Debug, Default)]
pub(crate) struct ThroughputTable(pub Width);

impl ThroughputTable {
    pub(crate) fn header(&self) -> String {
        header(THROUGHPUT, self.0)
    }

    /// The row for a point, followed by one indented line per flag or failure reason.
    pub(crate) fn row(&self, p: &Point) -> String {
        let cells = match &p.summary {
            Some(s) => throughput_cells(p, s),
            None => vec![p.concurrency.to_string()],
        };
        render(THROUGHPUT, self.0, cells, p)
    }
}

/// Prints the rate table, a row at a time.
#[derive(Debug, Default)]
pub(crate) struct RateTable(pub Width);

impl RateTable {
    pub(crate) fn header(&self) -> String {
        header(RATE, self.0)
    }

    /// Offered and achieved rate, latency, the client's schedule lag (the proof it kept up),
    /// the concurrency reached and, with `--goodput`, good requests per second and their share.
    pub(crate) fn row(&self, p: &Point) -> String {
        let r = p.rate;
        let mut cells = vec![r.map_or("-".into(), |r| fixed(r.offered_rps, 2))];
        if let (Some(s), Some(r)) = (&p.summary, r) {
            let pair = |x: Option<llmsweep_shared::metrics::Stats>, prec: usize| {
                x.map_or("-".into(), |t| {
                    format!("{}/{}", fixed(t.p50, prec), fixed(t.p99, prec))
                })
            };
            cells.extend([
                r.achieved_rps.map_or("-".into(), |a| fixed(a, 2)),
                format!("{}/{}", s.ok, s.failed),
                fixed(s.agg_tok_s, 1),
                pair(s.ttft_s, 3),
                s.tpot_s.map_or("-".into(), |t| fixed(t.p50 * 1e3, 1)),
                pair(s.e2e_s, 2),
                mean_p90(s.ttft_s, 1.0, 3),
                mean_p90(s.tpot_s, 1e3, 1),
                mean_p90(s.e2e_s, 1.0, 2),
                r.lag_s.map_or("-".into(), |l| fixed(l.p99 * 1e3, 1)),
                match (r.peak_concurrency, r.mean_concurrency) {
                    (Some(peak), Some(mean)) => format!("{peak}/{}", fixed(mean, 1)),
                    _ => "-".into(),
                },
                p.goodput.map_or("-".into(), |g| {
                    format!(
                        "{}/s {}%",
                        fixed(g.good_rps, 2),
                        fixed(g.fraction * 100.0, 0)
                    )
                }),
            ]);
        }
        render(RATE, self.0, cells, p)
    }
}

/// Prints the context table, a row at a time.
#[derive(Debug, Default)]
pub(crate) struct ContextTable(pub Width);

impl ContextTable {
    pub(crate) fn header(&self) -> String {
        header(CONTEXT, self.0)
    }

    pub(crate) fn row(&self, p: &Point) -> String {
        let mut cells = vec![p.input_len.to_string(), p.concurrency.to_string()];
        if let Some(s) = &p.summary {
            let p50 = |x: Option<llmsweep_shared::metrics::Stats>, scale: f64, prec: usize| {
                x.map_or("-".into(), |v| fixed(v.p50 * scale, prec))
            };
            let counted = p.requests.iter().filter_map(|r| r.prompt_tokens).max();
            cells.extend([
                format!("{}/{}", s.ok, s.failed),
                p50(s.ttft_s, 1.0, 3),
                p50(s.prefill_tok_s, 1.0, 0),
                p50(s.decode_tok_s, 1.0, 1),
                p50(s.e2e_s, 1.0, 2),
                counted.map_or("-".into(), |c| c.to_string()),
                mean_p90(s.ttft_s, 1.0, 3),
            ]);
        }
        render(CONTEXT, self.0, cells, p)
    }
}

fn header(cols: &[Col], w: Width) -> String {
    format!("{} | flags", table::header(&shown(cols, w)))
}

/// The columns width `w` shows.
fn shown(cols: &[Col], w: Width) -> Vec<Column> {
    cols.iter()
        .filter(|c| w.shows(c))
        .map(|c| Column {
            header: c.0,
            width: c.1,
        })
        .collect()
}

/// A row: cells right-aligned to their column (missing cells shown as `-`), the flag words,
/// then one indented line per reason or flag message.
fn render(cols: &[Col], w: Width, mut cells: Vec<String>, p: &Point) -> String {
    cells.resize(cols.len(), "-".into());
    let cells: Vec<&String> = cells
        .iter()
        .zip(cols)
        .filter(|(_, c)| w.shows(c))
        .map(|(v, _)| v)
        .collect();
    let mut out = format!(
        "{} | {}",
        table::row(&shown(cols, w), &cells),
        flag_words(p)
    );
    for line in explanations(p) {
        out.push_str("\n      ↳ ");
        out.push_str(&line);
    }
    out
}

fn throughput_cells(p: &Point, s: &Summary) -> Vec<String> {
    let ttft = s.ttft_s.map_or("-".into(), |t| {
        format!("{}/{}", fixed(t.p50, 3), fixed(t.p99, 3))
    });
    let peak_queue = p
        .server_samples
        .as_ref()
        .and_then(|x| x.peak_queue)
        .map_or("-".into(), |q| fixed(q, 0));
    let tok_per_joule = p
        .gpu_samples
        .as_ref()
        .and_then(|g| g.tokens_per_joule)
        .map_or("-".into(), |t| fixed(t, 2));
    vec![
        p.concurrency.to_string(),
        format!("{}/{}", s.ok, s.failed),
        fixed(s.agg_tok_s, 1),
        // A level with no successful request served nothing to measure a rate of.
        s.steady_tok_s
            .filter(|_| s.ok > 0)
            .map_or("-".into(), |v| steady_cell(v, s.steady_pm_pct)),
        s.decode_tok_s.map_or("-".into(), |d| fixed(d.p50, 1)),
        ttft,
        s.itl_s.map_or("-".into(), |i| fixed(i.p50 * 1000.0, 1)),
        mean_p90(s.ttft_s, 1.0, 3),
        mean_p90(s.tpot_s, 1e3, 1),
        mean_p90(s.e2e_s, 1.0, 2),
        peak_queue,
        llmsweep_shared::metrics::acceptance(p)
            .and_then(|a| a.length())
            .map_or("-".into(), |a| fixed(a, 2)),
        format!("{}/{}", s.output_tokens, s.output_tokens_asked),
        fixed(s.wall_s, 1),
        tok_per_joule,
    ]
}

/// `mean/p90` of a latency, scaled (`1e3` for milliseconds) to `prec` decimals; `-` without one.
fn mean_p90(x: Option<llmsweep_shared::metrics::Stats>, scale: f64, prec: usize) -> String {
    x.map_or("-".into(), |t| {
        format!(
            "{}/{}",
            fixed(t.mean * scale, prec),
            fixed(t.p90 * scale, prec)
        )
    })
}

/// The short words of a row's flags column: `ok`, or e.g. `short 3, failed 1`.
fn flag_words(p: &Point) -> String {
    let mut words: Vec<String> = p
        .flags
        .iter()
        .map(|f| match f.count {
            Some(n) => format!("{} {n}", f.kind.as_str()),
            None => f.kind.as_str().to_string(),
        })
        .collect();
    match p.status {
        PointStatus::Failed => words.insert(0, "FAILED".into()),
        PointStatus::Skipped => words.insert(0, "skipped".into()),
        _ => {}
    }
    if words.is_empty() {
        "ok".into()
    } else {
        words.join(", ")
    }
}

/// The lines under a row: why it failed or was skipped, then its flags' words. A failed row's
/// reason already says every request failed and why, so its `failed` flag is not said again.
fn explanations(p: &Point) -> Vec<String> {
    let mut lines: Vec<String> = p.reason.iter().cloned().collect();
    let said = p.status == PointStatus::Failed && p.reason.is_some();
    lines.extend(
        p.flags
            .iter()
            .filter(|f| !(said && f.kind == FlagKind::Failed))
            .map(|f| f.message.clone()),
    );
    lines
}

/// Prints `line` on stdout, inert: see [`inert`].
fn say(line: &str) {
    outln!(
        "{}",
        wrap(&inert(line), line_width(&console::Term::stdout()))
    );
}

/// The width prose is wrapped to: the terminal's, or 100 columns when not a terminal.
fn line_width(term: &console::Term) -> usize {
    match term.size_checked() {
        Some((_, cols)) if term.is_term() => usize::from(cols).max(40),
        _ => 100,
    }
}

/// `text` with every line longer than `width` broken at word boundaries, each continuation
/// indented two past its line's own indent (past `↳ ` for a flag's explanation). A table row
/// (cells between ` | `) is left whole: breaking it would misalign its columns.
fn wrap(text: &str, width: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in text.split('\n') {
        if line.chars().count() <= width || line.contains(" | ") {
            out.push(line.to_string());
            continue;
        }
        let body = line.trim_start();
        let lead = &line[..line.len() - body.len()];
        let arrow = if body.starts_with("↳ ") { 2 } else { 0 };
        let indent = format!("{lead}  {}", " ".repeat(arrow));
        out.push(hang(lead, body, &indent, width));
    }
    out.join("\n")
}

/// Whether `word` (its closing punctuation aside) is a unit a number is written with.
fn is_unit(word: &str) -> bool {
    const UNITS: [&str; 17] = [
        "s", "ms", "µs", "ns", "min", "h", "B", "KB", "MB", "GB", "KiB", "MiB", "GiB", "tok/s",
        "req/s", "W", "tok/J",
    ];
    UNITS.contains(&word.trim_end_matches([',', ';', ':', '.', ')']))
}

/// `first` then the words of `text`, broken into lines of at most `width` characters (a longer
/// word has a line of its own), each line after the first starting with `indent`. Linear in the
/// text, however long.
pub(crate) fn hang(first: &str, text: &str, indent: &str, width: usize) -> String {
    let mut out = String::with_capacity(first.len() + text.len() + 16);
    out.push_str(first);
    let mut col = first.chars().count();
    let indent_cols = indent.chars().count();
    let mut empty = true;
    for word in glued(text) {
        let word = word.as_str();
        let len = word.chars().count();
        if !empty && col + 1 + len > width {
            out.push('\n');
            out.push_str(indent);
            col = indent_cols;
            empty = true;
        }
        if !empty {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += len;
        empty = false;
    }
    out
}

/// The words of `text`, with what reads as one unit kept on one line: a number and its `%`,
/// its `±` spread or its unit (`90.1 s`, `29 KiB`), and `C = 16`.
fn glued(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut join_next = false;
    for word in text.split(' ') {
        let after_number = out
            .last()
            .is_some_and(|l| l.ends_with(|c: char| c.is_ascii_digit()));
        let attach = join_next
            || word == "%"
            || word == "="
            || word.starts_with('±')
            || (after_number && is_unit(word));
        match out.last_mut() {
            Some(last) if attach && !word.is_empty() => {
                last.push(' ');
                last.push_str(word);
            }
            _ => out.push(word.to_string()),
        }
        join_next = word == "=";
    }
    out
}

/// `text` as a terminal shows it: inert (see [`inert`]) and wrapped at word boundaries to the
/// width of stdout (100 columns when it is not a terminal).
pub(crate) fn for_screen(text: &str) -> String {
    wrap(&inert(text), stdout_width())
}

/// The width prose on stdout is wrapped to.
pub(crate) fn stdout_width() -> usize {
    line_width(&console::Term::stdout())
}

/// Writes to standard output and ignores a failure: a reader that went away (`| head`, a
/// test that read the first line) must not stop a run or a server. Used by `outln!`.
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_fmt(args);
}

/// Writes to standard error and ignores a failure, as [`write_out`]. Used by `errln!`.
pub(crate) fn write_err(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `text` made inert for the terminal: see [`llmsweep_shared::text::inert`].
pub(crate) fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    llmsweep_shared::text::inert(text)
}

/// The bar on screen, if any, so that a message printed meanwhile (a Ctrl-C notice) goes above it
/// instead of through it.
static ACTIVE: std::sync::Mutex<Option<ProgressBar>> = std::sync::Mutex::new(None);

/// Prints `line` on stderr; with a progress bar on screen, the bar steps aside for it and is
/// drawn again below.
pub(crate) fn note_line(line: &str) {
    let active = ACTIVE
        .lock()
        .map(|a| a.clone())
        .unwrap_or_else(|poisoned| poisoned.into_inner().clone());
    let text = wrap(&inert(line), line_width(&console::Term::stderr()));
    match active {
        Some(bar) => bar.suspend(|| errln!("{text}")),
        None => errln!("{text}"),
    }
}

fn set_active(bar: Option<ProgressBar>) {
    match ACTIVE.lock() {
        Ok(mut a) => *a = bar,
        Err(poisoned) => *poisoned.into_inner() = bar,
    }
}

/// The live progress bar of one point.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
    tokens: u64,
    failed: u64,
    /// The level sends a known number of requests, so a time left can be estimated.
    counted: bool,
}

impl Progress {
    /// `total`: requests in the point when known.
    pub(crate) fn start(label: String, total: Option<u64>) -> Progress {
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::no_length(),
        };
        // The time left in the level is shown from the first finished request on: before it,
        // there is nothing to estimate from.
        let template = if total.is_some() {
            "{spinner} {prefix} [{bar:20}] {pos}/{len} requests  {msg}  {elapsed}"
        } else {
            "{spinner} {prefix} {pos} requests  {msg}  {elapsed}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label);
        bar.enable_steady_tick(Duration::from_millis(200));
        set_active(Some(bar.clone()));
        Progress {
            bar,
            tokens: 0,
            failed: 0,
            counted: total.is_some(),
        }
    }

    /// Counts one finished request.
    pub(crate) fn done(&mut self, output_tokens: u64, ok: bool) {
        if self.counted && self.bar.position() == 0 {
            let template = "{spinner} {prefix} [{bar:20}] {pos}/{len} requests  {msg}  {elapsed}, ~{eta} left in this level";
            if let Ok(style) = ProgressStyle::with_template(template) {
                self.bar.set_style(style.progress_chars("=> "));
            }
        }
        self.tokens = self.tokens.saturating_add(output_tokens);
        if !ok {
            self.failed += 1;
        }
        let secs = self.bar.elapsed().as_secs_f64().max(1e-3);
        self.bar.set_message(format!(
            "{:.1} tok/s so far, {} errors",
            self.tokens as f64 / secs,
            self.failed
        ));
        self.bar.inc(1);
    }

    pub(crate) fn finish(self) {
        set_active(None);
        self.bar.finish_and_clear();
    }
}

/// The run's events on the terminal: the target, a table per sweep with a row per point, a
/// progress bar for the running point, notes on stderr, the headlines.
#[derive(Debug)]
pub(crate) struct Printer {
    /// `--wide`: every column.
    wide: bool,
    state: std::sync::Mutex<PrinterState>,
}

#[derive(Debug, Default)]
struct PrinterState {
    width: Width,
    progress: Option<Progress>,
}

impl Printer {
    /// `wide`: every column of the tables, whatever the terminal's width.
    pub(crate) fn new(wide: bool) -> Printer {
        Printer {
            wide,
            state: std::sync::Mutex::new(PrinterState::default()),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut PrinterState) -> T) -> T {
        match self.state.lock() {
            Ok(mut s) => f(&mut s),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

impl Sink for Printer {
    fn event(&self, event: Event<'_>) {
        match event {
            Event::Target { bundle, gpus_read } => {
                let spec = llmsweep_shared::deploy::speculative(bundle).is_some();
                self.with(|s| s.width = Width::choose(self.wide, gpus_read, spec));
                print_target(bundle);
            }
            Event::Note(line) => note_line(line),
            Event::SweepStarted {
                kind,
                after_another,
                shape,
            } => {
                let w = self.with(|s| s.width);
                let header = match kind {
                    SweepKind::Context => ContextTable(w).header(),
                    SweepKind::Rate => RateTable(w).header(),
                    _ => ThroughputTable(w).header(),
                };
                if after_another {
                    say("");
                }
                if let Some(shape) = shape {
                    say(&format!("{} tokens (input × output)", shape.name()));
                }
                say(&header);
            }
            Event::Point { kind, point } => {
                let w = self.with(|s| s.width);
                let row = match kind {
                    SweepKind::Context => ContextTable(w).row(point),
                    SweepKind::Rate => RateTable(w).row(point),
                    _ => ThroughputTable(w).row(point),
                };
                say(&row);
            }
            Event::Sending { label, total } => {
                let bar = Progress::start(label.to_string(), total);
                if let Some(old) = self.with(|s| s.progress.replace(bar)) {
                    old.finish();
                }
            }
            Event::Finished { output_tokens, ok } => self.with(|s| {
                if let Some(p) = s.progress.as_mut() {
                    p.done(output_tokens, ok);
                }
            }),
            Event::Sent => {
                if let Some(p) = self.with(|s| s.progress.take()) {
                    p.finish();
                }
            }
            Event::TimeLeft {
                low_s,
                high_s,
                levels,
                ends,
            } => {
                let left = if high_s - low_s < 1.0 {
                    format!("about {}", duration_words(low_s))
                } else {
                    format!("{} to {}", duration_words(low_s), duration_words(high_s))
                };
                let then = if ends {
                    ", where the server should be saturated and the sweep end"
                } else {
                    ""
                };
                say(&format!("      {left} left for C = {}{then}", join(levels)));
            }
            Event::PrefillFit(sweep) => print_fit(sweep),
            Event::Headline(h) => say(&format!("\n{h}")),
        }
    }
}

/// The lines above a run's table: where it goes, what the server is, how prompts were sized.
fn print_target(b: &Bundle) {
    let t = &b.target;
    let engine = match (&t.engine, &t.engine_version) {
        (Some(e), Some(v)) => format!("{e} {v}"),
        (Some(e), None) => e.clone(),
        _ => "engine unknown".into(),
    };
    // A server names its model and engine: any length; the bundle keeps them whole.
    let engine = shorten::fact(&engine);
    let mut limits = Vec::new();
    if let Some(c) = t.max_context {
        limits.push(format!("context {c}"));
    }
    if let Some(r) = t.max_running_requests {
        limits.push(format!("max running {r}"));
    }
    let limits = if limits.is_empty() {
        String::new()
    } else {
        format!(", {}", limits.join(", "))
    };
    say(&format!(
        "llmsweep {} → {} ({engine}{limits})",
        shorten::label(&b.label),
        t.url
    ));
    let calibration = match b.workload.calibration {
        llmsweep_shared::bundle::Calibration::Tokenizer => {
            "prompt lengths from the server's tokenizer"
        }
        llmsweep_shared::bundle::Calibration::Usage => {
            "prompt lengths estimated from the server's usage (no tokenizer endpoint)"
        }
        llmsweep_shared::bundle::Calibration::None
        | llmsweep_shared::bundle::Calibration::Unknown => {
            "prompt lengths estimated at one token per word"
        }
    };
    say(&format!(
        "model {} · api {} · {calibration} · seed {}",
        shorten::fact(&t.model),
        t.api.as_str(),
        b.workload.seed
    ));
    let mut deployment = Vec::new();
    if let Some(g) = llmsweep_shared::deploy::gpus(b) {
        deployment.push(format!("{} GPUs ({})", g.count, g.source));
    }
    if let Some(s) = llmsweep_shared::deploy::speculative_line(b) {
        deployment.push(format!("speculative decoding {s}"));
    }
    if !deployment.is_empty() {
        say(&deployment.join(" · "));
    }
    if t.simulated {
        say(
            "note: this server is llmsweep's simulator; its numbers describe a model, not hardware",
        );
    }
    say("");
}

/// `45 s`, `12 min`, `1.5 h`.
fn duration_words(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

fn print_fit(sweep: &Sweep) {
    let Some(fit) = &sweep.prefill_fit else {
        say("\nprefill fit: needs successful points at two or more lengths");
        return;
    };
    say(&format!(
        "\nprefill fit over {} requests at {}..{} tokens: {} ({})",
        fit.samples,
        fit.min_len,
        fit.max_len,
        fit.describe(),
        fit.residual_text()
    ));
    for p in sweep.points.iter() {
        if let Some(line) = predicted_line(fit, p) {
            say(&line);
        }
    }
}

/// A skipped point's predicted TTFT, saying when the fit behind it was never tested; `None`
/// for a point without a prediction.
fn predicted_line(fit: &llmsweep_shared::metrics::PrefillFit, p: &Point) -> Option<String> {
    let t = p.predicted_ttft_s?;
    let caveat = fit
        .prediction_caveat()
        .map_or(String::new(), |c| format!(", {c}"));
    Some(format!(
        "  predicted, not measured: TTFT at {} tokens ≈ {t:.2} s{caveat} (skipped: {})",
        p.input_len,
        p.reason.as_deref().unwrap_or("")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prediction_from_a_fit_through_two_lengths_claims_no_error() {
        let two = llmsweep_shared::metrics::PrefillFit {
            a_s: 0.021,
            b_s_per_token: 26e-6,
            c_s_per_token2: 0.0,
            rms_residual_s: 0.0,
            samples: 4,
            min_len: 1000,
            max_len: 30_000,
            lengths: 2,
        };
        let skipped = Point {
            status: PointStatus::Skipped,
            reason: Some("needs 60032 tokens, server context is 32768".into()),
            predicted_ttft_s: Some(1.581),
            ..Point::empty(1, 60_000, 32)
        };
        assert_eq!(
            predicted_line(&two, &skipped).as_deref(),
            Some(
                "  predicted, not measured: TTFT at 60000 tokens ≈ 1.58 s, its error unknown with 2 lengths (skipped: needs 60032 tokens, server context is 32768)"
            )
        );
        let five = llmsweep_shared::metrics::PrefillFit {
            lengths: 5,
            c_s_per_token2: 2e-10,
            ..two
        };
        assert_eq!(
            predicted_line(&five, &skipped).as_deref(),
            Some(
                "  predicted, not measured: TTFT at 60000 tokens ≈ 1.58 s (skipped: needs 60032 tokens, server context is 32768)"
            )
        );
        assert_eq!(predicted_line(&five, &Point::empty(1, 1000, 32)), None);
    }

    #[test]
    fn long_prose_wraps_at_words_and_table_rows_stay_whole() {
        let headline = "peak steady 452.6 tok/s at C=16; saturates from C=16 (within 5 % of peak); at C=1 TTFT 0.15 s and 72.8 tok/s per user";
        let w = wrap(headline, 60);
        assert!(w.lines().all(|l| l.chars().count() <= 60), "{w}");
        assert_eq!(w.replace("\n  ", " "), headline);
        let flag = "      ↳ stopped sending at the 120 s cap (--max-level-time) with steady tok/s known to ±2.6 %";
        let w = wrap(flag, 50);
        assert!(
            w.lines()
                .skip(1)
                .all(|l| l.starts_with("          ") && !l.starts_with("           ")),
            "{w}"
        );
        let row =
            "   1 |     6/0 |     71.4 ±0.0% |           72.8 |     0.152/0.153 |   42.0 | ok";
        assert_eq!(wrap(row, 40), row);
        // A word longer than the width stands on its own line rather than being cut.
        assert_eq!(wrap("a bbbbbbbbbbbb c", 5), "a\n  bbbbbbbbbbbb\n  c");
        // A number keeps its unit, whatever punctuation follows it; a word after a number
        // that is no unit does not.
        assert_eq!(
            wrap("its last requests waited 90.1 s, for a first token", 30),
            "its last requests waited\n  90.1 s, for a first token"
        );
        assert_eq!(
            wrap("29 requests ok at the level of 12", 14),
            "29 requests ok\n  at the level\n  of 12"
        );
    }
    use llmsweep_shared::metrics::summarize;

    fn point() -> Point {
        let rec =
            |start: f64| llmsweep_shared::bundle::RequestRecord::test_ok(start, 0.153, 6.95, 500);
        let requests: Vec<_> = (0..64).map(|i| rec(f64::from(i) * 0.1)).collect();
        let mut p = Point::empty(100, 1000, 500);
        p.summary = Some(summarize(&requests, 100, 500, &[0.0136]));
        p.requests = requests;
        p
    }

    #[test]
    fn control_characters_reach_the_terminal_as_text() {
        assert_eq!(inert("plain\tline\n"), "plain\tline\n");
        assert_eq!(
            inert("evil\u{1b}]0;pwned\u{7}model"),
            "evil\\u{1b}]0;pwned\\u{7}model"
        );
        assert_eq!(inert("\u{9b}2J"), "\\u{9b}2J");
    }

    #[test]
    fn a_failed_rows_reason_is_said_once() {
        use llmsweep_shared::bundle::Flag;
        let failed = Flag {
            kind: FlagKind::Failed,
            message: "2 of 2 requests failed; first error: a stream line grew past 1 MiB".into(),
            count: Some(2),
        };
        let short = Flag {
            kind: FlagKind::Short,
            message: "1 of 2 requests stopped early".into(),
            count: Some(1),
        };
        let mut p = point();
        p.status = PointStatus::Failed;
        p.reason = Some("all 2 requests failed; a stream line grew past 1 MiB".into());
        p.flags = vec![failed.clone(), short.clone()];
        assert_eq!(
            explanations(&p),
            [
                "all 2 requests failed; a stream line grew past 1 MiB",
                "1 of 2 requests stopped early"
            ]
        );
        // A row with some requests ok keeps its failed flag's words.
        let mut p = point();
        p.flags = vec![failed.clone()];
        assert_eq!(explanations(&p), [failed.message]);
    }

    #[test]
    fn durations_are_in_the_unit_that_reads() {
        assert_eq!(duration_words(89.0), "89 s");
        assert_eq!(duration_words(978.0), "16 min");
    }

    #[test]
    fn the_narrow_table_fits_100_columns_and_the_wide_one_has_every_column() {
        let narrow = ThroughputTable(Width::NARROW);
        let row = narrow.row(&point());
        let first = row.lines().next().unwrap();
        assert!(
            narrow.header().chars().count() <= 100,
            "{}",
            narrow.header()
        );
        assert!(first.chars().count() <= 100, "{first}");
        assert!(!narrow.header().contains("tok/J"));
        assert!(!narrow.header().contains("accept"));
        // With every optional column (GPUs read, a speculative server) it still fits.
        let all = ThroughputTable(Width::Narrow {
            gpu: true,
            spec: true,
        });
        assert!(all.header().chars().count() <= 100, "{}", all.header());
        assert!(all.header().contains("| accept |") && all.header().contains("tok/J"));
        let first = all.row(&point()).lines().next().unwrap().to_string();
        assert!(first.chars().count() <= 100, "{first}");
        let wide = ThroughputTable(Width::Wide);
        for c in THROUGHPUT {
            assert!(wide.header().contains(c.0), "{}", c.0);
        }
        let ctx = ContextTable(Width::NARROW);
        assert!(ctx.header().chars().count() <= 100, "{}", ctx.header());
    }

    /// The wide tables show each latency's mean and p90 beside its p50 and p99; the narrow
    /// ones stay as they were.
    #[test]
    fn the_wide_tables_show_mean_and_p90() {
        // TTFT 0.1 … 1.0 s: mean 0.55, p90 0.91 (rank 8.1); e2e one second more; 100 tokens,
        // so TPOT is 1 s / 99 ≈ 10.1 ms for every request.
        let requests: Vec<_> = (1..=10)
            .map(|i| {
                let t = f64::from(i) * 0.1;
                llmsweep_shared::bundle::RequestRecord::test_ok(f64::from(i), t, t + 1.0, 100)
            })
            .collect();
        let mut p = Point::empty(2, 1000, 100);
        p.summary = Some(summarize(&requests, 2, 100, &[]));
        p.requests = requests;
        let wide = ThroughputTable(Width::Wide);
        let header = wide.header();
        let row = wide.row(&p);
        let cell = |name: &str| {
            let at = header.split(" | ").position(|h| h.trim() == name).unwrap();
            row.split(" | ").nth(at).unwrap().trim().to_string()
        };
        assert_eq!(cell("TTFT mean/p90 s"), "0.550/0.910", "{header}\n{row}");
        assert_eq!(cell("TPOT mean/p90 ms"), "10.1/10.1", "{header}\n{row}");
        assert_eq!(cell("e2e mean/p90 s"), "1.55/1.91", "{header}\n{row}");
        for narrow in [
            Width::NARROW,
            Width::Narrow {
                gpu: true,
                spec: true,
            },
        ] {
            let t = ThroughputTable(narrow);
            assert!(!t.header().contains("mean") && !t.row(&p).contains("0.550/0.910"));
            assert!(!ContextTable(narrow).header().contains("mean"));
            assert!(!RateTable(narrow).header().contains("mean"));
        }
        assert!(ContextTable(Width::Wide).row(&p).contains(" 0.550/0.910 |"));
        assert!(
            ContextTable(Width::Wide)
                .header()
                .contains("TTFT mean/p90 s")
        );
        let rate = RateTable(Width::Wide);
        for c in ["TTFT mean/p90 s", "TPOT mean/p90 ms", "e2e mean/p90 s"] {
            assert!(rate.header().contains(c), "{}", rate.header());
        }
    }

    #[test]
    fn a_hanging_line_wraps_under_its_text_in_one_pass() {
        let h = hang(
            "    TTFT p50 (s)  ",
            "better at 1 of 3 (C = 1); best -52.4 ±0.2 % at C=1",
            "                  ",
            40,
        );
        assert_eq!(
            h,
            "    TTFT p50 (s)  better at 1 of 3\n                  (C = 1); best\n                  -52.4 ±0.2 % at C=1"
        );
        // A megabyte of words is wrapped, not stuck on: each line within the width.
        let long = "word ".repeat(200_000);
        let w = wrap(&long, 100);
        assert!(w.lines().all(|l| l.chars().count() <= 100));
        assert_eq!(w.split_whitespace().count(), 200_000);
    }

    /// A level whose every request failed shows no steady rate, not "0.0".
    #[test]
    fn a_level_with_no_successful_request_shows_no_steady_rate() {
        let requests: Vec<llmsweep_shared::bundle::RequestRecord> = (0..4)
            .map(|i| llmsweep_shared::bundle::RequestRecord::test_failed(f64::from(i), 0.5))
            .collect();
        let mut p = Point::empty(2, 1000, 100);
        p.summary = Some(summarize(&requests, 2, 100, &[]));
        p.requests = requests;
        let t = ThroughputTable(Width::Wide);
        let (header, row) = (t.header(), t.row(&p));
        let at = header
            .split(" | ")
            .position(|h| h.trim() == "steady tok/s")
            .unwrap();
        assert_eq!(
            row.split(" | ").nth(at).unwrap().trim(),
            "-",
            "{header}\n{row}"
        );
    }
}
