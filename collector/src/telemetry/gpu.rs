//! The GPU half of the sampler: `nvidia-smi` queries, their CSV, and the energy integral.
//!
//! `nvidia-smi` is looked up on `PATH` once per process; without it nothing runs and nothing is
//! reported. Every run has a timeout and is killed when it passes. A reading `nvidia-smi` cannot
//! give (`[N/A]`, `[Not Supported]`, …) is `None`, never 0.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use llmsweep_shared::bundle::{GpuInfo, GpuSamples, GpuSeries};
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use super::secs_since;

/// Longest wait for one `nvidia-smi` run.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(2);

/// The fields of one sample, in the order [`parse_readings`] expects.
pub const SAMPLE_QUERY: &str =
    "--query-gpu=index,name,utilization.gpu,memory.used,memory.total,power.draw";

/// The fields of the inventory, in the order [`parse_inventory`] expects.
pub const INVENTORY_QUERY: &str = "--query-gpu=index,name,memory.total,driver_version";

const CSV_FORMAT: &str = "--format=csv,noheader,nounits";

/// One GPU at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuReading {
    pub index: u32,
    pub name: String,
    pub util_pct: Option<f64>,
    pub mem_used_mib: Option<f64>,
    pub mem_total_mib: Option<f64>,
    pub power_w: Option<f64>,
}

/// `nvidia-smi` on `PATH`, looked up once per process.
pub fn nvidia_smi() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND.get_or_init(|| find_on_path("nvidia-smi")).as_deref()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| [dir.join(program), dir.join(format!("{program}.exe"))])
        .find(|p| p.is_file())
}

/// The GPUs `program` (an `nvidia-smi`) lists; empty when it cannot run or fails.
pub async fn inventory_with(program: &Path) -> Vec<GpuInfo> {
    query(program, INVENTORY_QUERY)
        .await
        .map(|out| parse_inventory(&out))
        .unwrap_or_default()
}

/// One sample from `program`; `None` when it cannot run, fails, times out or lists no GPU.
pub async fn read_gpus(program: &Path) -> Option<Vec<GpuReading>> {
    let out = query(program, SAMPLE_QUERY).await?;
    Some(parse_readings(&out)).filter(|r| !r.is_empty())
}

/// `program QUERY --format=csv,noheader,nounits`: its stdout when it exits with 0 in time.
async fn query(program: &Path, fields: &str) -> Option<String> {
    let child = tokio::process::Command::new(program)
        .args([fields, CSV_FORMAT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let out = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Rows of [`SAMPLE_QUERY`]; rows without a numeric index are skipped.
pub fn parse_readings(csv: &str) -> Vec<GpuReading> {
    rows(csv, 4)
        .map(|(index, name, tail)| GpuReading {
            index,
            name,
            util_pct: number(tail[0]),
            mem_used_mib: number(tail[1]),
            mem_total_mib: number(tail[2]),
            power_w: number(tail[3]),
        })
        .collect()
}

/// Rows of [`INVENTORY_QUERY`]; rows without a numeric index are skipped.
pub fn parse_inventory(csv: &str) -> Vec<GpuInfo> {
    rows(csv, 2)
        .map(|(index, name, tail)| GpuInfo {
            index,
            name,
            memory_total_mib: number(tail[0]),
            driver: text(tail[1]),
        })
        .collect()
}

/// Each row as (index, name, the last `tail` fields). The name is everything between the
/// index and the tail, so a name with a comma in it survives.
fn rows(csv: &str, tail: usize) -> impl Iterator<Item = (u32, String, Vec<&str>)> {
    csv.lines().filter_map(move |line| {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < tail + 2 {
            return None;
        }
        let index = fields[0].parse().ok()?;
        let split = fields.len() - tail;
        let name = fields[1..split].join(", ");
        Some((index, name, fields[split..].to_vec()))
    })
}

/// A value `nvidia-smi` could not give is bracketed (`[N/A]`, `[Not Supported]`,
/// `[Unknown Error]`…) or `N/A`.
fn text(field: &str) -> Option<String> {
    let unavailable = field.is_empty() || field.starts_with('[') || field == "N/A";
    (!unavailable).then(|| field.to_string())
}

fn number(field: &str) -> Option<f64> {
    text(field)?.parse().ok().filter(|v: &f64| v.is_finite())
}

/// Turns timed readings into [`GpuSamples`]; pure, so its arithmetic is tested directly.
#[derive(Debug, Clone, Default)]
pub struct GpuRecorder {
    t_s: Vec<f64>,
    gpus: Vec<GpuSeries>,
}

impl GpuRecorder {
    /// Adds one sample; a GPU missing from it gets `None`, one new in it `None` before.
    pub fn push(&mut self, t_s: f64, readings: &[GpuReading]) {
        let len = self.t_s.len();
        for r in readings {
            if !self.gpus.iter().any(|g| g.index == r.index) {
                self.gpus.push(GpuSeries {
                    index: r.index,
                    name: r.name.clone(),
                    util_pct: vec![None; len],
                    mem_used_mib: vec![None; len],
                    mem_total_mib: None,
                    power_w: vec![None; len],
                });
            }
        }
        for g in &mut self.gpus {
            let r = readings.iter().find(|r| r.index == g.index);
            g.util_pct.push(r.and_then(|r| r.util_pct));
            g.mem_used_mib.push(r.and_then(|r| r.mem_used_mib));
            g.power_w.push(r.and_then(|r| r.power_w));
            if let Some(total) = r.and_then(|r| r.mem_total_mib) {
                g.mem_total_mib = Some(total);
            }
        }
        self.t_s.push(t_s);
    }

    /// The samples with their energy, or `None` when there are none.
    pub fn finish(mut self) -> Option<GpuSamples> {
        if self.t_s.is_empty() {
            return None;
        }
        self.gpus.sort_by_key(|g| g.index);
        Some(GpuSamples {
            energy_j: energy_j(&self.t_s, &self.gpus),
            tokens_per_joule: None,
            t_s: self.t_s,
            gpus: self.gpus,
        })
    }
}

/// Σ over GPUs of the trapezoid integral of power over time, joules: between consecutive known
/// readings of a GPU, `(p₀ + p₁)/2 · (t₁ − t₀)`; an unknown reading is bridged by the known ones
/// around it. GPUs that never report power are left out; `None` when no GPU has two readings.
pub fn energy_j(t_s: &[f64], gpus: &[GpuSeries]) -> Option<f64> {
    let per_gpu = gpus.iter().filter_map(|g| {
        let known: Vec<(f64, f64)> = t_s
            .iter()
            .zip(&g.power_w)
            .filter_map(|(t, p)| Some((*t, (*p)?)))
            .collect();
        (known.len() >= 2).then(|| {
            known
                .windows(2)
                .map(|w| (w[0].1 + w[1].1) / 2.0 * (w[1].0 - w[0].0))
                .sum::<f64>()
        })
    });
    per_gpu.reduce(|a, b| a + b)
}

/// `samples` with `tokens_per_joule` = `output_tokens / energy_j` (when the energy is known
/// and positive); the caller counts the point's output tokens of successful requests.
pub fn with_tokens(samples: GpuSamples, output_tokens: u64) -> GpuSamples {
    let tokens_per_joule = samples
        .energy_j
        .filter(|e| *e > 0.0)
        .map(|e| output_tokens as f64 / e);
    GpuSamples {
        tokens_per_joule,
        ..samples
    }
}

/// One sample, timed at the midpoint of the run (seconds from `origin`).
async fn timed_read(program: &Path, origin: Instant) -> Option<(f64, Vec<GpuReading>)> {
    let started = Instant::now();
    let readings = read_gpus(program).await?;
    let t = (secs_since(origin, started) + secs_since(origin, Instant::now())) / 2.0;
    Some((t, readings))
}

/// Samples at once, then about every `interval` until `stop`, then once more; `None` when the
/// first sample fails (no GPU, no driver), so a broken `nvidia-smi` is not run again.
pub async fn run(
    program: PathBuf,
    origin: Instant,
    interval: Duration,
    stop: CancellationToken,
) -> Option<GpuSamples> {
    let mut rec = GpuRecorder::default();
    let (t, first) = timed_read(&program, origin).await?;
    rec.push(t, &first);
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let next = async {
            ticks.tick().await;
            timed_read(&program, origin).await
        };
        tokio::select! {
            _ = stop.cancelled() => break,
            got = next => {
                if let Some((t, r)) = got {
                    rec.push(t, &r);
                }
            }
        }
    }
    if let Some((t, r)) = timed_read(&program, origin).await {
        rec.push(t, &r);
    }
    rec.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_A6000: &str = "\
0, NVIDIA RTX A6000, 97, 45123, 49140, 281.53
1, NVIDIA RTX A6000, [N/A], 44980, 49140, [N/A]
";

    #[test]
    fn readings_with_unavailable_fields() {
        let r = parse_readings(TWO_A6000);
        assert_eq!(
            r,
            vec![
                GpuReading {
                    index: 0,
                    name: "NVIDIA RTX A6000".into(),
                    util_pct: Some(97.0),
                    mem_used_mib: Some(45123.0),
                    mem_total_mib: Some(49140.0),
                    power_w: Some(281.53),
                },
                GpuReading {
                    index: 1,
                    name: "NVIDIA RTX A6000".into(),
                    util_pct: None,
                    mem_used_mib: Some(44980.0),
                    mem_total_mib: Some(49140.0),
                    power_w: None,
                },
            ]
        );
    }

    #[test]
    fn odd_rows_and_names_with_commas() {
        let r = parse_readings(
            "No devices were found\n\
             3, Tesla K80, rev B, [Not Supported], 10, 11441, 58.10\n\
             x, bad, 1, 2, 3, 4\n\
             \n",
        );
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].index, 3);
        assert_eq!(r[0].name, "Tesla K80, rev B");
        assert_eq!(r[0].util_pct, None);
        assert_eq!(r[0].power_w, Some(58.1));
    }

    #[test]
    fn inventory_rows() {
        assert_eq!(
            parse_inventory(
                "0, NVIDIA H100 80GB HBM3, 81559, 550.54.15\n1, NVIDIA H100 80GB HBM3, [N/A], [N/A]\n"
            ),
            vec![
                GpuInfo {
                    index: 0,
                    name: "NVIDIA H100 80GB HBM3".into(),
                    memory_total_mib: Some(81559.0),
                    driver: Some("550.54.15".into()),
                },
                GpuInfo {
                    index: 1,
                    name: "NVIDIA H100 80GB HBM3".into(),
                    memory_total_mib: None,
                    driver: None,
                },
            ]
        );
    }

    fn reading(index: u32, power_w: Option<f64>) -> GpuReading {
        GpuReading {
            index,
            name: format!("gpu{index}"),
            util_pct: Some(50.0),
            mem_used_mib: Some(1.0),
            mem_total_mib: Some(2.0),
            power_w,
        }
    }

    #[test]
    fn energy_is_the_trapezoid_sum_over_gpus() {
        let mut rec = GpuRecorder::default();
        rec.push(0.0, &[reading(1, Some(100.0)), reading(0, Some(200.0))]);
        rec.push(1.0, &[reading(1, Some(300.0)), reading(0, None)]);
        rec.push(3.0, &[reading(1, Some(100.0)), reading(0, Some(100.0))]);
        let s = rec.finish().expect("three samples");
        assert_eq!(s.t_s, vec![0.0, 1.0, 3.0]);
        assert_eq!(
            s.gpus.iter().map(|g| g.index).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(s.gpus[0].power_w, vec![Some(200.0), None, Some(100.0)]);
        // GPU 1: (100+300)/2·1 + (300+100)/2·2 = 200 + 400 = 600 J.
        // GPU 0: its unknown middle reading is bridged: (200+100)/2·3 = 450 J.
        assert_eq!(s.energy_j, Some(1050.0));
        assert_eq!(s.tokens_per_joule, None);
        assert_eq!(with_tokens(s, 2100).tokens_per_joule, Some(2.0));
    }

    #[test]
    fn gpus_appearing_late_are_padded_and_no_power_means_no_energy() {
        let mut rec = GpuRecorder::default();
        rec.push(0.0, &[reading(0, None)]);
        rec.push(0.5, &[reading(0, None), reading(1, None)]);
        let s = rec.finish().expect("two samples");
        assert_eq!(s.gpus[1].util_pct, vec![None, Some(50.0)]);
        assert_eq!(s.gpus[1].mem_total_mib, Some(2.0));
        assert_eq!(s.energy_j, None);
        assert_eq!(with_tokens(s, 100).tokens_per_joule, None);
        assert_eq!(GpuRecorder::default().finish(), None);
    }

    #[tokio::test]
    async fn a_missing_program_gives_nothing() {
        let missing = Path::new("/nonexistent/llmsweep-test/nvidia-smi");
        assert_eq!(read_gpus(missing).await, None);
        assert!(inventory_with(missing).await.is_empty());
        assert_eq!(find_on_path("llmsweep-no-such-program-anywhere"), None);
    }
}
