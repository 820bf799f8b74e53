//! `llmsweep view`: the viewer and a folder of bundles, served on loopback.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::output::view;

#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// Folder of bundles (.json, .json.gz); bundles added later appear when the page is reloaded.
    #[arg(default_value = "results", value_name = "DIR")]
    pub dir: PathBuf,
    /// Port to listen on [default: 8484, or a free port when 8484 is taken]; 0 picks any free port.
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on. Anything but loopback lets every machine that can reach this one
    /// read the results.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: std::net::IpAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
}

/// `llmsweep view`: check the folder, listen, say where, serve until Ctrl-C.
pub(crate) async fn run(a: ViewArgs) -> anyhow::Result<ExitCode> {
    let folder = std::sync::Arc::new(view::Folder::open(&a.dir)?);
    let (listener, note) = view::listen(view::Listen {
        bind: a.bind,
        port: a.port,
    })
    .await?;
    let addr = listener.local_addr()?;
    if !a.bind.is_loopback() {
        eprintln!(
            "warning: listening on {addr}: anyone who can reach this machine can read every bundle in {} (there is no password)",
            folder.shown()
        );
    }
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let listing = {
        let f = std::sync::Arc::clone(&folder);
        tokio::task::spawn_blocking(move || f.listing())
            .await?
            .with_context(|| format!("cannot read the folder {}", folder.shown()))?
    };
    let url = view::page_url(addr);
    let unreadable = listing.bundles.iter().filter(|b| b.error.is_some()).count();
    println!("llmsweep view: {url}");
    println!(
        "  {} — {} bundle{}{}; bundles added later appear when the page is reloaded",
        folder.shown(),
        listing.bundles.len(),
        if listing.bundles.len() == 1 { "" } else { "s" },
        if unreadable > 0 {
            format!(" ({unreadable} unreadable)")
        } else {
            String::new()
        }
    );
    println!("  Ctrl-C stops");
    if a.open
        && let Err(e) = view::open_browser(&url)
    {
        eprintln!("warning: cannot open a browser ({e}); open {url} yourself");
    }
    view::serve(listener, folder, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
    .with_context(|| format!("serving on {addr} failed"))?;
    println!("stopped");
    Ok(ExitCode::SUCCESS)
}
