//! `llmsweep view`: the viewer and a folder of bundles, served on loopback.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::output::view;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # The bundles in ./results, opened in the browser
  llmsweep view --open

  # Another folder, on a port of your choice
  llmsweep view ~/bench/results --port 9000

  # Shared with the lab network, reached as http://kpro5.lan:8484
  llmsweep view --bind 0.0.0.0 --allow-host kpro5.lan")]
pub struct ViewArgs {
    /// Folder of bundles (.json, .json.gz), or a bucket prefix s3://BUCKET/PREFIX.
    ///
    /// Folder of bundles (.json, .json.gz), or a bucket prefix s3://BUCKET/PREFIX; bundles added
    /// later appear when the page is reloaded.
    #[arg(default_value = "results", value_name = "DIR")]
    pub dir: PathBuf,
    /// Port to listen on [default: 8484, or a free port when 8484 is taken].
    ///
    /// Port to listen on [default: 8484, or a free port when 8484 is taken]; 0 picks any free
    /// port.
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on.
    ///
    /// Anything but loopback lets every machine that can reach this one read the results.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: std::net::IpAddr,
    /// A name this server may be reached by, e.g. kpro5.lan (repeatable).
    ///
    /// A name this server may be reached by, e.g. --allow-host kpro5.lan (repeatable). Requests
    /// must name it by an IP address, localhost, this machine's host name or an allowed name, so
    /// that a web page of another site cannot read the results through DNS rebinding.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Let the page load `?bundle=URL` from other sites too.
    ///
    /// Let the page load `?bundle=URL` from other sites too; by default it loads bundles only
    /// from this server, and says so when a link names another site.
    #[arg(long)]
    pub allow_remote_bundles: bool,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
}

/// The names requests may give (this machine's name, then `--allow-host`), checked.
fn access(a: &ViewArgs) -> anyhow::Result<view::Access> {
    let mut allow_hosts: Vec<String> =
        Some(crate::load::server::host::hostname().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .into_iter()
            .collect();
    for h in &a.allow_host {
        let name = h.trim().trim_end_matches('.').to_ascii_lowercase();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
        if !valid {
            anyhow::bail!(
                "--allow-host {h:?} is not a host name: give a name such as kpro5 or kpro5.lan, without a port or scheme (IP addresses are always accepted)"
            );
        }
        if !allow_hosts.contains(&name) {
            allow_hosts.push(name);
        }
    }
    Ok(view::Access {
        allow_hosts,
        remote_bundles: a.allow_remote_bundles,
    })
}

/// `llmsweep view`: check the folder, listen, say where, serve until Ctrl-C.
pub(crate) async fn run(a: ViewArgs) -> anyhow::Result<ExitCode> {
    let folder = std::sync::Arc::new(
        match a
            .dir
            .to_str()
            .filter(|d| crate::store::bucket::is_bucket_url(d))
        {
            Some(url) => {
                let b = crate::store::bucket::Bucket::open(url)?;
                b.check().await?;
                view::Folder::bucket(b)
            }
            None => {
                if let Some(why) = a.dir.to_str().and_then(crate::store::bucket::other_scheme) {
                    anyhow::bail!(why);
                }
                view::Folder::open(&a.dir)?
            }
        },
    );
    let (listener, note) = view::listen(view::Listen {
        bind: a.bind,
        port: a.port,
    })
    .await?;
    let addr = listener.local_addr()?;
    let access = access(&a)?;
    if !a.bind.is_loopback() {
        errln!(
            "warning: listening on {addr}: anyone on the network who can reach this machine can read every bundle in {} (there is no password)",
            folder.shown()
        );
        errln!(
            "  requests must name this server by an IP address or as localhost, {} — so a web page of another site cannot read the results through DNS rebinding; allow more names with --allow-host NAME",
            access.allow_hosts.join(", ")
        );
    }
    if a.allow_remote_bundles {
        errln!(
            "note: --allow-remote-bundles: a link to this page can make it load a bundle from any site"
        );
    }
    if let Some(note) = note {
        errln!("note: {note}");
    }
    let listing = std::sync::Arc::clone(&folder)
        .listing_any()
        .await
        .with_context(|| format!("cannot read {}", folder.shown()))?;
    let url = view::page_url(addr);
    let unreadable = listing.bundles.iter().filter(|b| b.error.is_some()).count();
    outln!("llmsweep view: {url}");
    outln!(
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
    outln!("  Ctrl-C stops");
    if a.open
        && let Err(e) = view::open_browser(&url)
    {
        errln!("warning: cannot open a browser ({e}); open {url} yourself");
    }
    view::serve(listener, folder, access, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
    .with_context(|| format!("serving on {addr} failed"))?;
    outln!("stopped");
    Ok(ExitCode::SUCCESS)
}
