//! The page `llmsweep view` serves: the folder's bundles listed to pick from, a pick loaded and
//! drawn, loaded ones marked, a broken file shown with its reason, and a reload that shows a new
//! bundle while keeping the runs that were open.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use fantoccini::Locator;
use llmsweep::output::view::{Access, Folder, Listen, listen, serve};
use serde_json::json;

use super::harness::{Browser, Session};
use super::{LOAD, ONE_AT_A_TIME, bundles, charts_drawn, runs_listed};

/// `[name, label text, loaded, error]` of each entry of the folder list, in order.
async fn folder_entries(s: &Session) -> Vec<(String, String, bool, String)> {
    let v = s
        .js(
            "return [...document.querySelectorAll('[data-testid=folder-entry]')].map(e => [
                e.dataset.name,
                e.querySelector('.folder-label').innerText,
                e.classList.contains('loaded'),
                e.querySelector('.folder-error')?.innerText ?? '']);",
        )
        .await;
    serde_json::from_value(v).unwrap()
}

async fn pick(s: &Session, name: &str) {
    s.client
        .find(Locator::Css(&format!(
            "[data-testid=folder-entry][data-name='{name}'] button.folder-pick"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_folder_list_opens_bundles_and_a_reload_shows_new_ones() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let made = bundles::make().await;
    let folder = Arc::new(Folder::open(made.dir.path()).unwrap());
    let (listener, _) = listen(Listen {
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        port: Some(0),
    })
    .await
    .unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(serve(
        listener,
        folder,
        Access::default(),
        std::future::pending(),
    ));
    let s = Session::start(&browser, (1360, 1000), &[]).await;
    s.client.goto(&base).await.unwrap();

    s.wait(
        "the folder list",
        "document.querySelectorAll('[data-testid=folder-entry]').length === 3",
        LOAD,
    )
    .await;
    let entries = folder_entries(&s).await;
    let mut names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    names.sort();
    assert_eq!(names, ["broken.json", "kpro5.json", "kpro6.json.gz"]);
    for (name, label, loaded, error) in &entries {
        assert!(!loaded, "{name} is not open yet");
        match name.as_str() {
            "broken.json" => {
                assert!(error.contains("not valid JSON"), "{name}: {error}");
                assert_eq!(label, "broken.json");
            }
            _ => {
                assert_eq!(error, "", "{name}");
                assert_eq!(label, name.split('.').next().unwrap(), "the bundle's label");
            }
        }
    }
    let buttons = s
        .js("return [...document.querySelectorAll('[data-testid=folder] button')].map(b => b.innerText.split('\\n')[0])")
        .await;
    let mut buttons: Vec<String> = serde_json::from_value(buttons).unwrap();
    buttons[2..].sort();
    assert_eq!(
        buttons,
        ["Refresh", "Open all", "kpro5", "kpro6"],
        "the two readable bundles can be opened"
    );
    let title = s.js("return document.title").await;
    assert!(
        title.as_str().unwrap().contains("llmsweep viewer"),
        "{title}"
    );
    s.screenshot("view-folder").await;

    // A pick loads the run (the .json.gz one: the viewer inflates it) and draws it.
    pick(&s, "kpro6.json.gz").await;
    s.wait(
        "the picked run",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["kpro6"]);
    charts_drawn(&s, 4).await;
    s.wait(
        "the pick marked as open",
        "document.querySelector('[data-name=\"kpro6.json.gz\"]').classList.contains('loaded')",
        LOAD,
    )
    .await;
    let source = s
        .js("return document.querySelector('.facts .source').innerText")
        .await;
    assert_eq!(source, json!("kpro6.json.gz"));

    // A new bundle appears when the page is reloaded; the open run stays open.
    let mut newer = made.a.clone();
    newer.label = "kpro7".into();
    std::fs::write(made.dir.path().join("kpro7.json"), newer.to_json().unwrap()).unwrap();
    let address = s.js("return location.search").await;
    assert!(
        address.as_str().unwrap().contains("kpro6.json.gz"),
        "the address keeps the open run: {address}"
    );
    s.client.refresh().await.unwrap();
    s.wait(
        "the new bundle",
        "document.querySelectorAll('[data-testid=folder-entry]').length === 4",
        LOAD,
    )
    .await;
    s.wait(
        "the run open before the reload",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    let entries = folder_entries(&s).await;
    assert!(
        entries
            .iter()
            .any(|e| e.0 == "kpro7.json" && e.1 == "kpro7" && !e.2),
        "{entries:?}"
    );

    pick(&s, "kpro5.json").await;
    s.wait(
        "two runs",
        "document.querySelectorAll('[data-testid=run]').length === 2",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["kpro6", "kpro5"]);
    charts_drawn(&s, 4).await;
    let loaded: Vec<String> = folder_entries(&s)
        .await
        .into_iter()
        .filter(|e| e.2)
        .map(|e| e.0)
        .collect();
    assert_eq!(loaded.len(), 2, "{loaded:?}");
    s.screenshot("view-two-runs").await;
    s.close().await;
}
