//! What every test of this binary runs the `llmsweep` binary with.

use std::process::{Command, Output};

/// The `llmsweep` binary as a user runs it from the package's folder, without an API key or URL
/// from the environment (a test that wants one sets it).
pub(crate) fn command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_llmsweep"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("LLMSWEEP_API_KEY")
        .env_remove("LLMSWEEP_URL")
        .env_remove("OPENAI_API_KEY");
    cmd
}

/// Runs `llmsweep <args>` to its end.
pub(crate) fn llmsweep(args: &[&str]) -> Output {
    command().args(args).output().expect("llmsweep runs")
}

/// Output bytes as text.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
