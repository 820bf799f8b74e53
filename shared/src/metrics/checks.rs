//! Honesty checks: what deserves a flag on a point, decided from its records.

use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasher, Hasher};

use crate::bundle::{Flag, FlagKind, RequestRecord, ServerSamples};
use crate::charts::axis::fixed;

/// Allowed difference between the prompt length asked and the one the server counted.
pub const INPUT_TOLERANCE: f64 = 0.02;

/// A gap between two tokens shorter than this is never a stall, whatever the level's rhythm.
pub const STALL_FLOOR_S: f64 = 1.0;

/// A gap is a stall from this many times the level's ITL p50 on.
pub const STALL_ITL_MULTIPLE: f64 = 20.0;

/// Flags that follow from a point's records alone, in this order: failed, short, overshoot,
/// tokens estimated, input length off, prefix cache, connection setup, stall.
///
/// - `output_len`: tokens asked per request.
/// - `expected_cached`: prompt tokens meant to be shared between requests (`--shared-prefix-len`);
///   the server reporting more cached tokens than that, beyond one block of slack, is contamination.
pub fn level_flags(records: &[RequestRecord], output_len: u64, expected_cached: u64) -> Vec<Flag> {
    let ok: Vec<&RequestRecord> = records.iter().filter(|r| r.is_ok()).collect();
    [
        failed_flag(records),
        short_flag(&ok, output_len),
        overshoot_flag(&ok, output_len),
        tokens_estimated_flag(&ok, output_len),
        input_length_flag(&ok),
        prefix_cache_flag(&ok, expected_cached),
        connection_tail_flag(&ok),
        stall_flag(&ok),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// How much longer than the level's TTFT p50 its last quarter's must be for
/// [`queue_filling_flag`].
pub const QUEUE_FILLING_RATIO: f64 = 1.25;

/// ... and by at least this many seconds: below it, a TTFT's spread is prefill's and the
/// decode steps it waits behind, not a queue's.
pub const QUEUE_FILLING_FLOOR_S: f64 = 1.0;

/// Flags a closed-loop level whose TTFT describes a queue still filling. Above the server's
/// running limit, every slot's first request is sent at once and the server admits them in
/// turn, so they wait from nothing to a whole queue's turn; only requests sent after that turn
/// wait what a user at this load meets. When the last quarter of the level's successful
/// requests (in sending order, at least 4) waited for their first token, at the median, at
/// least [`QUEUE_FILLING_RATIO`] times and [`QUEUE_FILLING_FLOOR_S`] longer than the whole
/// level's median, the level ended before that: its TTFT grows with its length.
///
/// Against kpro5 (16 running): at C=64 the queue's turn is three decodes and the level's
/// median already the last requests' wait; at C=100 it is five and a quarter, longer than the
/// level, and the median (54 s) is about half the last requests' wait.
pub fn queue_filling_flag(records: &[RequestRecord]) -> Option<Flag> {
    let ttft: Vec<f64> = records
        .iter()
        .filter(|r| r.is_ok())
        .filter_map(|r| r.ttft_s)
        .collect();
    let quarter = ttft.len() / 4;
    if quarter < 4 {
        return None;
    }
    let all = crate::metrics::percentile(&ttft, 50.0)?;
    let last = crate::metrics::percentile(&ttft[ttft.len() - quarter..], 50.0)?;
    (last >= QUEUE_FILLING_RATIO * all && last - all >= QUEUE_FILLING_FLOOR_S).then(|| Flag {
        kind: FlagKind::QueueFilling,
        message: format!(
            "the server's queue was still filling when the level ended: its last {quarter} requests waited {} s for a first token (p50) against {} s over the level, whose TTFT grows with its length (a longer level, --duration, shows more of the wait at this load)",
            fixed(last, 1),
            fixed(all, 1)
        ),
        count: None,
    })
}

/// Flags the requests that waited between two tokens longer than the server's own rhythm can
/// explain: longer than [`STALL_ITL_MULTIPLE`] times the level's ITL p50, than the level's
/// slowest first token (TTFT p99: decoding pauses while other requests prefill, and such a pause
/// lasts about a prefill) and than [`STALL_FLOOR_S`]. A stall is a server (or a network, or a
/// client host) that stopped: the level's throughput and latency include it.
fn stall_flag(ok: &[&RequestRecord]) -> Option<Flag> {
    let itl = crate::metrics::Stats::from_values(ok.iter().filter_map(|r| Some(r.itl?.p50_s)))?;
    let ttft = crate::metrics::Stats::from_values(ok.iter().filter_map(|r| r.ttft_s))?;
    let bound = (itl.p50 * STALL_ITL_MULTIPLE)
        .max(ttft.p99)
        .max(STALL_FLOOR_S);
    let gaps: Vec<f64> = ok
        .iter()
        .filter_map(|r| Some(r.itl?.max_s))
        .filter(|&g| g > bound)
        .collect();
    let longest = gaps.iter().copied().fold(0.0, f64::max);
    counted_flag(
        FlagKind::Stall,
        gaps.len(),
        format!(
            "{} of {} requests stalled: up to {} between two tokens, where the level's ITL p50 is {} ms and its TTFT p99 {}; the level's numbers include the stall",
            gaps.len(),
            ok.len(),
            seconds(longest),
            fixed(itl.p50 * 1e3, 1),
            seconds(ttft.p99),
        ),
    )
}

/// Seconds in the digits that matter: `150.6 s`, `2.40 s`.
fn seconds(s: f64) -> String {
    if s >= 10.0 {
        format!("{} s", fixed(s, 1))
    } else {
        format!("{} s", fixed(s, 2))
    }
}

/// A flag of `kind` counting `count` requests, or `None` when none of them is concerned.
fn counted_flag(kind: FlagKind, count: usize, message: String) -> Option<Flag> {
    (count > 0).then_some(Flag {
        kind,
        message,
        count: Some(count as u64),
    })
}

/// Flags the requests that failed, quoting the first one's error.
fn failed_flag(records: &[RequestRecord]) -> Option<Flag> {
    let failed: Vec<&RequestRecord> = records.iter().filter(|r| !r.is_ok()).collect();
    let first = failed.first().and_then(|r| r.error.as_ref())?;
    counted_flag(
        FlagKind::Failed,
        failed.len(),
        format!(
            "{} of {} requests failed; first error: {}",
            failed.len(),
            records.len(),
            first.message
        ),
    )
}

/// Flags the successful requests that produced fewer tokens than they asked for.
fn short_flag(ok: &[&RequestRecord], output_len: u64) -> Option<Flag> {
    let short = ok
        .iter()
        .filter(|r| r.output_tokens < r.asked(output_len))
        .count();
    let fewest = ok.iter().map(|r| r.output_tokens).min().unwrap_or(0);
    counted_flag(
        FlagKind::Short,
        short,
        format!(
            "{short} of {} requests produced fewer than {output_len} tokens (fewest: {fewest}); the server stopped early, so throughput is overstated",
            ok.len()
        ),
    )
}

/// Flags the successful requests whose server counted more tokens than they asked for.
fn overshoot_flag(ok: &[&RequestRecord], output_len: u64) -> Option<Flag> {
    // Only the server's own count can show that it ignored max_tokens: a count of chunks may
    // include one that carried no token.
    let counted: Vec<&&RequestRecord> = ok.iter().filter(|r| !r.tokens_estimated).collect();
    let over = counted
        .iter()
        .filter(|r| r.output_tokens > r.asked(output_len))
        .count();
    let most = counted.iter().map(|r| r.output_tokens).max().unwrap_or(0);
    counted_flag(
        FlagKind::Overshoot,
        over,
        format!(
            "{over} of {} requests produced more than {output_len} tokens (most: {most}): the server ignored max_tokens",
            ok.len()
        ),
    )
}

/// Flags the successful requests whose output tokens were counted from stream chunks, saying
/// how many streamed more chunks than the tokens asked.
fn tokens_estimated_flag(ok: &[&RequestRecord], output_len: u64) -> Option<Flag> {
    let est: Vec<&&RequestRecord> = ok.iter().filter(|r| r.tokens_estimated).collect();
    let chunks_over = est
        .iter()
        .filter(|r| r.output_tokens > r.asked(output_len))
        .count();
    let beyond = if chunks_over > 0 {
        format!(
            "; {chunks_over} streamed more chunks than the {output_len} tokens asked, so a chunk count is not exact here"
        )
    } else {
        String::new()
    };
    counted_flag(
        FlagKind::TokensEstimated,
        est.len(),
        format!(
            "{} of {} requests had no usage from the server, or one far beyond what they streamed; output tokens were counted from stream chunks{beyond}",
            est.len(),
            ok.len()
        ),
    )
}

/// Flags the successful requests whose prompt the server counted more than
/// [`INPUT_TOLERANCE`] off the length asked, quoting the first.
fn input_length_flag(ok: &[&RequestRecord]) -> Option<Flag> {
    let off: Vec<(u64, u64)> = ok
        .iter()
        // An input length of 0 is unknown (a dataset's prompts, sent as written).
        .filter(|r| r.input_tokens > 0)
        .filter_map(|r| Some((r.input_tokens, r.prompt_tokens?)))
        .filter(|&(asked, got)| (got as f64 - asked as f64).abs() > asked as f64 * INPUT_TOLERANCE)
        .collect();
    let &(asked, got) = off.first()?;
    counted_flag(
        FlagKind::InputLengthOff,
        off.len(),
        format!(
            "{} of {} prompts were counted more than 2 % off by the server (e.g. asked {asked}, server counted {got})",
            off.len(),
            ok.len()
        ),
    )
}

/// Flags the first turns the server served partly from its prefix cache beyond the
/// `expected_cached` tokens (and [`CACHE_SLACK`]) meant to be shared.
fn prefix_cache_flag(ok: &[&RequestRecord], expected_cached: u64) -> Option<Flag> {
    // A conversation's later turns (`--turns`) resend its history in order to hit the cache;
    // only first turns say whether prompts meant to be unique were cached.
    let firsts = ok.iter().filter(|r| r.turn.unwrap_or(0) == 0);
    let cached: Vec<u64> = firsts
        .clone()
        .filter_map(|r| r.cached_tokens)
        .filter(|&c| c > expected_cached + CACHE_SLACK)
        .collect();
    let most = cached.iter().max()?;
    counted_flag(
        FlagKind::PrefixCache,
        cached.len(),
        format!(
            "{} of {} {} were partly served from the prefix cache (up to {most} tokens); TTFT is understated",
            cached.len(),
            firsts.clone().count(),
            if ok.iter().any(|r| r.turn.unwrap_or(0) > 0) {
                "first turns"
            } else {
                "requests"
            }
        ),
    )
}

/// Share of the TTFT tail's time spent opening connections above which the tail is called
/// connection setup.
pub const SETUP_SHARE: f64 = 0.25;

/// Where the slowest TTFTs' time went: of the successful requests at or above the 99th
/// percentile of TTFT (at least one), on average how long they spent opening their connection
/// (`setup.connect_s`, zero on a reused one), then until the response headers, then until
/// the first token (the server's queue and prefill).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TtftTail {
    pub requests: usize,
    /// Of them, on a connection opened on their path.
    pub on_new_connections: usize,
    pub ttft_s: f64,
    pub connect_s: f64,
    pub to_headers_s: f64,
    pub to_first_token_s: f64,
}

/// The TTFT tail of `ok` (successful requests), split by [`TtftTail`]'s parts; `None` when no
/// request says where its time went.
pub fn ttft_tail(ok: &[&RequestRecord]) -> Option<TtftTail> {
    let mut timed: Vec<(f64, crate::bundle::Setup)> = ok
        .iter()
        .filter_map(|r| Some((r.ttft_s?, r.setup?)))
        .filter(|(t, _)| t.is_finite())
        .collect();
    if timed.is_empty() {
        return None;
    }
    timed.sort_by(|a, b| b.0.total_cmp(&a.0));
    let tail = &timed[..timed.len().div_ceil(100)];
    let n = tail.len() as f64;
    let mean =
        |f: &dyn Fn(&(f64, crate::bundle::Setup)) -> f64| tail.iter().map(f).sum::<f64>() / n;
    let connect = |s: &crate::bundle::Setup| s.connect_s.unwrap_or(0.0);
    Some(TtftTail {
        requests: tail.len(),
        on_new_connections: tail.iter().filter(|(_, s)| s.connect_s.is_some()).count(),
        ttft_s: mean(&|(t, _)| *t),
        connect_s: mean(&|(_, s)| connect(s)),
        to_headers_s: mean(&|(_, s)| (s.headers_s - connect(s)).max(0.0)),
        to_first_token_s: mean(&|(t, s)| (t - s.headers_s).max(0.0)),
    })
}

/// Flags a point whose TTFT tail spent more than [`SETUP_SHARE`] of its time opening
/// connections.
fn connection_tail_flag(ok: &[&RequestRecord]) -> Option<Flag> {
    let t = ttft_tail(ok)?;
    let share = t.connect_s / t.ttft_s;
    (share.is_finite() && share > SETUP_SHARE).then(|| Flag {
        kind: FlagKind::ConnectionSetup,
        message: format!(
            "the slowest 1 % of TTFTs ({} requests, {} of them on new connections, {:.1} ms on average) spent {:.1} ms opening connections, {:.1} ms until the response headers and {:.1} ms until the first token: the tail is connection setup, not the server (connections are opened before a level unless --cold-connections)",
            t.requests,
            t.on_new_connections,
            t.ttft_s * 1e3,
            t.connect_s * 1e3,
            t.to_headers_s * 1e3,
            t.to_first_token_s * 1e3
        ),
        count: Some(t.on_new_connections as u64),
    })
}

/// Counters that count prompt tokens (or blocks) served from a prefix cache, per engine.
const CACHE_COUNTERS: &[&str] = &[
    "vllm:prefix_cache_hits_total",
    "sglang:cached_tokens_total",
    "llamacpp:prompt_tokens_cached_total",
];

/// Flags a point whose server counted prefix-cache hits during it beyond what its prompts were
/// meant to share (`expected_cached` tokens per request, plus the same slack as
/// [`level_flags`]), from the server's counters before and after the point.
pub fn cache_counter_flag(
    samples: &ServerSamples,
    requests: u64,
    expected_cached: u64,
) -> Option<Flag> {
    let (name, hits) = CACHE_COUNTERS.iter().find_map(|name| {
        let before = samples.counters_before.get(*name)?;
        let after = samples.counters_after.get(*name)?;
        Some((*name, after - before))
    })?;
    let allowed = (requests * (expected_cached + CACHE_SLACK)) as f64;
    (hits > allowed).then(|| Flag {
        kind: FlagKind::PrefixCache,
        message: format!(
            "the server's {name} rose by {hits:.0} during this level ({requests} requests with unique prompts), and its answers did not say which request each hit served: a server-wide counter, so it counts any other client's traffic too; if the hits were this level's, TTFT is understated"
        ),
        count: None,
    })
}

/// Share of one CPU core above which the collector may have set the pace instead of the server.
pub const CLIENT_BOUND_CORES: f64 = 0.7;

/// Levels shorter than this are not judged: CPU time is counted in 10 ms ticks, so over a few
/// tens of milliseconds one tick more or less moves the share by tens of percent.
pub const CLIENT_BOUND_MIN_WALL_S: f64 = 1.0;

/// Flags a point whose collector used `cores` (CPU seconds per wall second) above
/// [`CLIENT_BOUND_CORES`] over a level of `wall_s` seconds, when the level was long enough to
/// tell ([`CLIENT_BOUND_MIN_WALL_S`]).
pub fn client_bound_flag(cores: f64, wall_s: f64) -> Option<Flag> {
    (cores > CLIENT_BOUND_CORES && wall_s >= CLIENT_BOUND_MIN_WALL_S).then(|| Flag {
        kind: FlagKind::ClientBound,
        message: format!(
            "the collector used {:.0} % of a CPU core during this level: the client, not the server, may have set the pace (use a faster client machine or fewer levels per process)",
            cores * 100.0
        ),
        count: None,
    })
}

/// Cached tokens tolerated beyond the intended shared prefix: a BOS token or a chat template's
/// fixed preamble is shared by every prompt and may be served from cache honestly.
const CACHE_SLACK: u64 = 32;

/// Why `text` looks degenerate (one token or phrase repeated), or `None` when it looks like text.
///
/// Special tokens: at least half of 4 or more words look like `<…>` markup (`<|im_end|>`), as
/// when a model is driven past its end of turn with the wrong template. Word level: at least 8
/// words, and either under 15 % of them distinct, or the text is a phrase
/// of up to [`MAX_PERIOD`] words repeated (at least twice) over 80 % of its length. Character level (for text without spaces):
/// at least 16 characters and at most 2 distinct ones.
pub fn degenerate_text(text: &str) -> Option<String> {
    degenerate(text).map(|d| d.to_string())
}

/// [`degenerate_text`]'s judgement without its message, which [`Degenerate`]'s `Display`
/// writes. Every request of a level passes here, so it stops counting as soon as the answer is
/// known: distinct words once there are too many for the 15 %, a phrase's repeats once too few
/// are left to reach 80 %.
pub fn degenerate(text: &str) -> Option<Degenerate<'_>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let n = words.len();
    let markup = words
        .iter()
        .filter(|w| w.starts_with('<') && w.ends_with('>'))
        .count();
    if n >= 4 && markup * 2 >= n {
        let example = words.iter().find(|w| w.starts_with('<')).copied();
        return Some(Degenerate::Markup {
            markup,
            words: n,
            example: example.unwrap_or_default(),
        });
    }
    if n >= 8 {
        let few = |distinct: usize| (distinct as f64 / n as f64) < 0.15;
        let mut distinct: HashSet<&str, BuildWordHasher> = HashSet::default();
        for (i, w) in words.iter().enumerate() {
            // A word the one before it repeats is in the set already: not hashed again (a
            // model stuck on one token says it hundreds of times).
            if i > 0 && words[i - 1] == *w {
                continue;
            }
            // Too many distinct words already: more can only add to them.
            if distinct.insert(w) && !few(distinct.len()) {
                break;
            }
        }
        if few(distinct.len()) {
            return Some(Degenerate::FewWords {
                distinct: distinct.len(),
                words: n,
                text,
            });
        }
        for period in 1..=MAX_PERIOD.min(n / 2) {
            let pairs = n - period;
            let needed = 0.8 * pairs as f64;
            let (mut repeats, mut differ) = (0usize, 0usize);
            for (a, b) in words.iter().zip(&words[period..]) {
                if a == b {
                    repeats += 1;
                } else {
                    differ += 1;
                    if ((pairs - differ) as f64) < needed {
                        break;
                    }
                }
            }
            if repeats as f64 >= needed {
                return Some(Degenerate::Phrase { period, text });
            }
        }
        return None;
    }
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let distinct: HashSet<char> = chars.iter().copied().collect();
    if chars.len() >= 16 && distinct.len() <= 2 {
        let mut distinct: Vec<char> = distinct.into_iter().collect();
        distinct.sort_unstable();
        return Some(Degenerate::FewChars {
            chars: chars.len(),
            distinct,
        });
    }
    None
}

/// What [`degenerate`] found; its `Display` is [`degenerate_text`]'s message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Degenerate<'a> {
    /// At least half the words are special tokens such as `example`.
    Markup {
        markup: usize,
        words: usize,
        example: &'a str,
    },
    /// Under 15 % of the words of `text` are distinct.
    FewWords {
        distinct: usize,
        words: usize,
        text: &'a str,
    },
    /// `text` is its first `period` words repeated.
    Phrase { period: usize, text: &'a str },
    /// Text without spaces of at most two characters, `distinct`.
    FewChars { chars: usize, distinct: Vec<char> },
}

impl fmt::Display for Degenerate<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = |text: &str, k: usize| {
            text.split_whitespace()
                .take(k)
                .collect::<Vec<_>>()
                .join(" ")
        };
        match self {
            Degenerate::Markup {
                markup,
                words,
                example,
            } => write!(
                f,
                "{markup} of {words} words are special tokens such as {example:?}: the chat template or the stop tokens do not fit the model"
            ),
            Degenerate::FewWords {
                distinct,
                words,
                text,
            } => write!(
                f,
                "{distinct} distinct words in {words} ({:?}…)",
                first(text, 6)
            ),
            Degenerate::Phrase { period, text } => {
                write!(f, "the phrase {:?} repeated", first(text, *period))
            }
            Degenerate::FewChars { chars, distinct } => {
                let set: Vec<String> = distinct.iter().map(|c| format!("{c:?}")).collect();
                write!(f, "{chars} characters of {{{}}}", set.join(", "))
            }
        }
    }
}

/// A word hasher for [`degenerate`]'s distinct count: FNV-1a, which for words of a few bytes
/// costs a fraction of the default SipHash. Words a server made collide cost no more than a
/// comparison each against the others: a request keeps at most 2,000 bytes of text, and the
/// count stops once 15 % of its words are distinct.
#[derive(Default, Clone, Copy)]
struct BuildWordHasher;

impl BuildHasher for BuildWordHasher {
    type Hasher = WordHasher;
    fn build_hasher(&self) -> WordHasher {
        WordHasher(0xcbf2_9ce4_8422_2325)
    }
}

struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Longest repeated phrase, in words, that [`degenerate_text`] looks for.
pub const MAX_PERIOD: usize = 16;

/// The `other-traffic` flag of a closed-loop level that sent at most `concurrency` requests at
/// once, when the server's own gauges counted more running or waiting than that in at least two
/// scrapes and one in twenty (a scrape can catch a finished request not yet counted out).
pub fn other_traffic_flag(
    samples: &crate::bundle::ServerSamples,
    concurrency: u32,
) -> Option<Flag> {
    let running = samples.gauges.get(samples.scheme.running_gauge()?)?;
    let queue = samples
        .scheme
        .queue_gauge()
        .and_then(|g| samples.gauges.get(g));
    let totals: Vec<f64> = running
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let r = (*r)?;
            let q = queue
                .and_then(|q| q.get(i).copied().flatten())
                .unwrap_or(0.0);
            Some(r + q).filter(|t| t.is_finite())
        })
        .collect();
    let above = totals
        .iter()
        .filter(|&&t| t > f64::from(concurrency))
        .count();
    if above < 2 || above * 20 < totals.len() {
        return None;
    }
    let peak = totals.iter().copied().fold(0.0, f64::max);
    Some(Flag {
        kind: FlagKind::OtherTraffic,
        message: format!(
            "the server counted up to {peak:.0} requests running or waiting while this level sent at most {concurrency} (in {above} of {} scrapes): another client was using it, and the numbers carry that load",
            totals.len()
        ),
        count: None,
    })
}

/// Lateness of the collector's timer at which a level is flagged `host-busy`: a p99 past
/// 20 ms, or one wake-up more than half a second late.
pub const BUSY_P99_S: f64 = 0.02;
pub const BUSY_MAX_S: f64 = 0.5;

/// The `host-busy` flag, when the collector's timer woke materially late during a level.
pub fn host_busy_flag(l: &crate::bundle::Lateness) -> Option<Flag> {
    if l.p99_s <= BUSY_P99_S && l.max_s <= BUSY_MAX_S {
        return None;
    }
    let load = match (l.load_1m, l.cpus) {
        (Some(load), Some(cpus)) => format!("; load average {load:.1} on {cpus} CPUs"),
        (Some(load), None) => format!("; load average {load:.1}"),
        _ => String::new(),
    };
    Some(Flag {
        kind: FlagKind::HostBusy,
        message: format!(
            "the client host was busy: llmsweep's own {:.0} ms timer woke up to {:.3} s late (p99 {:.3} s){load}; the numbers may carry the client's delays",
            l.tick_s * 1e3,
            l.max_s,
            l.p99_s
        ),
        count: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::request::tests::{failed, rec};

    fn kinds(flags: &[Flag]) -> Vec<FlagKind> {
        flags.iter().map(|f| f.kind).collect()
    }

    /// A closed loop at C slots on a server running 16 at a time whose decode takes 17.5 s, in
    /// sending order: the C first requests sent at once wait 0, 1, 2, … turns of 16 for a
    /// first token; each later one a whole queue's turn, (C − 16) / 16 decodes.
    fn queued(c: usize, n: usize) -> Vec<RequestRecord> {
        let p = 17.5;
        (0..n)
            .map(|i| {
                let ttft = if i < c {
                    0.3 + (i / 16) as f64 * p
                } else {
                    0.3 + (c - 16) as f64 / 16.0 * p
                };
                rec(i as f64 * 0.001, ttft, ttft + p, 500)
            })
            .collect()
    }

    #[test]
    fn a_queue_still_filling_is_flagged_and_a_full_one_is_not() {
        // C=100, 113 requests (the kpro5 story): the level's median is the fourth turn,
        // 52.8 s; its last 28 (85 to 112: the burst's last turns and the later ones) wait
        // 5.25 turns, 92.2 s.
        let f = queue_filling_flag(&queued(100, 113)).expect("flagged");
        assert_eq!(f.kind, FlagKind::QueueFilling);
        assert_eq!(
            f.message,
            "the server's queue was still filling when the level ended: its last 28 requests waited 92.2 s for a first token (p50) against 52.8 s over the level, whose TTFT grows with its length (a longer level, --duration, shows more of the wait at this load)"
        );
        // C=64, 97 requests: the level's median is already the full queue's three turns.
        assert_eq!(queue_filling_flag(&queued(64, 97)), None);
        // Within the running limit TTFTs are prefill's: a rise under a second is not a queue.
        let prefill: Vec<RequestRecord> = (0..40)
            .map(|i| rec(i as f64, 0.2 + 0.02 * i as f64, 10.0, 500))
            .collect();
        assert_eq!(queue_filling_flag(&prefill), None);
        // Under 16 requests, no quarter to speak of; failed requests do not count.
        assert_eq!(queue_filling_flag(&queued(100, 15)), None);
        let mut with_failed = queued(100, 15);
        with_failed.extend((0..40).map(|i| failed(i as f64, 1.0)));
        assert_eq!(queue_filling_flag(&with_failed), None);
    }

    fn with_setup(ttft: f64, connect_s: Option<f64>, headers_s: f64) -> RequestRecord {
        let mut r = rec(0.0, ttft, 1.0, 10);
        r.setup = Some(crate::bundle::Setup {
            new_connection: connect_s.is_some(),
            connect_s,
            headers_s,
        });
        r
    }

    /// `n` requests with TTFT `ttft`, ITL p50 20 ms, and the longest gaps `gaps` (the rest 40 ms).
    fn with_gaps(n: usize, ttft: f64, gaps: &[f64]) -> Vec<RequestRecord> {
        (0..n)
            .map(|i| {
                let mut r = rec(0.0, ttft, 10.0, 100);
                r.itl = Some(crate::bundle::ItlSummary {
                    mean_s: 0.02,
                    p50_s: 0.02,
                    p99_s: 0.04,
                    max_s: gaps.get(i).copied().unwrap_or(0.04),
                });
                r
            })
            .collect()
    }

    #[test]
    fn a_gap_no_prefill_explains_is_a_stall_and_a_prefill_pause_is_not() {
        let stalled = with_gaps(10, 0.5, &[150.6, 3.2]);
        let f = level_flags(&stalled, 100, 0);
        let stall = f.iter().find(|f| f.kind == FlagKind::Stall).unwrap();
        assert_eq!(stall.count, Some(2));
        assert_eq!(
            stall.message,
            "2 of 10 requests stalled: up to 150.6 s between two tokens, where the level's ITL p50 is 20.0 ms and its TTFT p99 0.50 s; the level's numbers include the stall"
        );
        // A 2 s pause while others prefill, at a level whose first tokens take up to 2.4 s.
        let busy = with_gaps(10, 2.4, &[2.0, 2.3]);
        assert!(!kinds(&level_flags(&busy, 100, 0)).contains(&FlagKind::Stall));
        // Under the floor: never a stall.
        let quick = with_gaps(10, 0.01, &[0.9]);
        assert!(!kinds(&level_flags(&quick, 100, 0)).contains(&FlagKind::Stall));
    }

    #[test]
    fn a_ttft_tail_of_connection_setup_is_flagged_and_split() {
        // 199 requests at 10 ms on reused connections; the two slowest (1 % of 201, rounded
        // up) took 90 and 110 ms, 60 and 80 ms of it connecting, 5 ms more to headers.
        let mut rs: Vec<RequestRecord> = (0..199).map(|_| with_setup(0.010, None, 0.001)).collect();
        rs.push(with_setup(0.090, Some(0.060), 0.065));
        rs.push(with_setup(0.110, Some(0.080), 0.085));
        let ok: Vec<&RequestRecord> = rs.iter().collect();
        let t = ttft_tail(&ok).unwrap();
        assert_eq!((t.requests, t.on_new_connections), (3, 2));
        // The third slowest is a 10 ms one: means over 90, 110 and 10 ms.
        assert!((t.ttft_s - 0.070).abs() < 1e-12, "{t:?}");
        assert!((t.connect_s - 0.140 / 3.0).abs() < 1e-12, "{t:?}");
        assert!((t.to_headers_s - 0.011 / 3.0).abs() < 1e-12, "{t:?}");
        assert!((t.to_first_token_s - (0.025 + 0.025 + 0.009) / 3.0).abs() < 1e-12);
        let flags = level_flags(&rs, 10, 0);
        assert_eq!(kinds(&flags), [FlagKind::ConnectionSetup]);
        assert_eq!(flags[0].count, Some(2));
        assert!(
            flags[0].message.starts_with(
                "the slowest 1 % of TTFTs (3 requests, 2 of them on new connections, 70.0 ms on average) spent 46.7 ms opening connections, 3.7 ms until the response headers and 19.7 ms until the first token"
            ),
            "{}",
            flags[0].message
        );
        // The same tail on reused connections is the server's: no flag.
        let reused: Vec<RequestRecord> = (0..200)
            .map(|i| with_setup(0.01 + i as f64 * 1e-3, None, 0.001))
            .collect();
        assert!(level_flags(&reused, 10, 0).is_empty());
    }

    #[test]
    fn clean_point_has_no_flags() {
        let rs = [rec(0.0, 0.1, 1.0, 10), rec(0.0, 0.1, 1.0, 10)];
        assert!(level_flags(&rs, 10, 0).is_empty());
    }

    #[test]
    fn failed_short_and_overshoot_are_flagged_with_counts() {
        let rs = [
            rec(0.0, 0.1, 1.0, 7),
            rec(0.0, 0.1, 1.0, 12),
            failed(0.0, 1.0),
            rec(0.0, 0.1, 1.0, 10),
        ];
        let flags = level_flags(&rs, 10, 0);
        assert_eq!(
            kinds(&flags),
            [FlagKind::Failed, FlagKind::Short, FlagKind::Overshoot]
        );
        assert!(flags.iter().all(|f| f.count == Some(1)));
        assert!(
            flags[0]
                .message
                .contains("1 of 4 requests failed; first error: boom")
        );
        assert!(
            flags[1].message.contains("fewest: 7"),
            "{}",
            flags[1].message
        );
    }

    #[test]
    fn short_and_overshoot_each_say_exactly_how_many_of_the_successful_requests() {
        let rs = [
            rec(0.0, 0.1, 1.0, 7),
            rec(0.0, 0.1, 1.0, 12),
            rec(0.0, 0.1, 1.0, 10),
        ];
        let ok: Vec<&RequestRecord> = rs.iter().collect();
        let short = short_flag(&ok, 10).unwrap();
        assert_eq!((short.kind, short.count), (FlagKind::Short, Some(1)));
        assert_eq!(
            short.message,
            "1 of 3 requests produced fewer than 10 tokens (fewest: 7); the server stopped early, so throughput is overstated"
        );
        let over = overshoot_flag(&ok, 10).unwrap();
        assert_eq!((over.kind, over.count), (FlagKind::Overshoot, Some(1)));
        assert_eq!(
            over.message,
            "1 of 3 requests produced more than 10 tokens (most: 12): the server ignored max_tokens"
        );
        // A count of none is no flag.
        assert_eq!(short_flag(&ok[1..], 10), None);
        assert_eq!(overshoot_flag(&[ok[0], ok[2]], 10), None);
    }

    #[test]
    fn a_chunk_count_over_the_asked_tokens_does_not_blame_the_server() {
        // 33 chunks for 32 tokens from a server without usage.
        let mut r = rec(0.0, 0.1, 1.0, 33);
        r.tokens_estimated = true;
        let flags = level_flags(&[r], 32, 0);
        assert_eq!(kinds(&flags), [FlagKind::TokensEstimated]);
        assert!(
            flags[0]
                .message
                .ends_with("; 1 streamed more chunks than the 32 tokens asked, so a chunk count is not exact here"),
            "{}",
            flags[0].message
        );
    }

    #[test]
    fn input_length_off_beyond_two_percent() {
        let mut a = rec(0.0, 0.1, 1.0, 10);
        a.prompt_tokens = Some(1020); // exactly 2 %: fine
        let mut b = rec(0.0, 0.1, 1.0, 10);
        b.prompt_tokens = Some(1021);
        assert!(level_flags(&[a.clone()], 10, 0).is_empty());
        let flags = level_flags(&[a, b], 10, 0);
        assert_eq!(kinds(&flags), [FlagKind::InputLengthOff]);
        assert!(flags[0].message.contains("asked 1000, server counted 1021"));
    }

    #[test]
    fn cached_tokens_beyond_the_shared_prefix_are_flagged() {
        let mut a = rec(0.0, 0.1, 1.0, 10);
        a.cached_tokens = Some(32);
        assert!(level_flags(&[a.clone()], 10, 0).is_empty());
        a.cached_tokens = Some(600);
        assert_eq!(
            kinds(&level_flags(&[a.clone()], 10, 0)),
            [FlagKind::PrefixCache]
        );
        assert!(level_flags(&[a], 10, 600).is_empty());
    }

    #[test]
    fn a_later_turn_served_from_the_cache_is_what_turns_are_for() {
        let mut first = rec(0.0, 0.1, 1.0, 10);
        first.turn = Some(0);
        let mut second = rec(1.0, 0.1, 1.0, 10);
        second.turn = Some(1);
        second.cached_tokens = Some(600);
        assert!(level_flags(&[first.clone(), second.clone()], 10, 0).is_empty());
        // A first turn served from the cache is still flagged, counted among first turns.
        first.cached_tokens = Some(600);
        let flags = level_flags(&[first, second], 10, 0);
        assert_eq!(kinds(&flags), [FlagKind::PrefixCache]);
        assert!(
            flags[0]
                .message
                .starts_with("1 of 1 first turns were partly served"),
            "{}",
            flags[0].message
        );
    }

    #[test]
    fn estimated_tokens_are_flagged() {
        let mut a = rec(0.0, 0.1, 1.0, 10);
        a.tokens_estimated = true;
        assert_eq!(
            kinds(&level_flags(&[a], 10, 0)),
            [FlagKind::TokensEstimated]
        );
    }

    #[test]
    fn rising_cache_counters_are_flagged_beyond_the_slack() {
        let mut s = ServerSamples::default();
        s.counters_before
            .insert("llamacpp:prompt_tokens_cached_total".into(), 100.0);
        s.counters_after
            .insert("llamacpp:prompt_tokens_cached_total".into(), 108.0);
        // 8 requests, one cached BOS token each: honest.
        assert!(cache_counter_flag(&s, 8, 0).is_none());
        s.counters_after
            .insert("llamacpp:prompt_tokens_cached_total".into(), 5100.0);
        let f = cache_counter_flag(&s, 8, 0).unwrap();
        assert_eq!(f.kind, FlagKind::PrefixCache);
        assert!(f.message.contains("rose by 5000"), "{}", f.message);
        assert!(
            cache_counter_flag(&s, 8, 1000).is_none(),
            "a shared prefix was asked for"
        );
        assert!(cache_counter_flag(&ServerSamples::default(), 8, 0).is_none());
    }

    #[test]
    fn client_bound_above_seventy_percent_of_a_core() {
        assert!(client_bound_flag(0.69, 10.0).is_none());
        // Too short to tell: 40 ms is four ticks of the CPU clock.
        assert!(client_bound_flag(0.85, 0.04).is_none());
        let f = client_bound_flag(0.85, 1.0).unwrap();
        assert_eq!(f.kind, FlagKind::ClientBound);
        assert!(f.message.contains("85 %"), "{}", f.message);
    }

    #[test]
    fn degenerate_text_is_recognised() {
        assert!(
            degenerate_text("lambda lambda lambda lambda lambda lambda lambda lambda").is_some()
        );
        assert!(degenerate_text("the cat the cat the cat the cat the cat the cat").is_some());
        assert!(degenerate_text("!!!!!!!!!!!!!!!!!!!!").is_some());
        let prose = "The quick brown fox jumps over the lazy dog while the farmer watches \
                     from the porch and wonders whether rain will come before the harvest";
        assert_eq!(degenerate_text(prose), None);
        // Seen from a small real model with greedy decoding: a sentence and two stray tokens, over
        // and over; and a prompt asked of the wrong chat template.
        let looped = "Write three sentences about a lighthouse keeper who loves the sea. staan\nで購入した\n\
                      Write three sentences about a lighthouse keeper who loves the sea. staan\nで購入した\n\
                      Write three sentences about a lighthouse keeper who loves the sea. staan\n";
        assert!(degenerate_text(looped).is_some());
        let template = "<|im_end|>\n<|im_start|>\n<|im_end|>\n<|im_start|>\n<|im_end|>\n<|im_end|>\n<|im_end|>\n<|im_end|>\n<|im_end|>\n<";
        assert!(degenerate_text(template).is_some());
        // The same model continuing a plain English sentence: wrong facts, but real text.
        let paris = " with the arrival of the French in the 17th century. The city was founded in 1789 by \
                     the French king Louis XVI. The city was named after the French word for “Paris” and \
                     was named after the";
        assert_eq!(degenerate_text(paris), None);
        assert_eq!(degenerate_text("short text"), None);
        assert_eq!(degenerate_text(""), None);
    }
}

#[cfg(test)]
mod busy_tests {
    use super::*;
    use crate::bundle::Lateness;

    #[test]
    fn a_timer_that_woke_late_flags_the_host_busy_with_its_load() {
        let quiet = Lateness {
            tick_s: 0.01,
            ticks: 1000,
            p99_s: 0.002,
            max_s: 0.03,
            load_1m: Some(0.4),
            cpus: Some(2),
        };
        assert_eq!(host_busy_flag(&quiet), None);
        let busy = Lateness {
            max_s: 150.6,
            load_1m: Some(28.0),
            ..quiet
        };
        let f = host_busy_flag(&busy).unwrap();
        assert_eq!(f.kind, FlagKind::HostBusy);
        assert_eq!(
            f.message,
            "the client host was busy: llmsweep's own 10 ms timer woke up to 150.600 s late (p99 0.002 s); load average 28.0 on 2 CPUs; the numbers may carry the client's delays"
        );
        assert!(
            host_busy_flag(&Lateness {
                p99_s: 0.05,
                ..quiet
            })
            .is_some()
        );
    }

    #[test]
    fn more_requests_on_the_server_than_the_level_sent_is_other_traffic() {
        use crate::bundle::{MetricScheme, ServerSamples};
        let samples = |running: &[f64], waiting: &[f64]| {
            let mut s = ServerSamples {
                scheme: MetricScheme::Vllm,
                t_s: (0..running.len()).map(|i| i as f64).collect(),
                ..ServerSamples::default()
            };
            s.gauges.insert(
                "vllm:num_requests_running".into(),
                running.iter().map(|&v| Some(v)).collect(),
            );
            s.gauges.insert(
                "vllm:num_requests_waiting".into(),
                waiting.iter().map(|&v| Some(v)).collect(),
            );
            s
        };
        // At C=4: four running, or four split between running and waiting, is the level itself.
        assert_eq!(
            other_traffic_flag(&samples(&[4.0, 4.0, 3.0], &[0.0, 0.0, 1.0]), 4),
            None
        );
        // One scrape above is a request counted out late.
        assert_eq!(
            other_traffic_flag(&samples(&[5.0, 4.0, 4.0], &[0.0; 3]), 4),
            None
        );
        let f = other_traffic_flag(&samples(&[4.0, 4.0, 4.0], &[2.0, 3.0, 0.0]), 4).unwrap();
        assert_eq!(f.kind, FlagKind::OtherTraffic);
        assert!(f.message.starts_with("the server counted up to 7 requests running or waiting while this level sent at most 4 (in 2 of 3 scrapes)"), "{}", f.message);
        // A server without a running gauge says nothing either way.
        let mut none = samples(&[9.0, 9.0], &[0.0, 0.0]);
        none.scheme = MetricScheme::Unknown;
        assert_eq!(other_traffic_flag(&none, 4), None);
    }
}

#[cfg(test)]
mod degenerate_tests {
    use super::*;

    /// The judgement as it was before it learned to stop early: every word counted, every
    /// phrase length checked over the whole text (the message of two characters sorted, as the
    /// new one writes it).
    fn degenerate_before(text: &str) -> Option<String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let markup = words
            .iter()
            .filter(|w| w.starts_with('<') && w.ends_with('>'))
            .count();
        if words.len() >= 4 && markup * 2 >= words.len() {
            return Some(format!(
                "{markup} of {} words are special tokens such as {:?}: the chat template or the stop tokens do not fit the model",
                words.len(),
                words
                    .iter()
                    .find(|w| w.starts_with('<'))
                    .copied()
                    .unwrap_or_default()
            ));
        }
        if words.len() >= 8 {
            let distinct: HashSet<&str> = words.iter().copied().collect();
            let ratio = distinct.len() as f64 / words.len() as f64;
            if ratio < 0.15 {
                let preview = words.iter().take(6).copied().collect::<Vec<_>>().join(" ");
                return Some(format!(
                    "{} distinct words in {} ({preview:?}…)",
                    distinct.len(),
                    words.len()
                ));
            }
            for period in 1..=MAX_PERIOD.min(words.len() / 2) {
                let repeats = words
                    .iter()
                    .zip(words.iter().skip(period))
                    .filter(|(a, b)| a == b)
                    .count();
                if repeats as f64 >= 0.8 * (words.len() - period) as f64 {
                    return Some(format!(
                        "the phrase {:?} repeated",
                        words[..period].join(" ")
                    ));
                }
            }
            return None;
        }
        let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut distinct: Vec<char> = chars
            .iter()
            .copied()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        distinct.sort_unstable();
        if chars.len() >= 16 && distinct.len() <= 2 {
            let set: Vec<String> = distinct.iter().map(|c| format!("{c:?}")).collect();
            return Some(format!(
                "{} characters of {{{}}}",
                chars.len(),
                set.join(", ")
            ));
        }
        None
    }

    /// Texts of a few words from a small vocabulary (so repeats, phrases and near-misses are
    /// common), or of a few characters without spaces.
    fn texts() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let word = prop_oneof![
            Just("w"),
            Just("the"),
            Just("cat"),
            Just("sat"),
            Just("<|im_end|>"),
            Just("<x"),
            Just("é"),
            Just("on"),
            Just("mat"),
            Just("!!"),
        ];
        let sep = prop_oneof![Just(" "), Just("\n"), Just("  ")];
        let phrase = (
            proptest::collection::vec(word.clone(), 1..6),
            proptest::collection::vec((word, sep.clone()), 0..61),
            0usize..200,
            sep,
        )
            .prop_map(|(phrase, noise, repeats, sep)| {
                let mut t = String::new();
                for i in 0..repeats {
                    t.push_str(phrase[i % phrase.len()]);
                    t.push_str(sep);
                }
                for (w, s) in noise.into_iter().take(repeats % 31) {
                    t.push_str(w);
                    t.push_str(s);
                }
                t
            });
        prop_oneof![
            4 => phrase,
            1 => "[ab!]{0,40}",
            1 => "[a-e ]{0,60}",
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 3000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0xde9e),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]
        #[test]
        fn prop_stopping_early_judges_every_text_as_counting_all(text in texts()) {
            proptest::prop_assert_eq!(degenerate_text(&text), degenerate_before(&text));
        }
    }

    #[test]
    fn every_kind_of_degenerate_text_is_told_as_before() {
        let cases = [
            "w w w w w w w w w w".to_string(),
            "the cat the cat the cat the cat the cat the cat".to_string(),
            "<|im_end|> <|im_end|> <|im_start|> hello".to_string(),
            "!!!!!!!!!!!!!!!!!!!!".to_string(),
            "abababababababababab".to_string(),
            format!("{} x y z", "a b ".repeat(8)),
            // 8 of 10 pairs repeat, 80 % exactly, after both that differ: the bound itself.
            "b c a a a a a a a a a".to_string(),
        ];
        for t in &cases {
            assert!(degenerate(t).is_some(), "{t:?}");
            assert_eq!(degenerate_text(t), degenerate_before(t), "{t:?}");
        }
        assert_eq!(
            degenerate_text("abababababababababab").as_deref(),
            Some("20 characters of {'a', 'b'}")
        );
    }
}
