//! What the page shows of the state, ready to display: the run list's rows and facts, the folder
//! list's rows, the runs as charts take them and their comparison. Derived only; no action here.

use std::collections::BTreeMap;
use std::sync::Arc;

use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::charts::{ChartKind, ChartRun, PointRef, Rgb, across_runs, run_color};
use llmsweep_shared::compare::{Comparison, RunInput, compare, kind_name, workload_mismatch};
use llmsweep_shared::curves::sweep_of;
use llmsweep_shared::folder::FolderEntry;
use llmsweep_shared::selftest::{SelftestView, capacity_share};

use super::{Folder, Run, RunId, SelftestEntry, ViewerState};

/// What the folder part of the page shows, before its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum FolderStatus {
    /// Not served with a folder, or its listing is being read.
    Reading,
    /// The listing could not be read, and why.
    Failed(String),
    Empty,
    /// Listed with at least one bundle: see [`ViewerState::folder_rows`].
    Listed,
}

/// What a run's row in the run list shows that can change while the row stays on the page.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// The label shown.
    pub label: String,
    pub visible: bool,
    /// `#rrggbb` of the run's color.
    pub color: String,
    /// `bundle label: kpro5` while the label shown is not the bundle's own.
    pub original: Option<String>,
}

impl RunRow {
    fn of(r: &Run) -> RunRow {
        RunRow {
            label: r.label.clone(),
            visible: r.visible,
            color: r.css_color(),
            original: r
                .renamed()
                .then(|| format!("bundle label: {}", super::shown_label(&r.bundle))),
        }
    }
}

/// What the folder list shows for one file. The whole row is its key in the list: a row is put on
/// the page again only when what it shows changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FolderRow {
    pub name: String,
    pub url: String,
    /// The bundle's label, or the file name when it cannot be read.
    pub label: String,
    /// `2025-01-01 12:00 UTC · throughput + context · 140 KB`.
    pub detail: String,
    /// Why the file cannot be loaded.
    pub error: Option<String>,
    /// A run loaded from this file is in the run list.
    pub loaded: bool,
    pub simulated: bool,
    pub complete: bool,
    /// For an imported bundle: the tool that measured it.
    pub imported_from: Option<String>,
}

impl FolderRow {
    fn of(e: &FolderEntry, loaded: bool) -> FolderRow {
        let (label, date, sweeps) = match &e.bundle {
            Some(f) => {
                let kinds: Vec<&str> = f
                    .sweeps
                    .iter()
                    .map(|k| match k {
                        SweepKind::Throughput => "throughput",
                        SweepKind::Context => "context",
                        SweepKind::Rate => "rate",
                        SweepKind::Unknown => "other sweep",
                    })
                    .collect();
                let sweeps = if f.selftest {
                    "client selftest".to_string()
                } else if kinds.is_empty() {
                    "no sweeps".to_string()
                } else {
                    kinds.join(" + ")
                };
                (
                    llmsweep_shared::shorten::label(&f.label).into_owned(),
                    run_date((!f.date_unknown).then_some(f.created_at.as_str())),
                    Some(sweeps),
                )
            }
            None => (
                e.name.clone(),
                e.modified.as_deref().map(short_date).unwrap_or_default(),
                None,
            ),
        };
        let detail: Vec<String> = [Some(date).filter(|d| !d.is_empty()), sweeps]
            .into_iter()
            .flatten()
            .chain([human_size(e.size_bytes)])
            .collect();
        FolderRow {
            name: e.name.clone(),
            url: e.url.clone(),
            label,
            detail: detail.join(" · "),
            error: e
                .error
                .as_deref()
                .map(|e| llmsweep_shared::shorten::fact(e).into_owned()),
            loaded,
            // A selftest's endpoint is llmsweep's own, but it measures the real client.
            simulated: e
                .bundle
                .as_ref()
                .is_some_and(|f| f.simulated && !f.selftest),
            complete: e.bundle.as_ref().is_none_or(|f| f.complete),
            imported_from: e.bundle.as_ref().and_then(|f| f.imported_from.clone()),
        }
    }
}

/// `512 B`, `21 KB`, `3.4 MB`.
/// A compared run's name: its label, or for one shape of a `--shapes` run the whole run's.
fn compared_label(r: &Run) -> String {
    if Arc::ptr_eq(&r.whole, &r.bundle) {
        r.label.clone()
    } else {
        super::shown_label(&r.whole)
    }
}

fn human_size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{} KB", b.div_ceil(1024)),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// What the client view shows of one selftest: its tables, and the loaded runs of its host set
/// against its capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientCard {
    pub id: RunId,
    pub source: String,
    pub view: SelftestView,
    /// One line per loaded run measured from this host (see [`capacity_share`]).
    pub shares: Vec<String>,
    /// Why no run is set against the capacity, when runs are loaded but none is.
    pub no_share: Option<String>,
}

impl ClientCard {
    fn of(e: &SelftestEntry, runs: &[Run]) -> Option<ClientCard> {
        let view = SelftestView::of(&e.bundle)?;
        let shares: Vec<String> = runs
            .iter()
            .filter_map(|r| capacity_share(&r.label, &r.bundle, &e.bundle))
            .map(|s| s.line)
            .collect();
        let no_share = (shares.is_empty() && !runs.is_empty()).then(|| {
            format!(
                "No loaded run was measured by llmsweep from {}, so none is set against this \
                 capacity (a run counts only from the same client host, with its requests' \
                 event counts).",
                view.host
            )
        });
        Some(ClientCard {
            id: e.id,
            source: e.source.clone(),
            view,
            shares,
            no_share,
        })
    }
}

/// What the run list says about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFacts {
    pub model: String,
    /// `sglang 0.4.0`, `llama.cpp`, or `unknown engine`.
    pub engine: String,
    /// GPUs and `--note`s, e.g. `2x RTX A6000 · tp=2`.
    pub hardware: String,
    /// `2025-01-01 12:00 UTC`.
    pub date: String,
    pub complete: bool,
    pub simulated: bool,
    /// `7 throughput points, 4 context points`.
    pub points: String,
    /// Flag word → points flagged with it, e.g. `short ×2`.
    pub flags: Vec<String>,
    /// For an imported run: where its numbers come from, in one line.
    pub imported: Option<String>,
    /// For an imported run: the source's definitions, and what the import left out.
    pub source_definitions: Vec<(String, String)>,
    pub import_notes: Vec<String>,
    /// One sentence per sweep, e.g. `throughput: peak steady 479 tok/s at C=16; …`.
    pub headlines: Vec<String>,
    /// The server's highest queue and KV-cache usage over the run and where, e.g. `peak queue
    /// 12 at C=16 · peak KV cache 87 % at C=16`; `None` without server samples.
    pub peaks: Option<String>,
    /// The GPUs serving the model and who said so, e.g. `2 (the server: TP 2 × DP 1 × PP 1)`.
    pub gpus: Option<String>,
    /// Speculative decoding's settings and measured acceptance, e.g. `NEXTN, 3 steps;
    /// accepted 2.58 to 2.62 tokens per step over 8 points`.
    pub speculative: Option<String>,
}

impl RunFacts {
    pub fn of(b: &Bundle) -> RunFacts {
        let engine = match (&b.target.engine, &b.target.engine_version) {
            (Some(e), Some(v)) => format!("{e} {v}"),
            (Some(e), None) => e.clone(),
            _ => "unknown engine".into(),
        };
        let mut hw: Vec<String> = b.hosts.gpus.iter().map(|g| g.name.clone()).collect();
        hw.extend(b.hosts.notes.iter().map(|(k, v)| format!("{k}={v}")));
        let mut flags: BTreeMap<&str, usize> = BTreeMap::new();
        for p in b.sweeps.iter().flat_map(|s| &s.points) {
            for f in &p.flags {
                *flags.entry(f.kind.as_str()).or_default() += 1;
            }
        }
        RunFacts {
            model: b.target.model.clone(),
            engine,
            hardware: hw.join(" · "),
            date: run_date(b.run_date()),
            complete: b.complete,
            simulated: b.target.simulated,
            points: point_counts(b),
            flags: flags
                .into_iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect(),
            imported: llmsweep_shared::compare::source_line(b),
            source_definitions: if b.is_imported() {
                b.definitions
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            } else {
                Vec::new()
            },
            import_notes: b
                .source
                .as_ref()
                .map(|s| s.notes.clone())
                .unwrap_or_default(),
            headlines: b
                .sweeps
                .iter()
                .filter_map(|s| {
                    let h = llmsweep_shared::headline::headline(s)?;
                    Some(format!(
                        "{}: {h}",
                        llmsweep_shared::compare::kind_name(s.kind)
                    ))
                })
                .collect(),
            peaks: llmsweep_shared::bundle::run_peaks(b).line(),
            gpus: llmsweep_shared::deploy::gpus(b).map(|g| format!("{} ({})", g.count, g.source)),
            speculative: llmsweep_shared::deploy::speculative_line(b),
        }
    }
}

fn point_counts(b: &Bundle) -> String {
    let count = |k| {
        b.sweeps
            .iter()
            .filter(|s| s.kind == k)
            .map(|s| s.points.len())
            .sum::<usize>()
    };
    let parts: Vec<String> = [
        (count(SweepKind::Throughput), "throughput"),
        (count(SweepKind::Context), "context"),
        (count(SweepKind::Rate), "rate"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, k)| format!("{n} {k} point{}", if n == 1 { "" } else { "s" }))
    .collect();
    if parts.is_empty() {
        "no sweeps".into()
    } else {
        parts.join(", ")
    }
}

/// The run's date as shown, or "date unknown" for an imported run whose source does not say.
fn run_date(date: Option<&str>) -> String {
    date.map_or_else(|| "date unknown".to_string(), short_date)
}

/// `2025-01-01T12:34:56Z` → `2025-01-01 12:34 UTC`; anything else as it is.
fn short_date(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(d), Some(t)) if rfc3339.ends_with('Z') => format!("{d} {t} UTC"),
        _ => rfc3339.to_string(),
    }
}

impl ViewerState {
    /// The loaded runs in load order, by id: the keys of the run list's rows.
    pub fn run_ids(&self) -> Vec<RunId> {
        self.runs.iter().map(|r| r.id).collect()
    }

    /// The shown runs in load order, by id: the keys of the run pickers' options.
    pub fn shown_ids(&self) -> Vec<RunId> {
        self.shown().map(|r| r.id).collect()
    }

    /// The loaded selftests in load order, by id: the keys of the client list's rows.
    pub fn selftest_ids(&self) -> Vec<RunId> {
        self.selftests.iter().map(|s| s.id).collect()
    }

    /// What the client view shows of selftest `id`; `None` once it is removed.
    pub fn client_card(&self, id: RunId) -> Option<ClientCard> {
        let e = self.selftests.iter().find(|s| s.id == id)?;
        ClientCard::of(e, &self.runs)
    }

    /// The changing part of run `id`'s row; `None` once it is removed.
    pub fn run_row(&self, id: RunId) -> Option<RunRow> {
        self.run(id).map(RunRow::of)
    }

    /// The shown runs as the chart code takes them.
    pub fn chart_runs(&self) -> Vec<ChartRun<'_>> {
        self.shown()
            .map(|r| ChartRun {
                label: &r.label,
                color: run_color(r.color),
                bundle: &r.bundle,
            })
            .collect()
    }

    /// The comparison of the shown runs against the baseline; `None` with fewer than two.
    pub fn comparison(&self) -> Option<Comparison> {
        let compared = self.compared();
        if compared.len() < 2 {
            return None;
        }
        let base = self.baseline()?;
        let base = self.run(base)?;
        let index = compared
            .iter()
            .position(|r| Arc::ptr_eq(&r.whole, &base.whole))?;
        let labels: Vec<String> = compared.iter().map(|r| compared_label(r)).collect();
        let inputs: Vec<RunInput> = compared
            .iter()
            .zip(&labels)
            .map(|(r, label)| RunInput {
                label,
                bundle: &r.whole,
            })
            .collect();
        Some(compare(&inputs, index))
    }

    /// The runs a comparison takes: the shown runs, the shapes of one `--shapes` run taken once
    /// as the whole run (at its first shown shape), since the comparison pairs them by shape.
    fn compared(&self) -> Vec<&Run> {
        let mut out: Vec<&Run> = Vec::new();
        for r in self.shown() {
            if !out.iter().any(|o| Arc::ptr_eq(&o.whole, &r.whole)) {
                out.push(r);
            }
        }
        out
    }

    /// The color of each run [`ViewerState::comparison`] compares, in its order.
    pub fn comparison_colors(&self) -> Vec<Rgb> {
        self.compared().iter().map(|r| run_color(r.color)).collect()
    }

    /// Why the shown runs' `kind` sweeps are not like for like: one line per shown run whose
    /// workload (input or output length, …) differs from the baseline's. Overlaid curves of
    /// different workloads look comparable and are not; the charts say so above them.
    pub fn workload_warnings(&self, kind: SweepKind) -> Vec<String> {
        let Some(base) = self.baseline().and_then(|id| self.run(id)) else {
            return Vec::new();
        };
        let Some(base_sweep) = sweep_of(&base.bundle, kind) else {
            return Vec::new();
        };
        self.shown()
            .filter(|r| r.id != base.id)
            .filter_map(|r| {
                let s = sweep_of(&r.bundle, kind)?;
                let reasons = workload_mismatch(base_sweep, s, &r.bundle, &base.bundle);
                (!reasons.is_empty()).then(|| {
                    format!(
                        "{} ran a different {} workload than {}: {}. Its curves are drawn, but are not like for like.",
                        r.label,
                        kind_name(kind),
                        base.label,
                        reasons.join("; ")
                    )
                })
            })
            .collect()
    }

    /// What a tooltip adds to the hovered mark `at` of a `kind` chart: every shown run's value
    /// at that level, with its change against the baseline. Empty with one run shown.
    pub fn hover_across(&self, kind: ChartKind, at: PointRef) -> String {
        let runs = self.chart_runs();
        let base = self
            .baseline()
            .and_then(|id| self.shown().position(|r| r.id == id))
            .unwrap_or(0);
        across_runs(kind, &runs, at, base)
    }

    /// The folder's name, once listed.
    pub fn folder_name(&self) -> Option<String> {
        match &self.folder {
            Some(Folder::Listed(l)) => Some(l.folder.clone()),
            _ => None,
        }
    }

    pub fn folder_status(&self) -> FolderStatus {
        match &self.folder {
            None | Some(Folder::Reading) => FolderStatus::Reading,
            Some(Folder::Failed(e)) => FolderStatus::Failed(e.clone()),
            Some(Folder::Listed(l)) if l.bundles.is_empty() => FolderStatus::Empty,
            Some(Folder::Listed(_)) => FolderStatus::Listed,
        }
    }

    /// The folder's files as the folder list shows them, newest first; loaded ones marked.
    pub fn folder_rows(&self) -> Vec<FolderRow> {
        let Some(Folder::Listed(l)) = &self.folder else {
            return Vec::new();
        };
        l.bundles
            .iter()
            .map(|e| {
                let loaded = self.runs.iter().any(|r| r.source == e.name)
                    || self.selftests.iter().any(|s| s.source == e.name);
                FolderRow::of(e, loaded)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use llmsweep_shared::folder::FolderListing;

    use super::super::tests::{bundle, two, with_requests};
    use super::*;

    #[test]
    fn comparison_uses_display_labels_and_the_baseline() {
        let (mut s, _a, b) = two();
        s.rename(b, "new");
        s.set_baseline(b);
        let c = s.comparison().unwrap();
        assert_eq!(c.labels, ["kpro5", "new"]);
        assert_eq!(c.baseline, 1);
    }

    #[test]
    fn run_facts_name_the_server_peaks_and_where() {
        use llmsweep_shared::bundle::{Point, ServerSamples, Sweep};
        let mut b = bundle("kpro5");
        let mut sweep: Sweep = serde_json::from_str(r#"{"kind": "context", "concurrency": [1], "input_lens": [1000, 8000], "output_len": 100, "timeout_s": 60}"#).unwrap();
        sweep.points = vec![Point::empty(1, 1000, 100), Point::empty(1, 8000, 100)];
        sweep.points[1].server_samples = Some(ServerSamples {
            peak_queue: Some(3.0),
            peak_kv: Some(0.625),
            ..Default::default()
        });
        b.sweeps.push(sweep.clone());
        sweep.points[1].server_samples = None;
        assert_eq!(
            RunFacts::of(&b).peaks.as_deref(),
            Some("peak queue 3 at 8000 input tokens · peak KV cache 62 % at 8000 input tokens")
        );
        b.sweeps[0] = sweep;
        assert_eq!(RunFacts::of(&b).peaks, None, "no server samples");
        let mut tp: Sweep = serde_json::from_str(r#"{"kind": "throughput", "concurrency": [4], "input_lens": [1000], "output_len": 100, "timeout_s": 60}"#).unwrap();
        tp.points = vec![Point::empty(4, 1000, 100)];
        tp.points[0].server_samples = Some(ServerSamples {
            peak_queue: Some(3.0),
            peak_kv: Some(0.625),
            ..Default::default()
        });
        b.sweeps.push(tp);
        assert_eq!(
            RunFacts::of(&b).peaks.as_deref(),
            Some("peak queue 3 at C=4 · peak KV cache 62 % at C=4")
        );
    }

    #[test]
    fn run_rows_follow_one_run_by_id() {
        let (mut s, a, b) = two();
        assert_eq!(s.run_ids(), [a, b]);
        let before = s.run_row(b);
        s.rename(a, "old host");
        s.toggle(a);
        assert_eq!(
            s.run_row(b),
            before,
            "another run's change leaves the row as it is"
        );
        let row = s.run_row(a).unwrap();
        assert_eq!(row.label, "old host");
        assert!(!row.visible);
        assert_eq!(row.original.as_deref(), Some("bundle label: kpro5"));
        assert_eq!(row.color, run_color(0).hex());
        assert_eq!(s.shown_ids(), [b]);
        s.remove(a);
        assert_eq!(s.run_row(a), None);
        assert_eq!(s.run_ids(), [b]);
    }

    #[test]
    fn facts_for_the_run_list() {
        let f = RunFacts::of(&bundle("a"));
        assert_eq!(f.engine, "sglang 0.4.0");
        assert_eq!(f.hardware, "gpu=2x RTX A6000");
        assert_eq!(f.date, "2025-01-01 00:00 UTC");
        assert_eq!(f.points, "no sweeps");
        assert!(f.complete && !f.simulated);
    }

    fn listing() -> FolderListing {
        serde_json::from_str(
            r#"{"folder": "results", "bundles": [
                {"name": "kpro6 new.json.gz", "url": "bundles/kpro6%20new.json.gz",
                 "size_bytes": 3500000, "modified": "2025-01-02T09:00:00Z",
                 "bundle": {"label": "kpro6", "created_at": "2025-01-02T08:59:00Z",
                            "complete": false, "simulated": true,
                            "sweeps": ["throughput", "context"]}},
                {"name": "broken.json", "url": "bundles/broken.json", "size_bytes": 300,
                 "modified": "2025-01-01T10:00:00Z", "error": "not valid JSON: EOF"},
                {"name": "a.json", "url": "bundles/a.json", "size_bytes": 2048,
                 "bundle": {"label": "kpro5", "created_at": "2025-01-01T00:00:00Z",
                            "complete": true, "sweeps": []}}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn folder_rows_say_what_each_file_is_and_which_are_loaded() {
        let mut s = ViewerState::default();
        assert!(s.folder_rows().is_empty());
        assert_eq!(s.folder_status(), FolderStatus::Reading);
        s.folder = Some(Folder::Listed(listing()));
        let url = "bundles/kpro6%20new.json.gz";
        let source = s.source_of_url(url);
        assert_eq!(source, "kpro6 new.json.gz");
        s.add(&source, bundle("kpro6"));
        s.add("dropped.json", bundle("x"));
        let rows = s.folder_rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[0].label.as_str(), rows[0].loaded, rows[0].complete),
            ("kpro6", true, false)
        );
        assert!(rows[0].simulated);
        assert_eq!(
            rows[0].detail,
            "2025-01-02 08:59 UTC · throughput + context · 3.3 MB"
        );
        assert_eq!(rows[1].label, "broken.json");
        assert_eq!(rows[1].error.as_deref(), Some("not valid JSON: EOF"));
        assert_eq!(rows[1].detail, "2025-01-01 10:00 UTC · 300 B");
        assert!(!rows[1].loaded);
        assert_eq!(rows[2].detail, "2025-01-01 00:00 UTC · no sweeps · 2 KB");
        assert_eq!(s.folder_status(), FolderStatus::Listed);
        assert_eq!(s.folder_name().as_deref(), Some("results"));
        assert_eq!(s.folder_urls(), Some(vec![url.to_string()]));
    }

    #[test]
    fn a_selftest_in_the_folder_is_named_as_one_and_not_simulated() {
        let mut s = ViewerState::default();
        let listing = r#"{"folder": "results", "bundles": [
            {"name": "kpro5-selftest.json", "url": "bundles/kpro5-selftest.json", "size_bytes": 4096,
             "bundle": {"label": "kpro5", "created_at": "2026-12-01T14:00:00Z", "complete": true,
                        "simulated": true, "sweeps": [], "selftest": true}}]}"#;
        s.folder = Some(Folder::Listed(serde_json::from_str(listing).unwrap()));
        let row = &s.folder_rows()[0];
        assert_eq!(row.detail, "2026-12-01 14:00 UTC · client selftest · 4 KB");
        assert!(!row.simulated && !row.loaded);
        let selftest = include_str!("../../../shared/tests/fixtures/bundle-v1-selftest.json");
        s.load_bytes("kpro5-selftest.json", selftest.as_bytes());
        assert!(s.folder_rows()[0].loaded);
        assert_eq!(
            s.folder_urls(),
            Some(vec!["bundles/kpro5-selftest.json".to_string()]),
            "a reload keeps it open"
        );
    }

    #[test]
    fn different_workloads_overlaid_are_named_above_the_charts() {
        let mut s = ViewerState::default();
        s.add("a.json", with_requests("kpro5"));
        let mut other = with_requests("kpro6");
        other.sweeps[0].output_len = 64;
        let b = s.add("b.json", other);
        let w = s.workload_warnings(SweepKind::Throughput);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("kpro6 ran a different throughput workload than kpro5: output lengths differ: 4 vs 64"),
            "{}",
            w[0]
        );
        assert!(s.workload_warnings(SweepKind::Context).is_empty());
        s.toggle(b);
        assert!(
            s.workload_warnings(SweepKind::Throughput).is_empty(),
            "hidden runs are not drawn"
        );
        s.toggle(b);
        s.add("c.json", with_requests("kpro7"));
        assert_eq!(
            s.workload_warnings(SweepKind::Throughput).len(),
            1,
            "the same workload is fine"
        );
    }

    #[test]
    fn the_tooltip_lists_every_shown_run_against_the_baseline() {
        let sample = Bundle::from_json(include_str!("../../../dist/sample.json")).unwrap();
        let mut faster = sample.clone();
        faster.label = "kpro6".into();
        for p in faster.sweeps.iter_mut().flat_map(|s| &mut s.points) {
            if let Some(s) = &mut p.summary {
                s.agg_tok_s *= 2.0;
            }
        }
        let mut s = ViewerState::default();
        s.add("a.json", sample);
        let b = s.add("b.json", faster);
        let at = PointRef {
            run: 1,
            sweep: 0,
            point: 2,
        };
        let text = s.hover_across(ChartKind::OutputTokS, at);
        let agg = text
            .split("aggregate output tok/s\n")
            .nth(1)
            .unwrap_or_default();
        let lines: Vec<&str> = agg.lines().take(2).collect();
        assert!(text.starts_with("every run at C=4:\n"), "{text}");
        assert!(
            lines[0].starts_with("  sample: ") && lines[0].ends_with(" (baseline)"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("  kpro6: ") && lines[1].contains(": 338.8 (+100.0 "),
            "{text}"
        );
        s.set_baseline(b);
        let text = s.hover_across(ChartKind::OutputTokS, at);
        assert!(
            text.contains("  sample: 169.4 (-50.0 "),
            "the chosen baseline: {text}"
        );
        assert!(text.contains("  kpro6: 338.8 (baseline)"), "{text}");
        s.toggle(b);
        assert_eq!(
            s.hover_across(ChartKind::OutputTokS, at),
            "",
            "one run shown"
        );
    }
}
