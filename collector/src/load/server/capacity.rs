//! The client's measured capacity (`llmsweep selftest`), kept between runs so every sweep can
//! say when a level streamed near what this client can read.

use std::path::PathBuf;

use llmsweep_shared::bundle::{Flag, FlagKind, Selftest};
use llmsweep_shared::selftest::{NEAR_CAPACITY, capacity_level};
use serde::{Deserialize, Serialize};

/// What `llmsweep selftest` measured on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Capacity {
    /// The most token events per second the client read flat out at one token per event.
    pub events_s: f64,
    /// When it was measured, RFC 3339 UTC.
    pub measured_at: String,
    /// The llmsweep version that measured it.
    pub version: String,
}

impl Capacity {
    /// The capacity a selftest shows: its best one-token-per-event flat-out level
    /// ([`capacity_level`]).
    pub(crate) fn of(selftest: &Selftest, measured_at: String) -> Option<Capacity> {
        capacity_level(selftest).map(|l| Capacity {
            events_s: l.events_s,
            measured_at,
            version: env!("CARGO_PKG_VERSION").to_string(),
        })
    }
}

/// Where the capacity is kept: `$XDG_CACHE_HOME/llmsweep/capacity.json`, else
/// `~/.cache/llmsweep/capacity.json`.
pub(crate) fn path() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("llmsweep").join("capacity.json"))
}

/// The capacity last measured here, when there is one this version can read.
pub(crate) fn load() -> Option<Capacity> {
    let text = crate::boundary::file::read_text(&path()?, 1 << 20).ok()?;
    serde_json::from_str(&text).ok()
}

/// Keeps `c` for later runs; says where, or why not.
pub(crate) fn save(c: &Capacity) -> Result<PathBuf, String> {
    let p = path().ok_or("no cache folder ($XDG_CACHE_HOME or $HOME)")?;
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let text = serde_json::to_string_pretty(c).map_err(|e| e.to_string())?;
    crate::store::write_file_atomic(&p, text.as_bytes()).map_err(|e| e.to_string())?;
    Ok(p)
}

/// Flags a level whose client read `events_s` token events per second, more than
/// [`NEAR_CAPACITY`] of what this client was measured to read.
pub(crate) fn near_capacity_flag(events_s: f64, c: &Capacity) -> Option<Flag> {
    let share = events_s / c.events_s;
    (share.is_finite() && share > NEAR_CAPACITY).then(|| Flag {
        kind: FlagKind::ClientBound,
        message: format!(
            "this level streamed {:.0} events/s, {:.0} % of what this client can read ({:.0} events/s, `llmsweep selftest` of {}): the client may have set the pace",
            events_s,
            share * 100.0,
            c.events_s,
            c.measured_at.get(..10).unwrap_or(&c.measured_at)
        ),
        count: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_near_the_measured_capacity_is_flagged() {
        let c = Capacity {
            events_s: 1_000_000.0,
            measured_at: "2026-12-01T14:00:00Z".into(),
            version: "0.1.0".into(),
        };
        assert_eq!(near_capacity_flag(400_000.0, &c), None);
        let f = near_capacity_flag(600_000.0, &c).unwrap();
        assert_eq!(f.kind, FlagKind::ClientBound);
        assert_eq!(
            f.message,
            "this level streamed 600000 events/s, 60 % of what this client can read (1000000 events/s, `llmsweep selftest` of 2026-12-01): the client may have set the pace"
        );
    }
}
