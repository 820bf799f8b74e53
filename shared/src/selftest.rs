//! What a selftest bundle shows: the client's measured capacity as tables (flat out, scheduled),
//! the one number a sweep is judged against, and a run's highest streamed rate as a share of it.
//! The viewer and the report both show these, so they say the same thing in the same words.
//!
//! A selftest measures the collector against llmsweep's own loopback endpoint, which costs next
//! to nothing: its numbers are this client's limits, never a server's result.

use crate::Bundle;
use crate::bundle::{Selftest, SelftestLevel, SelftestMode};
use crate::charts::axis::{fixed, format_value, thousands};
use crate::compare::level_key;
use crate::compare::verdict::level_list;
use crate::metrics::Stats;

/// A sweep level that streamed more than this share of the client's capacity may have been
/// paced by the client (the share above which the collector flags a level `client-bound`).
pub const NEAR_CAPACITY: f64 = 0.5;

/// The level whose rate is the client's capacity: the fastest flat-out level at one token per
/// event in which every request succeeded (the rate `llmsweep selftest` keeps for later sweeps).
/// One token per event is what a server streams without speculative decoding, and reading
/// events, not tokens, is what costs the client.
pub fn capacity_level(s: &Selftest) -> Option<&SelftestLevel> {
    s.levels
        .iter()
        .filter(|l| l.mode == SelftestMode::FlatOut && l.tokens_per_event == 1)
        .filter(|l| l.ok == l.requests && l.events_s.is_finite() && l.events_s > 0.0)
        .max_by(|a, b| a.events_s.total_cmp(&b.events_s))
}

/// The selftest section as a page shows it, ready to display.
#[derive(Debug, Clone, PartialEq)]
pub struct SelftestView {
    /// `client capacity of kpro5` (the client host's name).
    pub title: String,
    /// The client host's name.
    pub host: String,
    /// What was measured and against what, in one sentence with the date.
    pub about: String,
    /// The client machine: `AMD EPYC 7543 · 2 cores · 24.0 GiB · Debian GNU/Linux 12`.
    pub machine: String,
    /// `2,000,000 events/s (flat out, 1 token per event, C = 64)`; `None` when no level gives
    /// one (none ran flat out at one token per event, or every such level had failures).
    pub capacity: Option<String>,
    /// Flat out, then scheduled; a mode that did not run has no table.
    pub tables: Vec<SelftestTable>,
    /// What a reader must know about the levels: failures, an endpoint behind its schedule, an
    /// interrupted selftest.
    pub notes: Vec<String>,
}

/// One mode's levels as a table.
#[derive(Debug, Clone, PartialEq)]
pub struct SelftestTable {
    pub mode: SelftestMode,
    /// `flat out` or `scheduled`.
    pub title: &'static str,
    /// What the mode does and what its numbers mean.
    pub explain: String,
    pub headers: Vec<&'static str>,
    pub rows: Vec<SelftestRow>,
}

/// One level's cells, in the order of [`SelftestTable::headers`].
#[derive(Debug, Clone, PartialEq)]
pub struct SelftestRow {
    pub concurrency: u32,
    pub cells: Vec<String>,
    /// Set when some of the level's requests failed or came back short.
    pub warning: bool,
}

impl SelftestView {
    /// The view of `b`'s selftest section; `None` for a bundle without one.
    pub fn of(b: &Bundle) -> Option<SelftestView> {
        let s = b.selftest.as_ref()?;
        let c = &b.hosts.client;
        let host = crate::shorten::label(&c.hostname).into_owned();
        let mut machine: Vec<String> = c.cpu_model.iter().cloned().collect();
        machine.push(format!(
            "{} core{}",
            c.cpu_cores,
            if c.cpu_cores == 1 { "" } else { "s" }
        ));
        if let Some(m) = c.memory_bytes {
            machine.push(format!("{} GiB", fixed(m as f64 / (1u64 << 30) as f64, 1)));
        }
        machine.push(c.os.clone());
        let about = format!(
            "Measured by llmsweep selftest on {} against llmsweep's own loopback endpoint, which \
             costs next to nothing: how fast and how accurately this client reads streams. These \
             are the client's limits, not a server's result.",
            short_date(&b.created_at)
        );
        let mut notes = Vec::new();
        for l in &s.levels {
            notes.extend(level_note(l));
        }
        if !b.complete {
            notes.push(
                "The selftest was interrupted: the levels shown are those that finished.".into(),
            );
        }
        Some(SelftestView {
            title: format!("client capacity of {host}"),
            host,
            about,
            machine: machine.join(" · "),
            capacity: capacity_level(s).map(|l| {
                format!(
                    "{} events/s (flat out, 1 token per event, C = {})",
                    thousands(l.events_s),
                    l.concurrency
                )
            }),
            tables: [flat_out_table(s), scheduled_table(s)]
                .into_iter()
                .flatten()
                .collect(),
            notes,
        })
    }
}

fn flat_out_table(s: &Selftest) -> Option<SelftestTable> {
    let rows: Vec<SelftestRow> = s
        .levels
        .iter()
        .filter(|l| l.mode == SelftestMode::FlatOut)
        .map(|l| SelftestRow {
            concurrency: l.concurrency,
            cells: vec![
                l.concurrency.to_string(),
                l.tokens_per_event.to_string(),
                format!("{}/{}", l.exact, l.requests),
                thousands(l.tok_s),
                thousands(l.events_s),
                l.cpu_us_per_token.map_or("-".into(), |c| fixed(c, 2)),
                l.peak_rss_bytes.map_or("-".into(), mib),
            ],
            warning: l.exact < l.requests,
        })
        .collect();
    (!rows.is_empty()).then(|| SelftestTable {
        mode: SelftestMode::FlatOut,
        title: "flat out",
        explain: "Pre-rendered streams written as fast as the socket takes them: the most tokens \
                  and events per second this client reads, and what each token costs it."
            .into(),
        headers: vec![
            "C",
            "tokens/event",
            "exact/asked",
            "tok/s",
            "events/s",
            "CPU µs/token",
            "peak memory",
        ],
        rows,
    })
}

fn scheduled_table(s: &Selftest) -> Option<SelftestTable> {
    let ms3 = |st: Option<Stats>| match st {
        Some(st) => [millis(st.p50), millis(st.p99), millis(st.max)],
        None => ["-".into(), "-".into(), "-".into()],
    };
    let rows: Vec<SelftestRow> = s
        .levels
        .iter()
        .filter(|l| l.mode == SelftestMode::Scheduled)
        .map(|l| {
            let schedule = match (l.first_event_s, l.interval_s) {
                (Some(f), Some(i)) => format!("{} + {} ms", millis_short(f), millis_short(i)),
                _ => "-".into(),
            };
            let mut cells = vec![
                l.concurrency.to_string(),
                format!("{}/{}", l.exact, l.requests),
                schedule,
            ];
            cells.extend(ms3(l.ttft_error_s));
            cells.extend(ms3(l.itl_error_s));
            SelftestRow {
                concurrency: l.concurrency,
                cells,
                warning: l.exact < l.requests,
            }
        })
        .collect();
    (!rows.is_empty()).then(|| SelftestTable {
        mode: SelftestMode::Scheduled,
        title: "scheduled",
        explain: "The endpoint sends the first event after a fixed delay, then one per interval, \
                  each stamped with its send time. Errors are the client's measured time minus \
                  the stamped one, in milliseconds: how far a TTFT or an inter-token latency \
                  this client reports can be off."
            .into(),
        headers: vec![
            "C",
            "exact/asked",
            "schedule",
            "TTFT error p50 ms",
            "TTFT error p99 ms",
            "TTFT error max ms",
            "ITL error p50 ms",
            "ITL error p99 ms",
            "ITL error max ms",
        ],
        rows,
    })
}

/// What a level's table row cannot say: failed or short requests, an endpoint behind schedule.
fn level_note(l: &SelftestLevel) -> Vec<String> {
    let mode = match l.mode {
        SelftestMode::FlatOut => format!("flat out at {} per event", l.tokens_per_event),
        SelftestMode::Scheduled => "scheduled".into(),
    };
    let mut notes = Vec::new();
    if l.exact < l.requests {
        let failed = l.requests.saturating_sub(l.ok);
        let short = l.ok.saturating_sub(l.exact);
        let commonest = l
            .commonest_error
            .as_ref()
            .map(|(why, n)| format!(" The commonest error ({n}×): {why}."))
            .unwrap_or_default();
        notes.push(format!(
            "{mode}, C = {}: {failed} of {} requests failed and {short} came back short: the \
             client did not read every stream right at this level.{commonest}",
            l.concurrency, l.requests
        ));
    }
    if let (Some(lag), Some(interval)) = (l.first_event_lag_s, l.interval_s)
        && lag.p50 > interval
    {
        notes.push(format!(
            "{mode}, C = {}: the endpoint sent first events {} ms behind schedule at p50: this \
             machine (client and endpoint together) is the limit at this level.",
            l.concurrency,
            millis(lag.p50)
        ));
    }
    notes
}

/// A run's highest streamed rate set against a selftest of the same client host.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityShare {
    /// The run's events/s at that level over the client's capacity in events/s.
    pub share: f64,
    /// `demo-sim streamed at most 1,664 tok/s in 1,664 events/s (throughput sweep, C = 64):
    /// 0.083 % of the 2,000,000 events/s this client reads.`
    pub line: String,
}

/// `run`'s fastest level against the capacity in `selftest`, when both were measured from the
/// same client host and `run` has per-request event counts. A level's rate is its successful
/// requests' token events over its wall time (as the collector's `client-bound` check counts
/// it), and its tok/s is the aggregate over the same wall. `None` for an imported run (another
/// tool, another client), another host, or a run without the counts. `label` is the run's name
/// as shown.
pub fn capacity_share(label: &str, run: &Bundle, selftest: &Bundle) -> Option<CapacityShare> {
    let cap = capacity_level(selftest.selftest.as_ref()?)?;
    if run.selftest.is_some()
        || run.is_imported()
        || run.hosts.client.hostname != selftest.hosts.client.hostname
    {
        return None;
    }
    let (events_s, tok_s, at) = run
        .sweeps
        .iter()
        .flat_map(|s| s.points.iter().map(move |p| (s, p)))
        .filter_map(|(s, p)| {
            let summary = p.summary.as_ref()?;
            let events: u64 = p
                .requests
                .iter()
                .filter(|r| r.is_ok())
                .map(|r| r.chunks)
                .sum();
            (events > 0 && summary.wall_s > 0.0).then(|| {
                let at = match p.rate {
                    Some(r) => format!(
                        "rate sweep, {} requests/s offered",
                        format_value(r.offered_rps)
                    ),
                    None => format!(
                        "{} sweep, {}",
                        crate::compare::kind_name(s.kind),
                        level_list(s.kind, &[level_key(s.kind, p)])
                    ),
                };
                (events as f64 / summary.wall_s, summary.agg_tok_s, at)
            })
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    let share = events_s / cap.events_s;
    let label = crate::shorten::label(label);
    let mut line = format!(
        "{label} streamed at most {} tok/s in {} events/s ({at}): {} % of the {} events/s this \
         client reads.",
        thousands(tok_s),
        thousands(events_s),
        percent(share * 100.0),
        thousands(cap.events_s)
    );
    if share > NEAR_CAPACITY {
        line.push_str(" More than half: the client may have set that level's pace.");
    }
    Some(CapacityShare { share, line })
}

/// A percentage with two significant digits below 10 (`0.018`, `4.2`), whole from 10 up.
fn percent(p: f64) -> String {
    if !p.is_finite() || p >= 10.0 {
        return fixed(p, 0);
    }
    if p < 1e-4 {
        return "< 0.0001".into();
    }
    let decimals = (1 - p.log10().floor() as i32).max(1) as usize;
    fixed(p, decimals)
}

/// Seconds as milliseconds with two decimals; a value that rounds to zero shows no sign (as
/// `llmsweep selftest` prints them).
pub fn millis(s: f64) -> String {
    let v = fixed(s * 1e3, 2);
    if v == "-0.00" { "0.00".into() } else { v }
}

/// Seconds as whole milliseconds when they are whole, for a schedule: `50`, `12.5`.
fn millis_short(s: f64) -> String {
    let ms = s * 1e3;
    if (ms - ms.round()).abs() < 1e-6 {
        fixed(ms.round(), 0)
    } else {
        fixed(ms, 1)
    }
}

/// Bytes in whole MiB: `25 MiB`.
fn mib(bytes: u64) -> String {
    format!("{} MiB", fixed(bytes as f64 / (1u64 << 20) as f64, 0))
}

/// `2025-01-01T12:34:56Z` → `2025-01-01 12:34 UTC`; anything else as it is.
fn short_date(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(d), Some(t)) if rfc3339.ends_with('Z') => format!("{d} {t} UTC"),
        _ => rfc3339.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SELFTEST: &str = include_str!("../tests/fixtures/bundle-v1-selftest.json");
    const RUN: &str = include_str!("../tests/fixtures/bundle-v1-run.json");

    fn selftest() -> Bundle {
        Bundle::from_json(SELFTEST).unwrap()
    }

    /// The golden run, measured from the selftest's host.
    fn run_on(host: &str) -> Bundle {
        let mut b = Bundle::from_json(RUN).unwrap();
        b.hosts.client.hostname = host.into();
        b
    }

    #[test]
    fn the_golden_selftest_shows_both_tables_with_its_numbers() {
        let v = SelftestView::of(&selftest()).unwrap();
        assert_eq!(v.title, "client capacity of kpro5");
        assert_eq!(
            v.machine,
            "AMD EPYC 7543 · 2 cores · 24.0 GiB · Debian GNU/Linux 12 (bookworm)"
        );
        assert!(
            v.about
                .contains("on 2026-12-01 14:00 UTC against llmsweep's own loopback")
        );
        assert_eq!(
            v.capacity.as_deref(),
            Some("2,000,000 events/s (flat out, 1 token per event, C = 64)")
        );
        let [flat, sched] = &v.tables[..] else {
            panic!("{:?}", v.tables)
        };
        assert_eq!(flat.title, "flat out");
        let cells: Vec<&[String]> = flat.rows.iter().map(|r| &r.cells[..]).collect();
        assert_eq!(
            cells[0],
            [
                "1",
                "1",
                "256/256",
                "1,280,000",
                "1,280,000",
                "0.80",
                "12 MiB"
            ]
        );
        assert_eq!(
            cells[3],
            [
                "64",
                "8",
                "250/256",
                "2,560,000",
                "320,000",
                "0.24",
                "24 MiB"
            ]
        );
        assert!(flat.rows[3].warning && !flat.rows[0].warning);
        assert_eq!(
            sched.rows[0].cells,
            [
                "1",
                "8/8",
                "50 + 10 ms",
                "0.05",
                "0.09",
                "0.10",
                "0.00",
                "0.54",
                "2.86"
            ]
        );
        assert_eq!(sched.headers.len(), sched.rows[1].cells.len());
        assert_eq!(
            v.notes,
            [
                "flat out at 8 per event, C = 64: 1 of 256 requests failed and 5 came back short: \
                 the client did not read every stream right at this level.",
                "scheduled, C = 64: the endpoint sent first events 12.00 ms behind schedule at \
                 p50: this machine (client and endpoint together) is the limit at this level."
            ]
        );
    }

    #[test]
    fn a_failed_level_names_its_commonest_error() {
        let mut b = selftest();
        b.selftest.as_mut().unwrap().levels[4].commonest_error =
            Some(("the stream ended early".into(), 1));
        let v = SelftestView::of(&b).unwrap();
        assert!(
            v.notes[0]
                .ends_with("at this level. The commonest error (1×): the stream ended early."),
            "{}",
            v.notes[0]
        );
    }

    #[test]
    fn a_bundle_without_a_selftest_has_no_view() {
        assert_eq!(SelftestView::of(&run_on("kpro5")), None);
    }

    #[test]
    fn capacity_is_the_best_clean_one_token_per_event_level() {
        let mut s = selftest().selftest.unwrap();
        assert_eq!(capacity_level(&s).map(|l| l.concurrency), Some(64));
        // A level with a failure does not count, however fast.
        s.levels[3].ok -= 1;
        assert_eq!(capacity_level(&s).map(|l| l.concurrency), Some(1));
        s.levels
            .retain(|l| l.tokens_per_event != 1 || l.mode != SelftestMode::FlatOut);
        assert_eq!(capacity_level(&s), None);
    }

    #[test]
    fn a_run_of_the_same_host_is_set_against_the_capacity() {
        // The golden run's fastest level: C = 2, 8 events of one token in 0.022618748 s.
        let share = capacity_share("golden", &run_on("kpro5"), &selftest()).unwrap();
        assert!((share.share - 8.0 / 0.022618748 / 2e6).abs() < 1e-12);
        assert_eq!(
            share.line,
            "golden streamed at most 354 tok/s in 354 events/s (throughput sweep, C = 2): \
             0.018 % of the 2,000,000 events/s this client reads."
        );
    }

    #[test]
    fn another_host_an_imported_run_or_a_run_without_counts_is_not_compared() {
        let st = selftest();
        assert_eq!(capacity_share("x", &run_on("kpro6"), &st), None);
        let mut imported = run_on("kpro5");
        imported.source =
            Some(serde_json::from_str(r#"{"tool": "a text table", "format": "table"}"#).unwrap());
        assert_eq!(capacity_share("x", &imported, &st), None);
        let mut old = run_on("kpro5");
        for r in old
            .sweeps
            .iter_mut()
            .flat_map(|s| &mut s.points)
            .flat_map(|p| &mut p.requests)
        {
            r.chunks = 0;
        }
        assert_eq!(capacity_share("x", &old, &st), None);
        assert_eq!(capacity_share("x", &st, &st), None, "a selftest is no run");
    }

    #[test]
    fn a_rate_level_is_named_by_its_offered_rate() {
        let mut run = run_on("kpro5");
        run.sweeps[0].kind = crate::bundle::SweepKind::Rate;
        run.sweeps[0].points[1].rate = Some(crate::bundle::RatePoint {
            offered_rps: 2.5,
            achieved_rps: Some(2.5),
            lag_s: None,
            queued_s: None,
            peak_concurrency: Some(2),
            mean_concurrency: Some(1.5),
        });
        let share = capacity_share("golden", &run, &selftest()).unwrap();
        assert!(
            share
                .line
                .contains(" events/s (rate sweep, 2.5 requests/s offered): "),
            "{}",
            share.line
        );
    }

    #[test]
    fn a_run_near_the_capacity_is_said_to_be_client_paced() {
        let mut st = selftest();
        for l in &mut st.selftest.as_mut().unwrap().levels {
            l.events_s /= 4000.0;
        }
        let share = capacity_share("golden", &run_on("kpro5"), &st).unwrap();
        assert!(share.share > NEAR_CAPACITY, "{}", share.share);
        assert!(share.line.ends_with("% of the 500 events/s this client reads. More than half: the client may have set that level's pace."), "{}", share.line);
    }

    #[test]
    fn percentages_keep_two_significant_digits() {
        assert_eq!(percent(0.017_68), "0.018");
        assert_eq!(percent(4.24), "4.2");
        assert_eq!(percent(70.7), "71");
        assert_eq!(percent(0.000_01), "< 0.0001");
        assert_eq!(millis(-0.000_001), "0.00");
        assert_eq!(millis_short(0.05), "50");
        assert_eq!(millis_short(0.0125), "12.5");
    }
}
