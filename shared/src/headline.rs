//! One sentence per sweep: what a reader wants first, shown by the terminal after the sweep, on
//! the viewer's run card and in a report.
//!
//! Throughput: the peak steady rate and where it is, the level from which the curve is within
//! [`SATURATION_PCT`] of that peak when a higher level shows it (else that it is still rising), and the single-user experience at the lowest level. Context:
//! TTFT and prefill speed from the shortest to the longest length measured, and what was skipped.
//! Rate: from the lowest offered rate to the highest, what the client achieved, TTFT p50 and,
//! with an SLO, the goodput fraction; for a `--find-max-rate` search, the rate it found.

use crate::bundle::{PointStatus, RateSearch, Slo, Sweep, SweepKind};
use crate::charts::axis::fixed;
use crate::curves::Metric;

/// A level within this many percent of the peak counts as saturated.
pub const SATURATION_PCT: f64 = 5.0;

/// The sweep's headline, or `None` when it has no measured point.
pub fn headline(sweep: &Sweep) -> Option<String> {
    match sweep.kind {
        SweepKind::Context => context(sweep),
        SweepKind::Rate => rate(sweep),
        _ => throughput(sweep),
    }
}

fn ok(sweep: &Sweep) -> impl Iterator<Item = &crate::bundle::Point> {
    sweep.points.iter().filter(|p| p.status == PointStatus::Ok)
}

fn throughput(sweep: &Sweep) -> Option<String> {
    // Steady where the points have it (measured), else aggregate (imported).
    let (metric, name) = if ok(sweep).any(|p| Metric::SteadyTokS.of(p).is_some()) {
        (Metric::SteadyTokS, "steady")
    } else {
        (Metric::AggTokS, "aggregate")
    };
    let mut pts: Vec<(u32, f64)> = ok(sweep)
        .filter_map(|p| Some((p.concurrency, metric.of(p)?)))
        .collect();
    pts.sort_by_key(|&(c, _)| c);
    let peak = pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    // Where the peak is first reached: a flat top is named by its lowest level.
    let &(peak_c, peak) = pts.iter().find(|p| p.1 >= peak * 0.999)?;
    let floor = peak * (1.0 - SATURATION_PCT / 100.0);
    let mut out = format!("peak {name} {} tok/s at C={peak_c}", num(peak));
    // Saturated only when a higher level shows it: a peak at the last level may still rise.
    let last_c = pts.last().map_or(0, |p| p.0);
    // Levels the sweep skipped: a throughput sweep's default levels end once saturated.
    let skipped: Vec<String> = sweep
        .points
        .iter()
        .filter(|p| p.status == PointStatus::Skipped)
        .map(|p| p.concurrency.to_string())
        .collect();
    let not_run = match skipped.len() {
        0 => String::new(),
        1 => format!("C={} was not run", skipped[0]),
        _ => format!("C = {} were not run", skipped.join(", ")),
    };
    match pts.iter().find(|&&(_, v)| v >= floor) {
        Some(&(sat_c, _)) if sat_c < last_c => {
            out.push_str(&format!(
                "; saturates from C={sat_c} (within {SATURATION_PCT:.0} % of peak)"
            ));
            if !not_run.is_empty() {
                out.push_str(&format!(", so {not_run}"));
            }
        }
        Some(_) if pts.len() > 1 => out.push_str("; still rising at the last level"),
        _ => {}
    }
    if !not_run.is_empty() && !out.contains(&not_run) {
        out.push_str(&format!("; {not_run}"));
    }
    if let Some(low) = ok(sweep).min_by_key(|p| p.concurrency) {
        let ttft = Metric::TtftP50.of(low);
        let decode = Metric::DecodeTokSP50.of(low);
        let mut parts = Vec::new();
        if let Some(t) = ttft {
            parts.push(format!("TTFT {}", secs(t)));
        }
        if let Some(d) = decode {
            parts.push(format!("{} tok/s per user", num(d)));
        }
        if !parts.is_empty() {
            out.push_str(&format!(
                "; at C={} {}",
                low.concurrency,
                parts.join(" and ")
            ));
        }
    }
    Some(out)
}

fn context(sweep: &Sweep) -> Option<String> {
    let c = ok(sweep).map(|p| p.concurrency).min()?;
    let mut pts: Vec<&crate::bundle::Point> = ok(sweep).filter(|p| p.concurrency == c).collect();
    pts.sort_by_key(|p| p.input_len);
    let (first, last) = (pts.first()?, pts.last()?);
    let t = |p: &crate::bundle::Point| Metric::TtftP50.of(p).map(secs);
    let pf = |p: &crate::bundle::Point| Metric::PrefillTokSP50.of(p).map(num);
    let mut out = match (t(first), t(last)) {
        (Some(a), Some(b)) if pts.len() > 1 => format!(
            "TTFT {a} at {} tokens → {b} at {}",
            first.input_len, last.input_len
        ),
        (Some(a), _) => format!("TTFT {a} at {} tokens", first.input_len),
        _ => return None,
    };
    if let (Some(a), Some(b)) = (pf(first), pf(last)) {
        if pts.len() > 1 {
            out.push_str(&format!("; prefill {a} → {b} tok/s"));
        } else {
            out.push_str(&format!("; prefill {a} tok/s"));
        }
    }
    let skipped: Vec<String> = sweep
        .points
        .iter()
        .filter(|p| p.status == PointStatus::Skipped && p.concurrency == c)
        .map(|p| p.input_len.to_string())
        .collect();
    if !skipped.is_empty() {
        out.push_str(&format!(
            "; {} skipped (beyond the server's context)",
            skipped.join(", ")
        ));
    }
    Some(out)
}

/// The headline of a `--find-max-rate` sweep: the rate found, where it was missed, the SLO.
pub fn search(sweep: &Sweep) -> Option<String> {
    let r = sweep.rate.as_ref()?.search?;
    Some(search_words(&r, &sweep.slo.unwrap_or_default()))
}

/// The search's result in words: the rate found, its bracket, the SLO.
pub fn search_words(r: &RateSearch, slo: &Slo) -> String {
    let rate = |v: f64| {
        let t = format!("{v:.2}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let bounds: Vec<String> = [
        ("TTFT", slo.ttft_s),
        ("TPOT", slo.tpot_s),
        ("e2e", slo.e2e_s),
    ]
    .iter()
    .filter_map(|(n, b)| b.map(|b| format!("{n} ≤ {b} s")))
    .collect();
    let slo_text = format!(
        "{:.0} % of requests within {}",
        r.slo_fraction * 100.0,
        bounds.join(", ")
    );
    match (r.found_rps, r.failed_rps) {
        (Some(f), Some(x)) => format!(
            "max rate meeting the SLO ({slo_text}): {} req/s (missed at {} req/s; the closed loop at C={} completed {} req/s)",
            rate(f),
            rate(x),
            r.closed_loop_concurrency,
            rate(r.closed_loop_rps)
        ),
        (Some(f), None) => format!(
            "max rate meeting the SLO ({slo_text}): at least {} req/s, the highest rate tried",
            rate(f)
        ),
        (None, Some(x)) => format!(
            "no rate tried met the SLO ({slo_text}), down to {} req/s",
            rate(x)
        ),
        (None, None) => format!("no rate was measured for the SLO ({slo_text})"),
    }
}

fn rate(sweep: &Sweep) -> Option<String> {
    if let Some(s) = search(sweep) {
        return Some(s);
    }
    let mut pts: Vec<(&crate::bundle::Point, crate::bundle::RatePoint)> =
        ok(sweep).filter_map(|p| Some((p, p.rate?))).collect();
    pts.sort_by(|a, b| a.1.offered_rps.total_cmp(&b.1.offered_rps));
    let (lo, hi) = (pts.first()?, pts.last()?);
    let rps = |r: &crate::bundle::RatePoint| {
        let offered = crate::charts::axis::format_value(r.offered_rps);
        match r.achieved_rps {
            Some(a) => format!(
                "{offered} req/s offered ({} achieved)",
                crate::charts::axis::format_value(a)
            ),
            None => format!("{offered} req/s offered"),
        }
    };
    let at = |p: &(&crate::bundle::Point, crate::bundle::RatePoint)| {
        let mut s = rps(&p.1);
        if let Some(t) = Metric::TtftP50.of(p.0) {
            s.push_str(&format!(" TTFT p50 {}", secs(t)));
        }
        if let Some(g) = p.0.goodput {
            s.push_str(&format!(", goodput {} %", fixed(g.fraction * 100.0, 0)));
        }
        s
    };
    if pts.len() == 1 {
        return Some(format!("at {}", at(lo)));
    }
    Some(format!("at {} → at {}", at(lo), at(hi)))
}

fn num(v: f64) -> String {
    if v >= 1000.0 {
        fixed(v, 0)
    } else {
        fixed(v, 1)
    }
}

fn secs(v: f64) -> String {
    if v >= 10.0 {
        format!("{} s", fixed(v, 1))
    } else {
        format!("{} s", fixed(v, 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::tests::bundle;

    #[test]
    fn throughput_headline_by_hand() {
        // The fixture: steady = 100·C tok/s at C = 1, 2, 4, TTFT p50 0.1·C s, decode 50/C.
        let b = bundle("a");
        let h = headline(&b.sweeps[0]).unwrap();
        assert_eq!(
            h,
            "peak steady 400.0 tok/s at C=4; still rising at the last level; at C=1 TTFT 0.10 s and 50.0 tok/s per user"
        );
    }

    /// Adds a level at C=8 to the fixture's sweep, C=4's with steady tok/s `steady`.
    fn add_level_8(b: &mut crate::Bundle, steady: f64) {
        let mut p8 = b.sweeps[0].points[2].clone();
        p8.concurrency = 8;
        if let Some(s) = p8.summary.as_mut() {
            s.steady_tok_s = Some(steady);
        }
        b.sweeps[0].points.push(p8);
    }

    #[test]
    fn saturation_is_claimed_only_where_a_higher_level_shows_it() {
        let mut b = bundle("a");
        // Steady 100, 200, 400 at C = 1, 2, 4; a fourth level at C=8 within 5 % of C=4's.
        add_level_8(&mut b, 390.0);
        let h = headline(&b.sweeps[0]).unwrap();
        assert!(
            h.starts_with(
                "peak steady 400.0 tok/s at C=4; saturates from C=4 (within 5 % of peak)"
            ),
            "{h}"
        );
    }

    #[test]
    fn levels_not_run_once_saturated_are_named() {
        let mut b = bundle("a");
        // Steady 100, 200, 400 at C = 1, 2, 4; C=8 within 5 % of C=4's; C = 16, 32 skipped.
        add_level_8(&mut b, 398.0);
        for c in [16, 32] {
            b.sweeps[0].points.push(crate::bundle::Point {
                status: PointStatus::Skipped,
                reason: Some("not run: saturated".into()),
                ..crate::bundle::Point::empty(c, 1000, 500)
            });
        }
        let h = headline(&b.sweeps[0]).unwrap();
        assert!(
            h.starts_with(
                "peak steady 400.0 tok/s at C=4; saturates from C=4 (within 5 % of peak), so C = 16, 32 were not run; at C=1"
            ),
            "{h}"
        );
        // One level skipped, and no saturation shown by the levels measured.
        b.sweeps[0].points.remove(3);
        b.sweeps[0].points.remove(3);
        let h = headline(&b.sweeps[0]).unwrap();
        assert!(
            h.starts_with("peak steady 400.0 tok/s at C=4; still rising at the last level; C=32 was not run; at C=1"),
            "{h}"
        );
    }

    #[test]
    fn context_headline_names_the_skipped_lengths() {
        let b = bundle("a");
        let h = headline(&b.sweeps[1]).unwrap();
        // TTFT p50 0.1·k with k = 1 at 1000 tokens and 2 at 2000; prefill p50 1000 at both.
        assert!(
            h.starts_with("TTFT 0.10 s at 1000 tokens → 0.20 s at 2000; prefill 1000 → 1000 tok/s"),
            "{h}"
        );
        assert!(
            h.ends_with("; 8000 skipped (beyond the server's context)"),
            "{h}"
        );
    }

    #[test]
    fn rate_headline_from_the_lowest_rate_to_the_highest() {
        let b = crate::compare::rate_tests::rate_bundle("a", 2.0, 10);
        let h = headline(&b.sweeps[0]).unwrap();
        assert_eq!(
            h,
            "at 1 req/s offered (0.99 achieved) TTFT p50 0.11 s, goodput 90 % → at 8 req/s offered (7.92 achieved) TTFT p50 0.22 s, goodput 50 %"
        );
    }
}
