//! serve-sim's timing model: a continuous-batching scheduler as a pure state machine.
//!
//! No tokio and no clock here: the caller says what time it is ([`Model::advance`]) and the model
//! answers with the tokens that were produced up to then. Times are **virtual nanoseconds** since
//! the sim started ([`Nanos`]); phase lengths come from [`SimConfig::prefill_s`] and
//! [`SimConfig::step_s`], rounded to whole nanoseconds once per phase.
//!
//! # Scheduler
//!
//! The model is always in one phase: idle, prefill or decode. At each phase boundary `t`:
//!
//! 1. If requests that arrived at or before `t` wait in the FIFO queue and fewer than
//!    `max_running` requests are running, the longest FIFO prefix that fits is admitted and a
//!    **prefill phase** of `Σ prefill_s(L_i)` starts. No decoding happens during it. At its end,
//!    every admitted request receives its **first token**, then joins the running set.
//! 2. Otherwise, if requests are running, one **decode step** of `step_s(n)` starts (`n` running
//!    requests). At its end every running request receives `tokens_per_chunk` more tokens (fewer
//!    if it needs fewer). With speculative decoding ([`SimConfig::speculative_steps`] `= s`) it
//!    receives `k` tokens instead, `1 ≤ k ≤ s + 1`: each of the `s` drafts is accepted with
//!    probability `p` until the first is rejected, and the target model adds one, so
//!    `E[k] = 1 + p + … + pˢ`, with `p` solved from [`SimConfig::spec_accept`]. The draws are
//!    a hash of the seed, the request and its tokens so far: the same run gives the same chunks.
//! 3. Otherwise the model is idle until the next arrival, which starts phase 1 at its arrival time.
//!
//! A request finishes when it has received its output tokens. Phases are never interrupted:
//! arrivals wait for the current phase to end, and a request cancelled mid-phase still costs
//! the phase its time (the work is already in flight) but receives nothing and frees its slot.
//!
//! Consequence (the ground truth tests rely on): a lone request with `L` prompt tokens and `N`
//! output tokens gets token 1 at `arrival + prefill_s(L)` and token `k` at
//! `arrival + prefill_s(L) + (k − 1)·step_s(1)` (with one token per chunk).

use std::collections::VecDeque;

use super::SimConfig;

/// Virtual time in nanoseconds since the sim started.
pub(crate) type Nanos = u64;

/// Seconds to whole nanoseconds, rounded; negative or non-finite values count as zero.
pub(crate) fn nanos(seconds: f64) -> Nanos {
    if seconds.is_finite() && seconds > 0.0 {
        (seconds * 1e9).round() as Nanos
    } else {
        0
    }
}

/// One generation request as the scheduler sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Job {
    /// Caller-chosen unique id, echoed in every [`Emit`].
    pub id: u64,
    pub prompt_tokens: u64,
    /// Tokens to produce in total (at least 1: prefill always yields one).
    pub output_tokens: u64,
    /// Prompt tokens reported as prefix-cache hits.
    pub cached_tokens: u64,
    /// Of them, those really reused from the prefix cache: prefill skips them (the
    /// `cached_tokens` fault mode reports hits and still prefills the whole prompt).
    pub reused_tokens: u64,
}

/// Tokens handed to one request at the end of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Emit {
    pub id: u64,
    /// Virtual time the tokens were produced (the end of the phase).
    pub at: Nanos,
    pub tokens: u32,
    /// The request has all its output tokens and has left the scheduler.
    pub done: bool,
}

/// What the model looks like from outside: gauges and cumulative counters, as `/metrics` shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// Requests holding a slot: in the current prefill batch or decoding.
    pub running: u64,
    /// Requests queued for admission.
    pub waiting: u64,
    /// Tokens held by running requests: prompt plus generated so far.
    pub kv_tokens: u64,
    pub prompt_tokens_total: u64,
    pub generation_tokens_total: u64,
    pub prefix_cache_queries_total: u64,
    pub prefix_cache_hits_total: u64,
    /// Decode steps times the requests in each (one per request and step): speculative
    /// decoding's "drafts" when it is on.
    pub decode_request_steps_total: u64,
    /// Tokens those request-steps yielded.
    pub decode_tokens_total: u64,
    /// Request-steps and their tokens over the last [`RECENT_STEPS`] decode steps: the recent
    /// acceptance length SGLang's gauge reports.
    pub recent_request_steps: u64,
    pub recent_tokens: u64,
    /// Tokens the decode step under way yields, over all running requests (0 outside decode).
    pub step_tokens: u64,
    /// Length of the decode step under way (0 outside decode).
    pub step_nanos: u64,
}

/// Decode steps SGLang's acceptance-length gauge averages over (its decode log interval).
pub(crate) const RECENT_STEPS: usize = 40;

impl Snapshot {
    /// Mean tokens per request and decode step over the recent steps: 1 without speculative
    /// decoding, `None` before any decode step.
    pub(crate) fn recent_accept_length(&self) -> Option<f64> {
        (self.recent_request_steps > 0)
            .then(|| self.recent_tokens as f64 / self.recent_request_steps as f64)
    }

    /// Generation throughput now, tokens per second: the decode step under way's tokens over its
    /// length, 0 while prefilling or idle (decode waits for prefill).
    pub(crate) fn gen_throughput(&self) -> f64 {
        if self.step_nanos == 0 {
            0.0
        } else {
            self.step_tokens as f64 / (self.step_nanos as f64 * 1e-9)
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Queued {
    job: Job,
    arrival: Nanos,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    job: Job,
    emitted: u64,
    /// Tokens the decode step under way gives it.
    next: u64,
}

#[derive(Debug)]
enum Phase {
    Idle,
    Prefill { ends: Nanos, batch: Vec<Slot> },
    Decode { ends: Nanos },
}

/// The scheduler state machine. See the module documentation for the rules.
#[derive(Debug)]
pub(crate) struct Model {
    cfg: SimConfig,
    /// Time of the last phase boundary (or phase start).
    now: Nanos,
    phase: Phase,
    waiting: VecDeque<Queued>,
    running: Vec<Slot>,
    counters: Snapshot,
    /// (request-steps, tokens) of the last [`RECENT_STEPS`] decode steps.
    recent: VecDeque<(u64, u64)>,
    /// Probability that one draft is accepted, solved from `spec_accept` (0 without drafts).
    draft_p: f64,
}

impl Model {
    /// A fresh, idle model. Only the timing fields of `cfg` are used.
    pub(crate) fn new(cfg: SimConfig) -> Self {
        Model {
            now: 0,
            phase: Phase::Idle,
            waiting: VecDeque::new(),
            running: Vec::new(),
            counters: Snapshot::default(),
            recent: VecDeque::new(),
            draft_p: cfg_draft_p(&cfg),
            cfg,
        }
    }

    /// Queues `job`, which arrived at `at`, behind everything already queued.
    ///
    /// Nothing happens until [`advance`](Self::advance) reaches a time at or after `at`; jobs
    /// submitted for the same instant before advancing are admitted together. An arrival stamped
    /// earlier than the previous one is treated as arriving with it, to keep the queue in order.
    pub(crate) fn submit(&mut self, at: Nanos, job: Job) {
        let last = self.waiting.back().map_or(0, |q| q.arrival);
        let arrival = at.max(last);
        self.waiting.push_back(Queued { job, arrival });
    }

    /// Removes request `id` wherever it is. Its slot is free for the next admission; a phase
    /// already under way keeps its length. Unknown ids are ignored.
    pub(crate) fn cancel(&mut self, id: u64) {
        self.waiting.retain(|q| q.job.id != id);
        self.running.retain(|s| s.job.id != id);
        if let Phase::Prefill { batch, .. } = &mut self.phase {
            batch.retain(|s| s.job.id != id);
        }
    }

    /// The next time at which something happens: a phase ends, or an idle model starts working
    /// on a queued arrival. `None` when idle with an empty queue.
    pub(crate) fn next_deadline(&self) -> Option<Nanos> {
        match &self.phase {
            Phase::Prefill { ends, .. } | Phase::Decode { ends } => Some(*ends),
            Phase::Idle => self.waiting.front().map(|q| q.arrival.max(self.now)),
        }
    }

    /// Runs the model up to and including virtual time `to` and returns the tokens produced, in
    /// time order (requests within one phase in admission order).
    pub(crate) fn advance(&mut self, to: Nanos) -> Vec<Emit> {
        let mut out = Vec::new();
        while let Some(t) = self.next_deadline().filter(|&t| t <= to) {
            match std::mem::replace(&mut self.phase, Phase::Idle) {
                Phase::Idle => {}
                Phase::Prefill { batch, .. } => self.finish_prefill(t, batch, &mut out),
                Phase::Decode { .. } => self.finish_decode(t, &mut out),
            }
            self.now = t;
            self.start_phase(t);
        }
        out
    }

    /// Gauges and counters as of the last [`advance`](Self::advance).
    pub(crate) fn snapshot(&self) -> Snapshot {
        let batch: &[Slot] = match &self.phase {
            Phase::Prefill { batch, .. } => batch,
            _ => &[],
        };
        let holding = batch.iter().chain(&self.running);
        Snapshot {
            running: (batch.len() + self.running.len()) as u64,
            waiting: self.waiting.len() as u64,
            kv_tokens: holding.map(|s| s.job.prompt_tokens + s.emitted).sum(),
            ..self.counters
        }
    }

    /// Chooses the phase that starts at boundary `t` (rules 1–3 of the module docs).
    fn start_phase(&mut self, t: Nanos) {
        // `max(1)`: a zero limit would leave an idle model spinning on its queue forever.
        let limit = self.cfg.max_running.max(1) as usize;
        let room = limit.saturating_sub(self.running.len());
        let ready = self.waiting.iter().take_while(|q| q.arrival <= t).count();
        let admit = room.min(ready);
        (self.counters.step_tokens, self.counters.step_nanos) = (0, 0);
        self.phase = if admit > 0 {
            let batch: Vec<Slot> = self
                .waiting
                .drain(..admit)
                .map(|q| Slot {
                    job: q.job,
                    emitted: 0,
                    next: 0,
                })
                .collect();
            let seconds: f64 = batch
                .iter()
                .map(|s| {
                    let computed =
                        s.job.prompt_tokens - s.job.reused_tokens.min(s.job.prompt_tokens);
                    self.cfg.prefill_s(computed)
                })
                .sum();
            Phase::Prefill {
                ends: t + nanos(seconds),
                batch,
            }
        } else if !self.running.is_empty() {
            let kv: u64 = self
                .running
                .iter()
                .map(|s| s.job.prompt_tokens + s.emitted)
                .sum();
            let step =
                self.cfg.step_s(self.running.len() as u64) + self.cfg.decode_kv_s * kv as f64;
            let per_step = u64::from(self.cfg.tokens_per_chunk.max(1));
            let (seed, drafts, p) = (self.cfg.seed, self.cfg.speculative_steps, self.draft_p);
            for s in &mut self.running {
                let yields = match drafts {
                    Some(d) => 1 + accepted_drafts(seed, s.job.id, s.emitted, d, p),
                    None => per_step,
                };
                s.next = yields.min(s.job.output_tokens.saturating_sub(s.emitted));
            }
            self.counters.step_tokens = self.running.iter().map(|s| s.next).sum();
            self.counters.step_nanos = nanos(step);
            Phase::Decode {
                ends: t + nanos(step),
            }
        } else {
            Phase::Idle
        };
    }

    fn finish_prefill(&mut self, t: Nanos, batch: Vec<Slot>, out: &mut Vec<Emit>) {
        for mut slot in batch {
            let job = slot.job;
            self.counters.prompt_tokens_total += job.prompt_tokens;
            self.counters.prefix_cache_queries_total += job.prompt_tokens;
            self.counters.prefix_cache_hits_total += job.cached_tokens.min(job.prompt_tokens);
            slot.emitted = 1;
            self.counters.generation_tokens_total += 1;
            let done = job.output_tokens <= 1;
            out.push(Emit {
                id: job.id,
                at: t,
                tokens: 1,
                done,
            });
            if !done {
                self.running.push(slot);
            }
        }
    }

    fn finish_decode(&mut self, t: Nanos, out: &mut Vec<Emit>) {
        let steps = self.running.len() as u64;
        let yielded: u64 = self.running.iter().map(|s| s.next).sum();
        self.counters.decode_request_steps_total += steps;
        self.counters.decode_tokens_total += yielded;
        self.recent.push_back((steps, yielded));
        if self.recent.len() > RECENT_STEPS {
            self.recent.pop_front();
        }
        self.counters.recent_request_steps = self.recent.iter().map(|r| r.0).sum();
        self.counters.recent_tokens = self.recent.iter().map(|r| r.1).sum();
        for slot in &mut self.running {
            let tokens = std::mem::take(&mut slot.next);
            slot.emitted += tokens;
            self.counters.generation_tokens_total += tokens;
            let done = slot.emitted >= slot.job.output_tokens;
            out.push(Emit {
                id: slot.job.id,
                at: t,
                tokens: tokens as u32,
                done,
            });
        }
        self.running.retain(|s| s.emitted < s.job.output_tokens);
    }
}

/// The probability `p` that one draft is accepted for which `1 + p + … + pˢ` (the mean tokens
/// a step yields with `s` drafts) is `cfg.spec_accept`; 0 without speculative decoding.
fn cfg_draft_p(cfg: &SimConfig) -> f64 {
    let Some(s) = cfg.speculative_steps.filter(|&s| s > 0) else {
        return 0.0;
    };
    let mean = |p: f64| (0..=s).map(|i| p.powi(i as i32)).sum::<f64>();
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if mean(mid) < cfg.spec_accept {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// SplitMix64: a well-mixed 64-bit hash step.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Drafts accepted in a row (0 to `drafts`) for request `id` at the step after its `emitted`-th
/// token, each with probability `p`: a pure function of its arguments.
fn accepted_drafts(seed: u64, id: u64, emitted: u64, drafts: u32, p: f64) -> u64 {
    let mut state = mix(seed ^ mix(id ^ mix(emitted)));
    let mut accepted = 0;
    for _ in 0..drafts {
        state = mix(state);
        // The top 53 bits as a uniform number in [0, 1).
        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
        if u >= p {
            break;
        }
        accepted += 1;
    }
    accepted
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// prefill_s(1000) = 10 ms + 1000 × 10 µs = 20 ms; step_s(n) = 4 ms + (n − 1) × 1 ms.
    fn cfg(max_running: u32) -> SimConfig {
        SimConfig {
            prefill_a_s: 0.010,
            prefill_b_s: 10e-6,
            prefill_c_s: 0.0,
            decode_d0_s: 0.004,
            decode_d1_s: 0.001,
            max_running,
            ..SimConfig::default()
        }
    }

    fn job(id: u64, prompt_tokens: u64, output_tokens: u64) -> Job {
        Job {
            id,
            prompt_tokens,
            output_tokens,
            cached_tokens: 0,
            reused_tokens: 0,
        }
    }

    fn emit(id: u64, at: Nanos, tokens: u32, done: bool) -> Emit {
        Emit {
            id,
            at,
            tokens,
            done,
        }
    }

    #[test]
    fn lone_request_gets_first_token_at_prefill_end_then_one_per_step() {
        let mut m = Model::new(cfg(4));
        m.submit(0, job(1, 1000, 4));
        assert_eq!(
            m.advance(Nanos::MAX),
            vec![
                emit(1, 20 * MS, 1, false),
                emit(1, 24 * MS, 1, false),
                emit(1, 28 * MS, 1, false),
                emit(1, 32 * MS, 1, true),
            ]
        );
        assert_eq!(m.next_deadline(), None);
    }

    #[test]
    fn a_slowed_server_takes_exactly_factor_times_as_long() {
        // Two requests sharing prefill and steps: every emit at 1.5 × its time.
        let run = |c: SimConfig| {
            let mut m = Model::new(c);
            m.submit(0, job(1, 1000, 3));
            m.submit(0, job(2, 1000, 3));
            m.advance(Nanos::MAX)
        };
        let plain = run(cfg(4));
        let slow = run(cfg(4).slowed(1.5));
        assert_eq!(plain.len(), slow.len());
        for (p, s) in plain.iter().zip(&slow) {
            assert_eq!((p.id, p.tokens, p.done), (s.id, s.tokens, s.done));
            assert_eq!(s.at, p.at * 3 / 2, "{p:?} {s:?}");
        }
    }

    #[test]
    fn lone_request_timing_is_relative_to_its_arrival() {
        let mut m = Model::new(cfg(4));
        m.submit(100 * MS, job(1, 1000, 2));
        assert_eq!(m.next_deadline(), Some(100 * MS));
        assert_eq!(m.advance(99 * MS), vec![]);
        assert_eq!(
            m.advance(Nanos::MAX),
            vec![emit(1, 120 * MS, 1, false), emit(1, 124 * MS, 1, true)]
        );
    }

    #[test]
    fn requests_arriving_together_share_prefill_and_steps() {
        let mut m = Model::new(cfg(4));
        m.submit(0, job(1, 1000, 3));
        m.submit(0, job(2, 1000, 3));
        // Prefill of both: 2 × 20 ms; then steps of step_s(2) = 5 ms.
        assert_eq!(
            m.advance(Nanos::MAX),
            vec![
                emit(1, 40 * MS, 1, false),
                emit(2, 40 * MS, 1, false),
                emit(1, 45 * MS, 1, false),
                emit(2, 45 * MS, 1, false),
                emit(1, 50 * MS, 1, true),
                emit(2, 50 * MS, 1, true),
            ]
        );
    }

    #[test]
    fn requests_beyond_max_running_queue_in_fifo_order() {
        let mut m = Model::new(cfg(1));
        m.submit(0, job(1, 1000, 2));
        m.submit(0, job(2, 1000, 2));
        assert_eq!(m.advance(10 * MS), vec![]);
        let s = m.snapshot();
        assert_eq!((s.running, s.waiting, s.kv_tokens), (1, 1, 1000));
        assert_eq!(
            m.advance(Nanos::MAX),
            vec![
                emit(1, 20 * MS, 1, false),
                emit(1, 24 * MS, 1, true),
                emit(2, 44 * MS, 1, false),
                emit(2, 48 * MS, 1, true),
            ]
        );
        let s = m.snapshot();
        assert_eq!((s.running, s.waiting, s.kv_tokens), (0, 0, 0));
        assert_eq!(
            (s.prompt_tokens_total, s.generation_tokens_total),
            (2000, 4)
        );
    }

    #[test]
    fn arrival_during_decode_waits_for_the_step_then_pauses_decoding() {
        let mut m = Model::new(cfg(4));
        m.submit(0, job(1, 1000, 4));
        assert_eq!(m.advance(22 * MS), vec![emit(1, 20 * MS, 1, false)]);
        m.submit(22 * MS, job(2, 1000, 2));
        // Step 20→24 finishes; prefill of request 2 runs 24→44; one shared step of 5 ms, after
        // which request 2 is done and request 1 steps alone again (4 ms).
        assert_eq!(
            m.advance(Nanos::MAX),
            vec![
                emit(1, 24 * MS, 1, false),
                emit(2, 44 * MS, 1, false),
                emit(1, 49 * MS, 1, false),
                emit(2, 49 * MS, 1, true),
                emit(1, 53 * MS, 1, true),
            ]
        );
    }

    #[test]
    fn cancelled_request_frees_its_slot_after_the_phase_in_flight() {
        let mut m = Model::new(cfg(1));
        m.submit(0, job(1, 1000, 100));
        m.submit(0, job(2, 1000, 1));
        assert_eq!(m.advance(21 * MS), vec![emit(1, 20 * MS, 1, false)]);
        m.cancel(1);
        assert_eq!(m.snapshot().running, 0);
        // The decode step 20→24 still takes its time; then request 2 is admitted.
        assert_eq!(m.advance(Nanos::MAX), vec![emit(2, 44 * MS, 1, true)]);
    }

    #[test]
    fn cancel_removes_waiting_and_prefilling_requests() {
        let mut m = Model::new(cfg(1));
        m.submit(0, job(1, 1000, 2));
        m.submit(0, job(2, 1000, 2));
        assert_eq!(m.advance(0), vec![]);
        m.cancel(2);
        m.cancel(1);
        m.cancel(99);
        assert_eq!(m.snapshot().running + m.snapshot().waiting, 0);
        assert_eq!(m.advance(Nanos::MAX), vec![]);
        assert_eq!(m.next_deadline(), None);
    }

    #[test]
    fn several_tokens_per_chunk_are_emitted_per_step() {
        let mut m = Model::new(SimConfig {
            tokens_per_chunk: 3,
            ..cfg(4)
        });
        m.submit(0, job(1, 1000, 8));
        assert_eq!(
            m.advance(Nanos::MAX),
            vec![
                emit(1, 20 * MS, 1, false),
                emit(1, 24 * MS, 3, false),
                emit(1, 28 * MS, 3, false),
                emit(1, 32 * MS, 1, true),
            ]
        );
        assert_eq!(m.snapshot().generation_tokens_total, 8);
    }

    fn speculative(steps: u32, accept: f64) -> SimConfig {
        SimConfig {
            speculative_steps: Some(steps),
            spec_accept: accept,
            ..cfg(4)
        }
    }

    #[test]
    fn speculative_steps_yield_one_to_steps_plus_one_tokens_with_the_mean_asked() {
        let c = speculative(3, 2.6);
        let p = cfg_draft_p(&c);
        assert!((1.0 + p + p * p + p * p * p - 2.6).abs() < 1e-12, "p = {p}");
        let draws: Vec<u64> = (0..200_000)
            .map(|i| 1 + accepted_drafts(7, i / 100, i % 100, 3, p))
            .collect();
        assert!(draws.iter().all(|k| (1..=4).contains(k)));
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        // The mean of 200 000 draws of a spread under 1.2 is within ±0.01 (4 standard errors).
        assert!((mean - 2.6).abs() < 0.01, "mean {mean}");
        for k in 1..=4 {
            assert!(draws.contains(&k), "never {k} tokens");
        }
    }

    #[test]
    fn a_speculative_request_gets_its_tokens_in_steps_of_one_to_four() {
        let mut m = Model::new(speculative(3, 2.6));
        m.submit(0, job(1, 1000, 200));
        let emits = m.advance(Nanos::MAX);
        assert_eq!(emits[0], emit(1, 20 * MS, 1, false));
        // Every step takes step_s(1) = 4 ms and yields 1 to 4 tokens.
        for (i, e) in emits.iter().enumerate().skip(1) {
            assert_eq!(e.at, 20 * MS + i as u64 * 4 * MS);
            assert!((1..=4).contains(&e.tokens), "{e:?}");
        }
        let total: u32 = emits.iter().map(|e| e.tokens).sum();
        assert_eq!(total, 200);
        assert!(emits.last().is_some_and(|e| e.done));
        let snap = m.snapshot();
        let steps = emits.len() as u64 - 1;
        assert_eq!(snap.decode_request_steps_total, steps);
        assert_eq!(snap.decode_tokens_total, 199);
        assert_eq!(snap.recent_request_steps, steps.min(RECENT_STEPS as u64));
        // 199 tokens in about 199 / 2.6 ≈ 77 steps.
        assert!((60..=95).contains(&steps), "{steps} steps");
    }

    #[test]
    fn acceptance_at_its_bounds_is_exact() {
        for (accept, per_step) in [(4.0, 4), (1.0, 1)] {
            let mut m = Model::new(speculative(3, accept));
            m.submit(0, job(1, 1000, 9));
            let tokens: Vec<u32> = m.advance(Nanos::MAX).iter().map(|e| e.tokens).collect();
            let want: Vec<u32> = if per_step == 4 {
                vec![1, 4, 4]
            } else {
                vec![1; 9]
            };
            assert_eq!(tokens, want, "acceptance {accept}");
            assert_eq!(
                m.snapshot().recent_accept_length(),
                Some(f64::from(per_step))
            );
        }
    }

    #[test]
    fn counters_track_prompt_and_reported_cache_hits() {
        let mut m = Model::new(cfg(4));
        m.submit(
            0,
            Job {
                cached_tokens: 300,
                reused_tokens: 0,
                ..job(1, 1000, 1)
            },
        );
        m.submit(
            0,
            Job {
                cached_tokens: 5000,
                reused_tokens: 0,
                ..job(2, 10, 1)
            },
        );
        m.advance(Nanos::MAX);
        let s = m.snapshot();
        assert_eq!(s.prefix_cache_queries_total, 1010);
        assert_eq!(s.prefix_cache_hits_total, 310);
    }

    #[test]
    fn out_of_order_arrival_stamps_keep_fifo_order() {
        let mut m = Model::new(cfg(1));
        m.submit(5 * MS, job(1, 1000, 1));
        m.submit(3 * MS, job(2, 1000, 1));
        assert_eq!(
            m.advance(Nanos::MAX),
            vec![emit(1, 25 * MS, 1, true), emit(2, 45 * MS, 1, true)]
        );
    }

    #[test]
    fn nanos_rounds_and_clamps() {
        assert_eq!(nanos(0.020), 20 * MS);
        assert_eq!(nanos(1.0 / 73.5), 13_605_442);
        assert_eq!(nanos(-1.0), 0);
        assert_eq!(nanos(f64::NAN), 0);
    }
}
