//! Facts about the machine the collector runs on.

use llmsweep_shared::bundle::HostFacts;

/// This machine's name, OS, CPU and memory; what cannot be read is left out.
pub(crate) fn client_facts() -> HostFacts {
    HostFacts {
        hostname: hostname(),
        os: os_name(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_string(),
        cpu_model: cpuinfo_field("model name"),
        cpu_cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes: meminfo_total(),
    }
}

/// Files the process keeps open besides one connection per stream: the runtime, the scrapes,
/// the bundle, the terminal, with room to spare.
pub(crate) const FILES_BESIDE_STREAMS: u64 = 64;

/// Raises this process's soft limit on open files to its hard limit (allowed without
/// privileges) and returns the limit now in force; `None` where it cannot be read.
pub(crate) fn open_files_limit() -> Option<u64> {
    rlimit::increase_nofile_limit(u64::MAX).ok()
}

/// Refuses a concurrency that needs more open files than `limit` allows, before any request is
/// sent, with what to do about it; `flag` names the setting that asked for `streams`.
pub(crate) fn check_open_files(streams: u64, limit: u64) -> anyhow::Result<()> {
    let needed = streams + FILES_BESIDE_STREAMS;
    if needed > limit {
        anyhow::bail!(
            "concurrency {streams} needs about {needed} open files (a connection per stream and {FILES_BESIDE_STREAMS} more), and this process may open {limit} (its hard limit); raise the limit (`ulimit -n`, LimitNOFILE= under systemd, --ulimit nofile= in docker) or lower the concurrency to at most {}",
            limit.saturating_sub(FILES_BESIDE_STREAMS)
        );
    }
    Ok(())
}

/// Threads whose CPU time is not the client's (the in-process simulator's), by thread id.
static EXCLUDED_THREADS: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// Marks the calling thread as not part of the client, for [`client_cpu_s`].
pub(crate) fn exclude_current_thread() {
    if let Some(tid) = current_tid()
        && let Ok(mut list) = EXCLUDED_THREADS.lock()
    {
        list.push(tid);
    }
}

fn current_tid() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// CPU seconds (user + system) used so far by the collector's live threads, leaving out those
/// marked with [`exclude_current_thread`]. Linux only; `None` elsewhere.
pub(crate) fn client_cpu_s() -> Option<f64> {
    let ticks = sum_client_threads(|task| {
        stat_cpu_ticks(&std::fs::read_to_string(task.join("stat")).ok()?)
    })?;
    // USER_HZ is 100 on every Linux architecture's user-facing ABI.
    Some(ticks as f64 / 100.0)
}

/// Like [`client_cpu_s`], to the nanosecond instead of the 10 ms tick: each thread's time on a
/// CPU from its `schedstat`, for spans too short for ticks. Falls back to [`client_cpu_s`] where
/// the kernel keeps no `schedstat`.
pub(crate) fn client_cpu_fine_s() -> Option<f64> {
    if std::fs::metadata("/proc/thread-self/schedstat").is_err() {
        return client_cpu_s();
    }
    let ns = sum_client_threads(|task| {
        let s = std::fs::read_to_string(task.join("schedstat")).ok()?;
        s.split_whitespace().next()?.parse().ok()
    })?;
    Some(ns as f64 / 1e9)
}

/// The sum of `read` over the collector's live threads (`/proc/self/task/<tid>`), leaving out
/// those marked with [`exclude_current_thread`]; a thread that cannot be read counts 0.
fn sum_client_threads(read: impl Fn(&std::path::Path) -> Option<u64>) -> Option<u64> {
    let excluded = EXCLUDED_THREADS
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default();
    let mut sum = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let tid: u64 = match task.file_name().to_string_lossy().parse() {
            Ok(t) => t,
            Err(_) => continue,
        };
        if !excluded.contains(&tid) {
            sum += read(&task.path()).unwrap_or(0);
        }
    }
    Some(sum)
}

/// utime + stime from a `/proc/.../stat` line (fields 14 and 15; the command name may contain
/// spaces, so fields are counted after its closing parenthesis).
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After ')': field 3 (state) is index 0, so utime (14) is index 11 and stime (15) index 12.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The process's peak resident memory (`VmHWM`), bytes. Linux only; `None` elsewhere.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    proc_kb_field("/proc/self/status", "VmHWM:")
}

/// A `Name:   1234 kB` line of a `/proc` file, in bytes.
fn proc_kb_field(path: &str, name: &str) -> Option<u64> {
    let s = std::fs::read_to_string(path).ok()?;
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix(name))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Sets the peak of [`peak_rss_bytes`] back to the current resident memory, so the next
/// reading is the peak of what runs in between. Returns whether the kernel allowed it.
pub(crate) fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", b"5").is_ok()
}

pub(crate) fn hostname() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

fn os_name() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
    pretty.unwrap_or_else(|| std::env::consts::OS.to_string())
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn cpuinfo_field(name: &str) -> Option<String> {
    let s = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    s.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim().to_string())
    })
}

fn meminfo_total() -> Option<u64> {
    proc_kb_field("/proc/meminfo", "MemTotal:")
}

/// How often the lateness probe asks to wake.
const LATENESS_TICK: std::time::Duration = std::time::Duration::from_millis(10);

/// Most wake-ups a probe keeps (a level of almost three hours at its tick).
const MAX_TICKS: usize = 1 << 20;

/// The collector's own scheduling lateness during a point: a task that asks to wake every
/// [`LATENESS_TICK`] and records how late each wake-up came. On a quiet host it is about a
/// millisecond (the timer's grain); when other processes hold the CPUs, or the collector's own
/// work starves its runtime, it grows, and the numbers carry those delays.
pub(crate) struct LatenessProbe {
    stop: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<Vec<f64>>,
}

impl LatenessProbe {
    pub(crate) fn start() -> LatenessProbe {
        let stop = tokio_util::sync::CancellationToken::new();
        let until = stop.clone();
        let task = tokio::spawn(async move {
            let mut late = Vec::new();
            let mut next = tokio::time::Instant::now() + LATENESS_TICK;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep_until(next) => {}
                    _ = until.cancelled() => return late,
                }
                let now = tokio::time::Instant::now();
                if late.len() < MAX_TICKS {
                    late.push((now - next).as_secs_f64());
                }
                // After a long delay the next wake-up is a tick from now, not a burst of
                // catch-up ticks that would each count the same delay again.
                next = (next + LATENESS_TICK).max(now + LATENESS_TICK / 2);
            }
        });
        LatenessProbe { stop, task }
    }

    /// Stops the probe: its p99 and largest lateness, and the host's load now.
    pub(crate) async fn finish(self) -> Option<llmsweep_shared::bundle::Lateness> {
        self.stop.cancel();
        let late = self.task.await.ok()?;
        let stats = llmsweep_shared::metrics::Stats::from_values(late.iter().copied())?;
        Some(llmsweep_shared::bundle::Lateness {
            tick_s: LATENESS_TICK.as_secs_f64(),
            ticks: late.len() as u64,
            p99_s: stats.p99,
            max_s: stats.max,
            load_1m: load_1m(),
            cpus: std::thread::available_parallelism()
                .ok()
                .map(|n| n.get() as u64),
        })
    }
}

/// The 1-minute load average (Linux), `None` elsewhere.
fn load_1m() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_from_a_stat_line_with_spaces_in_the_name() {
        let line = "4242 (tokio runtime w) S 1 2 3 4 5 6 7 8 9 10 150 25 0 0 20 0 8 0";
        assert_eq!(stat_cpu_ticks(line), Some(175));
        assert_eq!(stat_cpu_ticks("garbage"), None);
    }

    #[test]
    fn client_cpu_grows_with_work() {
        // Work until the reading moves, however busy the machine (a wall-clock budget would
        // measure the scheduler); it must move within 10 s of spinning.
        let Some(before) = client_cpu_s() else { return };
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while client_cpu_s().unwrap() <= before && t.elapsed() < std::time::Duration::from_secs(10)
        {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        assert!(client_cpu_s().unwrap() > before);
    }

    #[test]
    fn fine_cpu_sees_a_few_milliseconds_of_work() {
        let Some(before) = client_cpu_fine_s() else {
            return;
        };
        // Spin until the reading has grown by 20 ms, then check that it took about that much of
        // this thread's own CPU time (its clock, not the wall's, which a busy machine
        // stretches). Other tests' threads that end meanwhile leave the sum, so the reading is
        // watched rather than read once after a fixed amount of work.
        let own = || -> f64 {
            let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
            s.split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0.0)
                / 1e9
        };
        let mut x = 0u64;
        let (start, t) = (own(), std::time::Instant::now());
        let grown = || client_cpu_fine_s().unwrap_or(before) - before >= 0.02;
        while !grown() && t.elapsed() < std::time::Duration::from_secs(10) {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        assert!(grown(), "the fine reading never grew by 20 ms");
        let spent = own() - start;
        assert!(
            spent < 5.0,
            "the reading grew only after {spent} s of this thread's CPU"
        );
    }

    #[test]
    fn the_open_files_limit_is_raised_and_checked() {
        let limit = open_files_limit().unwrap();
        let (soft, hard) = rlimit::Resource::NOFILE.get().unwrap();
        assert_eq!(
            (soft, limit),
            (hard, hard),
            "the soft limit is raised to the hard one"
        );
        assert!(check_open_files(100, 1024).is_ok());
        let e = check_open_files(4096, 1024).unwrap_err().to_string();
        assert!(
            e.starts_with("concurrency 4096 needs about 4160 open files")
                && e.ends_with("lower the concurrency to at most 960"),
            "{e}"
        );
    }
}
