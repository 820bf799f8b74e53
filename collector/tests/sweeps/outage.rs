//! A server that goes away during a level: the attempt is kept as discarded, the server is
//! waited for, and the level runs again from its start; one that does not come back fails the
//! level with the reason and stops the run.

use std::time::Duration;

use crate::common::sim::{SERIAL, plan};
use llmsweep::load::Interrupt;
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{ErrorKind, FlagKind, PointStatus};

/// 40 tokens of 20 ms: 0.8 s a request, so a level of 6 requests takes about 5 s at C=1.
fn slow() -> SimConfig {
    SimConfig {
        decode_d0_s: 0.02,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Fast)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

const ARGS: [&str; 10] = [
    "--concurrency",
    "1,2",
    "--input-len",
    "50",
    "--output-len",
    "40",
    "--requests",
    "6",
    "--warmup",
    "0",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_is_run_again_once_the_server_is_back() {
    let _turn = SERIAL.lock().await;
    let port = free_port();
    let sim = SimServer::start(slow(), port).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&sim.url(), dir.path(), &ARGS);
    // Down 1.5 s into C=1 for 3 s, then back on the same port.
    let outage = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        sim.shutdown().await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        SimServer::start(slow(), port).await.unwrap()
    });
    let outcome =
        crate::common::sim::run_silently(&p, vec!["llmsweep".into()], Interrupt::default())
            .await
            .unwrap();
    let sim = outage.await.unwrap();
    sim.shutdown().await;
    let b = Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap()).unwrap();
    assert!(
        b.complete && outcome.failed.is_empty(),
        "{:?}",
        outcome.failed
    );
    let points = &b.sweeps[0].points;
    assert_eq!(points.len(), 2);
    let c1 = &points[0];
    assert_eq!(c1.status, PointStatus::Ok);
    assert_eq!(c1.requests.len(), 6, "the level again, whole");
    assert!(c1.requests.iter().all(|r| r.is_ok()), "{:?}", c1.requests);
    assert_eq!(c1.discarded.len(), 1);
    let d = &c1.discarded[0];
    assert!(
        d.reason.starts_with("the server stopped answering ("),
        "{}",
        d.reason
    );
    let waited = d.waited_s.unwrap();
    assert!((1.0..6.0).contains(&waited), "waited {waited} s");
    assert!(
        d.requests.iter().any(|r| r
            .error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::Connect)),
        "the refused requests are kept: {:?}",
        d.requests
    );
    let flag = c1.flags.iter().find(|f| f.kind == FlagKind::Rerun).unwrap();
    assert!(
        flag.message
            .starts_with("run again from its start: the server stopped answering (")
            && flag
                .message
                .ends_with("the 1 discarded attempt is kept in the bundle"),
        "{}",
        flag.message
    );
    // Nothing of the discarded attempt is in the level's numbers, and none of its prompts
    // was sent again: the rerun's prefixes are fresh, and said.
    assert_eq!(c1.summary.as_ref().unwrap().failed, 0);
    assert!(c1.prefix_seed.is_some());
    assert!(
        c1.requests
            .iter()
            .all(|r| d.requests.iter().all(|x| x.prompt_hash != r.prompt_hash))
    );
    assert_eq!(points[1].status, PointStatus::Ok);
    assert!(points[1].discarded.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_come_back_fails_the_level_and_stops_the_run() {
    let _turn = SERIAL.lock().await;
    let sim = SimServer::start(slow(), 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args = ARGS.to_vec();
    args.extend(["--wait-server", "1"]);
    let p = plan(&sim.url(), dir.path(), &args);
    let gone = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        sim.shutdown().await;
    });
    let outcome =
        crate::common::sim::run_silently(&p, vec!["llmsweep".into()], Interrupt::default())
            .await
            .unwrap();
    gone.await.unwrap();
    let b = Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap()).unwrap();
    assert!(!b.complete, "C=2 was never run");
    assert_eq!(outcome.failed, ["C=1"]);
    let points = &b.sweeps[0].points;
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].status, PointStatus::Failed);
    let reason = points[0].reason.as_deref().unwrap();
    assert!(
        reason.starts_with("the server stopped answering (")
            && reason.ends_with("and did not answer again within 1 s (--wait-server)"),
        "{reason}"
    );
    assert_eq!(points[0].discarded.len(), 1);
    assert!(!points[0].discarded[0].requests.is_empty());
}
