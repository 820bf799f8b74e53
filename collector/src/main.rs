//! The `llmsweep` binary: parse the command line, run it.

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    llmsweep::commands::run(llmsweep::cli::Cli::parse()).await
}
