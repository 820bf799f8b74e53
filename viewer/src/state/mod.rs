//! The viewer's state as a plain type: loaded runs, load errors, and what is being looked at.
//! Every user action is a method here, tested natively; the components only call them. What
//! the page shows of it, ready to display, is derived in [`view_model`].

pub mod view_model;

use std::sync::Arc;

use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::PointStatus;
use llmsweep_shared::charts::{color_slots, run_color};
use llmsweep_shared::folder::{FolderListing, bundle_name, bundle_url};

/// Identifies a run for as long as it is loaded (never reused).
pub type RunId = u32;

/// One loaded bundle and how it is shown.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: RunId,
    /// The file name or URL it came from.
    pub source: String,
    pub bundle: Arc<Bundle>,
    /// The whole bundle the run came from: `bundle` itself, or for one shape of a `--shapes`
    /// run (shown as a run of its own) the run with every shape, which comparisons pair by shape.
    pub whole: Arc<Bundle>,
    /// The label shown; starts as the bundle's own.
    pub label: String,
    /// Index into the chart palette; the same in every chart. Chosen from the run itself among
    /// the loaded runs (see [`color_slots`]), so it does not depend on the order of loading.
    pub color: usize,
    pub visible: bool,
}

impl Run {
    /// `#rrggbb` of the run's color.
    pub fn css_color(&self) -> String {
        run_color(self.color).hex()
    }

    /// Whether the label was changed for display.
    pub fn renamed(&self) -> bool {
        self.label != shown_label(&self.bundle)
    }
}

/// The label a run starts with: the bundle's own, shortened when long (a label is a file's text,
/// and may be a megabyte; the whole of it stays in the bundle and under the run's facts).
pub fn shown_label(b: &Bundle) -> String {
    llmsweep_shared::shorten::label(&b.label).into_owned()
}

/// A loaded `llmsweep selftest` bundle: the client's measured capacity. It is shown beside the
/// runs as what it is and never as one of them (no color, no chart, no comparison).
#[derive(Debug, Clone)]
pub struct SelftestEntry {
    pub id: RunId,
    /// The file name or URL it came from.
    pub source: String,
    pub bundle: Arc<Bundle>,
}

/// A file that could not be loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    pub id: u32,
    pub source: String,
    pub reason: String,
}

/// The views of the main area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Throughput,
    Context,
    /// Open-loop rate sweeps; there only while a run has one.
    Rate,
    Requests,
    Compare,
    /// The client's capacity (selftests); there only while one is loaded.
    Client,
    /// A metric across a label's runs; there while two runs of one label (loaded, or in the
    /// served folder) can make a history.
    History,
}

impl Tab {
    pub const ALL: [Tab; 7] = [
        Tab::Throughput,
        Tab::Context,
        Tab::Rate,
        Tab::Requests,
        Tab::Compare,
        Tab::Client,
        Tab::History,
    ];

    /// The tab a `?tab=` value names (`throughput`, `context`, `rate`, `requests`, `compare`,
    /// `client`).
    pub fn from_name(name: &str) -> Option<Tab> {
        Tab::ALL
            .into_iter()
            .find(|t| t.title().eq_ignore_ascii_case(name.trim()))
    }

    pub fn title(self) -> &'static str {
        match self {
            Tab::Throughput => "Throughput",
            Tab::Context => "Context",
            Tab::Rate => "Rate",
            Tab::Requests => "Requests",
            Tab::Compare => "Compare",
            Tab::Client => "Client",
            Tab::History => "History",
        }
    }
}

/// The point whose requests the per-request view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    pub run: RunId,
    pub sweep: usize,
    pub point: usize,
}

/// The folder of bundles the page was served with (`llmsweep view`).
#[derive(Debug, Clone, PartialEq)]
pub enum Folder {
    /// The listing is being read for the first time.
    Reading,
    Listed(FolderListing),
    /// The listing could not be read, and why.
    Failed(String),
}

/// Everything the viewer shows, and every change a person can make to it.
#[derive(Debug, Clone, Default)]
pub struct ViewerState {
    runs: Vec<Run>,
    selftests: Vec<SelftestEntry>,
    errors: Vec<LoadError>,
    next_id: u32,
    pub tab: Tab,
    baseline: Option<RunId>,
    selection: Option<Selection>,
    /// `Some` when the page was served with a folder of bundles.
    pub folder: Option<Folder>,
}

impl ViewerState {
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    pub fn selftests(&self) -> &[SelftestEntry] {
        &self.selftests
    }

    /// Neither a run nor a selftest is loaded.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.selftests.is_empty()
    }

    /// The views there is something to show in: the four run views while a run is loaded, the
    /// client's while a selftest is.
    pub fn tabs(&self) -> Vec<Tab> {
        Tab::ALL
            .into_iter()
            .filter(|t| match t {
                Tab::Client => !self.selftests.is_empty(),
                Tab::History => self.has_history(),
                Tab::Rate => self.runs.iter().any(|r| {
                    r.bundle
                        .sweeps
                        .iter()
                        .any(|w| w.kind == llmsweep_shared::bundle::SweepKind::Rate)
                }),
                _ => !self.runs.is_empty(),
            })
            .collect()
    }

    /// The view shown: the chosen one while it has something to show, else the first that has.
    /// What a history is made of: the served folder's listing (its runs' summaries), else the
    /// loaded runs summed up the same way.
    pub fn history_listing(&self) -> FolderListing {
        if let Some(Folder::Listed(l)) = &self.folder {
            return l.clone();
        }
        let mut seen = std::collections::HashSet::new();
        FolderListing {
            folder: "the runs open".into(),
            bundles: self
                .runs
                .iter()
                .filter(|r| seen.insert(Arc::as_ptr(&r.whole)))
                .map(|r| llmsweep_shared::folder::FolderEntry {
                    name: r.source.clone(),
                    url: String::new(),
                    size_bytes: 0,
                    modified: None,
                    bundle: Some(llmsweep_shared::folder::BundleFacts::of(&r.whole)),
                    error: None,
                    etag: None,
                    summary: Some(llmsweep_shared::history::RunSummary::of(&r.whole)),
                })
                .collect(),
        }
    }

    /// Whether some label has two runs to make a history of (see [`Self::history_listing`]).
    pub fn has_history(&self) -> bool {
        let mut labels = std::collections::HashMap::<&str, usize>::new();
        match &self.folder {
            Some(Folder::Listed(l)) => {
                for f in l.bundles.iter().filter_map(|e| e.bundle.as_ref()) {
                    *labels.entry(f.label.as_str()).or_default() += 1;
                }
            }
            _ => {
                let mut seen = std::collections::HashSet::new();
                for r in self
                    .runs
                    .iter()
                    .filter(|r| seen.insert(Arc::as_ptr(&r.whole)))
                {
                    *labels.entry(r.whole.label.as_str()).or_default() += 1;
                }
            }
        }
        labels.values().any(|&n| n >= 2)
    }

    pub fn shown_tab(&self) -> Tab {
        let tabs = self.tabs();
        if tabs.contains(&self.tab) {
            self.tab
        } else {
            tabs.first().copied().unwrap_or_default()
        }
    }

    pub fn errors(&self) -> &[LoadError] {
        &self.errors
    }

    pub fn run(&self, id: RunId) -> Option<&Run> {
        self.runs.iter().find(|r| r.id == id)
    }

    /// The runs drawn in charts, in load order.
    pub fn shown(&self) -> impl Iterator<Item = &Run> {
        self.runs.iter().filter(|r| r.visible)
    }

    fn take_id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    /// Loads a file's bytes as a new run; on failure records an error naming `source`.
    pub fn load_bytes(&mut self, source: &str, bytes: &[u8]) -> Option<RunId> {
        match crate::load::parse(bytes) {
            Ok(b) => Some(self.add(source, b)),
            Err(reason) => {
                self.fail(source, &reason);
                None
            }
        }
    }

    /// Adds a parsed bundle as a new, shown run (a `--shapes` run as one run per shape, the id
    /// returned its first's); a selftest bundle becomes a selftest entry instead, and its view is
    /// shown.
    pub fn add(&mut self, source: &str, bundle: Bundle) -> RunId {
        if bundle.selftest.is_none() && llmsweep_shared::shapes::shaped(&bundle) {
            let whole = Arc::new(bundle);
            let mut first = None;
            for part in llmsweep_shared::shapes::split(&whole) {
                let id = self.take_id();
                first.get_or_insert(id);
                self.runs.push(Run {
                    id,
                    source: source.to_string(),
                    label: shown_label(&part),
                    bundle: Arc::new(part),
                    whole: whole.clone(),
                    color: 0,
                    visible: true,
                });
            }
            self.recolor();
            if let Some(id) = first {
                return id;
            }
            return self.add(source, Arc::unwrap_or_clone(whole));
        }
        let id = self.take_id();
        if bundle.selftest.is_some() {
            self.selftests.push(SelftestEntry {
                id,
                source: source.to_string(),
                bundle: Arc::new(bundle),
            });
            self.tab = Tab::Client;
            return id;
        }
        let bundle = Arc::new(bundle);
        self.runs.push(Run {
            id,
            source: source.to_string(),
            label: shown_label(&bundle),
            whole: bundle.clone(),
            bundle,
            color: 0,
            visible: true,
        });
        self.recolor();
        id
    }

    /// Gives every loaded run its color by the shared rule: the same set of runs, loaded in any
    /// order, gets the same colors (hidden runs keep theirs, so hiding recolors nothing).
    fn recolor(&mut self) {
        let bundles: Vec<&Bundle> = self.runs.iter().map(|r| r.bundle.as_ref()).collect();
        let slots = color_slots(&bundles);
        for (r, slot) in self.runs.iter_mut().zip(slots) {
            r.color = slot;
        }
    }

    /// Loads the bundles embedded in the page (a report) and chooses the first view: the one
    /// `asked` for (`?tab=`), else the comparison when the page brought two runs or more, else
    /// the run's charts, and the client's capacity for a page of selftests only.
    pub fn open_embedded(&mut self, embedded: Vec<(String, Vec<u8>)>, asked: Option<Tab>) {
        let before = self.tab;
        for (name, bytes) in &embedded {
            self.load_bytes(name, bytes);
        }
        self.tab = match asked {
            Some(tab) => tab,
            None if self.runs.len() >= 2 => Tab::Compare,
            None if self.runs.is_empty() => self.tab,
            None => before,
        };
    }

    /// Records that `source` could not be loaded, and why.
    pub fn fail(&mut self, source: &str, reason: &str) {
        let id = self.take_id();
        self.errors.push(LoadError {
            id,
            source: source.to_string(),
            reason: reason.to_string(),
        });
    }

    pub fn dismiss_error(&mut self, id: u32) {
        self.errors.retain(|e| e.id != id);
    }

    pub fn toggle(&mut self, id: RunId) {
        if let Some(r) = self.runs.iter_mut().find(|r| r.id == id) {
            r.visible = !r.visible;
        }
    }

    /// Sets the display label; an empty one restores the bundle's own.
    pub fn rename(&mut self, id: RunId, label: &str) {
        if let Some(r) = self.runs.iter_mut().find(|r| r.id == id) {
            let label = label.trim();
            r.label = if label.is_empty() {
                shown_label(&r.bundle)
            } else {
                label.to_string()
            };
        }
    }

    /// Removes run or selftest `id`.
    pub fn remove(&mut self, id: RunId) {
        self.selftests.retain(|s| s.id != id);
        self.runs.retain(|r| r.id != id);
        self.recolor();
        if self.baseline == Some(id) {
            self.baseline = None;
        }
        if self.selection.is_some_and(|s| s.run == id) {
            self.selection = None;
        }
    }

    /// The baseline of comparisons: the chosen one while it is shown, else the first shown run.
    pub fn baseline(&self) -> Option<RunId> {
        let chosen = self
            .baseline
            .filter(|id| self.run(*id).is_some_and(|r| r.visible));
        chosen.or_else(|| self.shown().next().map(|r| r.id))
    }

    pub fn set_baseline(&mut self, id: RunId) {
        if self.run(id).is_some() {
            self.baseline = Some(id);
        }
    }

    /// The point the per-request view shows: the chosen one while its run is shown, else the
    /// first point with requests of the first shown run.
    pub fn selection(&self) -> Option<Selection> {
        let valid = |s: &Selection| {
            self.run(s.run).is_some_and(|r| {
                r.visible && points_with_requests(&r.bundle).contains(&(s.sweep, s.point))
            })
        };
        self.selection.filter(valid).or_else(|| {
            self.shown().find_map(|r| {
                let (sweep, point) = *points_with_requests(&r.bundle).first()?;
                Some(Selection {
                    run: r.id,
                    sweep,
                    point,
                })
            })
        })
    }

    /// Selects the first point with requests of run `id`.
    pub fn select_run(&mut self, id: RunId) {
        let first = self
            .run(id)
            .and_then(|r| points_with_requests(&r.bundle).first().copied());
        if let Some((sweep, point)) = first {
            self.selection = Some(Selection {
                run: id,
                sweep,
                point,
            });
        }
    }

    pub fn select(&mut self, s: Selection) {
        self.selection = Some(s);
    }

    /// The name a bundle fetched from `url` is listed under: the file name for a bundle of the
    /// folder (so the folder list knows it is loaded), else the URL.
    pub fn source_of_url(&self, url: &str) -> String {
        match (&self.folder, bundle_name(url)) {
            (Some(_), Some(name)) => name,
            _ => url.to_string(),
        }
    }

    /// The `bundle` addresses that reload the runs taken from the folder, in run order; `None`
    /// until the folder is listed.
    pub fn folder_urls(&self) -> Option<Vec<String>> {
        let Some(Folder::Listed(l)) = &self.folder else {
            return None;
        };
        let urls = self
            .runs
            .iter()
            .map(|r| &r.source)
            .chain(self.selftests.iter().map(|s| &s.source))
            .filter(|source| l.bundles.iter().any(|e| &e.name == *source))
            .map(|source| bundle_url(source))
            .collect();
        Some(urls)
    }

    /// Selects the point of the `run_index`-th shown run (as charts number them).
    pub fn select_shown(&mut self, run_index: usize, sweep: usize, point: usize) {
        let id = self.shown().nth(run_index).map(|r| r.id);
        if let Some(id) = id {
            self.selection = Some(Selection {
                run: id,
                sweep,
                point,
            });
        }
    }

    /// A chart point chosen (clicked, or Enter): opens its requests, or, when the point has no
    /// per-request records (an imported run, a skipped point), leaves the view as it is and
    /// says why; another run's requests are never shown in its place.
    pub fn pick_shown(
        &mut self,
        run_index: usize,
        sweep: usize,
        point: usize,
    ) -> Result<(), String> {
        let Some(run) = self.shown().nth(run_index) else {
            return Err("That run is no longer shown.".into());
        };
        if points_with_requests(&run.bundle).contains(&(sweep, point)) {
            self.select_shown(run_index, sweep, point);
            self.tab = Tab::Requests;
            return Ok(());
        }
        let b = &run.bundle;
        let p = b
            .sweeps
            .get(sweep)
            .and_then(|s| s.points.get(point).map(|p| (s, p)));
        let at = p
            .map(|(s, p)| {
                let key = llmsweep_shared::compare::level_key(s.kind, p);
                format!(
                    " at {}",
                    llmsweep_shared::compare::verdict::level_list(s.kind, &[key])
                )
            })
            .unwrap_or_default();
        let why = match (&b.source, p) {
            (Some(src), _) => format!("imported from {}", src.tool),
            (None, Some((_, p))) if p.status == PointStatus::Skipped => format!(
                "skipped: {}",
                p.reason.as_deref().unwrap_or("no reason recorded")
            ),
            _ => "none were recorded".into(),
        };
        Err(format!(
            "{}'s point{at} has no per-request records ({why}).",
            run.label
        ))
    }
}

/// `(sweep, point)` of every point that has request records, in bundle order.
pub fn points_with_requests(b: &Bundle) -> Vec<(usize, usize)> {
    b.sweeps
        .iter()
        .enumerate()
        .flat_map(|(si, s)| {
            s.points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.status != PointStatus::Skipped && !p.requests.is_empty())
                .map(move |(pi, _)| (si, pi))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const MINIMAL: &str = include_str!("../../../shared/tests/fixtures/minimal.json");

    pub(crate) fn bundle(label: &str) -> Bundle {
        let mut b = Bundle::from_json(MINIMAL).unwrap();
        b.label = label.into();
        b
    }

    pub(crate) fn two() -> (ViewerState, RunId, RunId) {
        let mut s = ViewerState::default();
        let a = s.add("a.json", bundle("kpro5"));
        let b = s.add("b.json", bundle("kpro6"));
        (s, a, b)
    }

    #[test]
    fn loading_is_additive_and_errors_do_not_stop_the_rest() {
        let mut s = ViewerState::default();
        assert!(s.load_bytes("a.json", MINIMAL.as_bytes()).is_some());
        assert!(s.load_bytes("broken.json", b"{\"schema\": ").is_none());
        assert!(s.load_bytes("b.json", MINIMAL.as_bytes()).is_some());
        assert_eq!(s.runs().len(), 2);
        assert_eq!(s.errors().len(), 1);
        assert_eq!(s.errors()[0].source, "broken.json");
        assert!(s.errors()[0].reason.starts_with("not valid JSON"));
        let id = s.errors()[0].id;
        s.dismiss_error(id);
        assert!(s.errors().is_empty());
    }

    fn with_id(label: &str, id: &str) -> Bundle {
        let mut b = bundle(label);
        b.id = id.into();
        b
    }

    #[test]
    fn a_run_has_the_same_color_whatever_the_load_order() {
        let mut s = ViewerState::default();
        let a = s.add("a.json", with_id("kpro5", "run-b"));
        let b = s.add("b.json", with_id("kpro6", "run-a"));
        let mut t = ViewerState::default();
        let b2 = t.add("b.json", with_id("kpro6", "run-a"));
        let a2 = t.add("a.json", with_id("kpro5", "run-b"));
        assert_eq!(s.run(a).unwrap().color, t.run(a2).unwrap().color);
        assert_eq!(s.run(b).unwrap().color, t.run(b2).unwrap().color);
        assert_ne!(s.run(a).unwrap().color, s.run(b).unwrap().color);
        s.toggle(a);
        assert_eq!(s.run(a).unwrap().color, 1, "hiding recolors nothing");
        s.remove(b);
        assert_eq!(s.run(a).unwrap().color, 0);
    }

    #[test]
    fn a_page_with_two_embedded_runs_opens_on_the_comparison() {
        let two = vec![
            ("a.json".to_string(), MINIMAL.as_bytes().to_vec()),
            ("b.json".to_string(), MINIMAL.as_bytes().to_vec()),
        ];
        let mut s = ViewerState::default();
        s.open_embedded(two.clone(), None);
        assert_eq!((s.runs().len(), s.tab), (2, Tab::Compare));
        let mut s = ViewerState::default();
        s.open_embedded(two.clone(), Some(Tab::Context));
        assert_eq!(s.tab, Tab::Context, "an asked-for view wins");
        let mut s = ViewerState::default();
        s.open_embedded(two[..1].to_vec(), None);
        assert_eq!(s.tab, Tab::Throughput, "one run opens as before");
        let mut s = ViewerState::default();
        s.open_embedded(vec![two[0].clone(), ("x.json".into(), b"{".to_vec())], None);
        assert_eq!(
            s.tab,
            Tab::Throughput,
            "a broken second file is not a second run"
        );
    }

    #[test]
    fn choosing_an_imported_point_says_it_has_no_requests_and_opens_nothing() {
        let mut s = ViewerState::default();
        let measured = s.add("a.json", with_requests("a"));
        let mut imported = with_requests("old");
        for p in imported.sweeps.iter_mut().flat_map(|s| &mut s.points) {
            p.requests.clear();
        }
        imported.source =
            Some(serde_json::from_str(r#"{"tool": "a text table", "format": "table"}"#).unwrap());
        s.add("old.json", imported);
        let said = s.pick_shown(1, 0, 1).unwrap_err();
        assert_eq!(
            said,
            "old's point at C = 2 has no per-request records (imported from a text table)."
        );
        assert_eq!(s.tab, Tab::Throughput, "the view stays");
        let skipped = s.pick_shown(0, 0, 0).unwrap_err();
        assert!(
            skipped.contains("at C = 1 has no per-request records (skipped"),
            "{skipped}"
        );
        assert_eq!(s.pick_shown(0, 0, 1), Ok(()));
        assert_eq!(s.tab, Tab::Requests);
        assert_eq!(s.selection().map(|x| x.run), Some(measured));
    }

    /// A `--shapes` run loads as one run per shape, labelled with it; the comparison takes each
    /// whole run once, so two such runs are compared shape by shape.
    #[test]
    fn a_shaped_run_is_a_run_per_shape_and_compared_whole() {
        let shaped = |label: &str| {
            let mut b = with_requests(label);
            let mut second = b.sweeps[0].clone();
            second.input_lens = vec![16];
            second.output_len = 8;
            b.sweeps.push(second);
            b
        };
        let mut s = ViewerState::default();
        let first = s.add("a.json", shaped("kpro5"));
        s.add("b.json", shaped("kpro6"));
        let labels: Vec<&str> = s.runs().iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            ["kpro5 8×4", "kpro5 16×8", "kpro6 8×4", "kpro6 16×8"]
        );
        assert_eq!(s.run(first).map(|r| r.bundle.sweeps.len()), Some(1));
        assert_eq!(s.chart_runs().len(), 4);
        let cmp = s.comparison().expect("two runs");
        assert_eq!(cmp.labels, ["kpro5", "kpro6"]);
        let shapes: Vec<String> = cmp.sweeps.iter().map(|w| w.name()).collect();
        assert_eq!(shapes, ["throughput 8×4", "throughput 16×8"]);
        assert!(cmp.sweeps.iter().all(|w| w.runs == [0, 1]));
        assert_eq!(s.comparison_colors().len(), 2);
    }

    #[test]
    fn hide_rename_and_remove() {
        let (mut s, a, b) = two();
        s.toggle(a);
        assert_eq!(s.shown().map(|r| r.id).collect::<Vec<_>>(), [b]);
        assert_eq!(s.chart_runs().len(), 1);
        s.rename(b, "  new host ");
        assert_eq!(s.run(b).unwrap().label, "new host");
        assert!(s.run(b).unwrap().renamed());
        s.rename(b, "");
        assert_eq!(s.run(b).unwrap().label, "kpro6");
        s.remove(a);
        assert_eq!(s.runs().len(), 1);
    }

    #[test]
    fn baseline_defaults_to_the_first_shown_run() {
        let (mut s, a, b) = two();
        assert_eq!(s.baseline(), Some(a));
        s.set_baseline(b);
        assert_eq!(s.baseline(), Some(b));
        s.toggle(b);
        assert_eq!(s.baseline(), Some(a), "a hidden baseline is not used");
        s.toggle(b);
        s.remove(b);
        assert_eq!(s.baseline(), Some(a));
        assert!(s.comparison().is_none(), "nothing to compare with one run");
    }

    #[test]
    fn tabs_by_name() {
        assert_eq!(Tab::from_name("compare"), Some(Tab::Compare));
        assert_eq!(Tab::from_name("Context "), Some(Tab::Context));
        assert_eq!(Tab::from_name("charts"), None);
    }

    /// A bundle whose throughput sweep has a skipped point and then a point with one request.
    pub(crate) fn with_requests(label: &str) -> Bundle {
        let point = |c: u32, status: &str, requests: &str| {
            format!(
                r#"{{"concurrency": {c}, "input_len": 8, "output_len": 4, "status": "{status}",
                    "requests": [{requests}]}}"#
            )
        };
        let request = r#"{"start_s": 0.0, "ttft_s": 0.1, "e2e_s": 0.5, "input_tokens": 8,
                          "output_tokens": 4}"#;
        let sweep = format!(
            r#"[{{"kind": "throughput", "concurrency": [1, 2], "input_lens": [8], "output_len": 4,
                 "timeout_s": 60, "points": [{}, {}]}}]"#,
            point(1, "skipped", ""),
            point(2, "ok", request)
        );
        let mut b =
            Bundle::from_json(&MINIMAL.replace("\"sweeps\": []", &format!("\"sweeps\": {sweep}")))
                .unwrap();
        b.label = label.into();
        b
    }

    #[test]
    fn choosing_a_run_selects_its_first_point_with_requests() {
        let mut s = ViewerState::default();
        let a = s.add("a.json", with_requests("a"));
        let b = s.add("b.json", with_requests("b"));
        let first = Selection {
            run: a,
            sweep: 0,
            point: 1,
        };
        assert_eq!(
            s.selection(),
            Some(first),
            "the skipped point has no requests"
        );
        s.select_run(b);
        assert_eq!(
            s.selection(),
            Some(Selection {
                run: b,
                sweep: 0,
                point: 1
            })
        );
        s.toggle(b);
        assert_eq!(
            s.selection(),
            Some(first),
            "a hidden run's point is not shown"
        );
        s.select_shown(0, 0, 1);
        assert_eq!(s.selection().map(|x| x.run), Some(a));
    }

    const SELFTEST: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-selftest.json");
    const GOLDEN_RUN: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");

    /// The golden run, measured from `host`.
    fn run_on(label: &str, host: &str) -> Bundle {
        let mut b = Bundle::from_json(GOLDEN_RUN).unwrap();
        b.label = label.into();
        b.hosts.client.hostname = host.into();
        b
    }

    #[test]
    fn a_selftest_is_the_clients_capacity_and_never_a_run() {
        let mut s = ViewerState::default();
        assert!(s.is_empty());
        let st = s
            .load_bytes("kpro5-selftest.json", SELFTEST.as_bytes())
            .unwrap();
        assert!(!s.is_empty());
        assert!(s.runs().is_empty() && s.chart_runs().is_empty());
        assert_eq!(s.selftest_ids(), [st]);
        assert_eq!((s.tabs(), s.shown_tab()), (vec![Tab::Client], Tab::Client));
        s.tab = Tab::Compare;
        assert_eq!(s.shown_tab(), Tab::Client, "no run, nothing else to show");
        let card = s.client_card(st).unwrap();
        assert_eq!(card.view.title, "client capacity of kpro5");
        assert_eq!((card.shares.len(), card.no_share.as_ref()), (0, None));

        let run = s.add("a.json", run_on("a", "kpro5"));
        s.add("b.json", run_on("b", "kpro6"));
        // No rate sweep among them: no Rate view.
        use Tab::*;
        assert_eq!(s.tabs(), [Throughput, Context, Requests, Compare, Client]);
        assert_eq!(s.shown_tab(), Tab::Compare);
        assert_eq!(s.run(run).unwrap().color, 0, "the selftest takes no color");
        let card = s.client_card(st).unwrap();
        assert_eq!(card.shares.len(), 1, "only the run of the same host");
        assert!(
            card.shares[0].starts_with("a streamed at most 354 tok/s"),
            "{:?}",
            card.shares
        );
        s.rename(run, "renamed");
        assert!(s.client_card(st).unwrap().shares[0].starts_with("renamed streamed"));
        s.remove(run);
        let no = s.client_card(st).unwrap().no_share.unwrap();
        assert!(
            no.starts_with("No loaded run was measured by llmsweep from kpro5"),
            "{no}"
        );

        s.tab = Tab::Client;
        s.remove(st);
        assert_eq!(s.client_card(st), None);
        assert_eq!(s.tabs(), [Throughput, Context, Requests, Compare]);
        assert_eq!(
            s.shown_tab(),
            Tab::Throughput,
            "the client's view went with it"
        );
    }

    #[test]
    fn a_report_with_a_selftest_opens_on_its_runs() {
        let file = |name: &str, text: String| (name.to_string(), text.into_bytes());
        let st = || file("st.json", SELFTEST.to_string());
        let run = |l: &str| file(&format!("{l}.json"), run_on(l, "kpro5").to_json().unwrap());
        let mut s = ViewerState::default();
        s.open_embedded(vec![run("a"), st()], None);
        assert_eq!((s.runs().len(), s.selftests().len()), (1, 1));
        assert_eq!(s.shown_tab(), Tab::Throughput, "a run and a selftest");
        let mut s = ViewerState::default();
        s.open_embedded(vec![st(), run("a"), run("b")], None);
        assert_eq!(s.shown_tab(), Tab::Compare, "two runs and a selftest");
        let mut s = ViewerState::default();
        s.open_embedded(vec![st()], None);
        assert_eq!(s.shown_tab(), Tab::Client, "a selftest alone");
    }

    #[test]
    fn without_a_folder_urls_stay_sources() {
        let s = ViewerState::default();
        assert_eq!(s.source_of_url("bundles/a.json"), "bundles/a.json");
        assert_eq!(s.folder_urls(), None);
    }

    #[test]
    fn selection_falls_back_to_a_point_with_requests() {
        let (mut s, a, _) = two();
        assert_eq!(s.selection(), None, "no requests anywhere");
        s.select(Selection {
            run: a,
            sweep: 0,
            point: 0,
        });
        assert_eq!(
            s.selection(),
            None,
            "a point that does not exist is not selected"
        );
    }
}
