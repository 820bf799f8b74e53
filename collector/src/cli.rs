//! The command line's top level: the subcommands. Each command's flags and handler are its own
//! file in [`crate::commands`].

use clap::{Parser, Subcommand};

use crate::commands::{
    compare::CompareArgs,
    context::ContextArgs,
    demo::DemoArgs,
    export::ExportArgs,
    history::{HistoryArgs, IndexArgs, PushArgs},
    import::ImportArgs,
    plot::PlotArgs,
    report::ReportArgs,
    run::RunArgs,
    selftest::SelftestArgs,
    serve_sim::SimArgs,
    throughput::ThroughputArgs,
    view::ViewArgs,
};
use crate::load::RunPlan;

#[derive(Debug, Parser)]
#[command(
    name = "llmsweep",
    version,
    about = "Measure how fast an OpenAI-compatible LLM server really serves",
    long_about = "Measure how fast an OpenAI-compatible LLM server (SGLang, vLLM, llama.cpp, TGI…) really \
                  serves: throughput against concurrency and latency against context length, every \
                  request's timings kept in a self-describing JSON bundle.\n\nTry it without a server: llmsweep demo",
    after_help = "Examples:
  # A server's throughput and context sweeps into one bundle, then a look at it in a browser
  llmsweep run --url http://127.0.0.1:30000 --label kpro5
  llmsweep view --open

  # Is it faster than the run before? The first bundle is the baseline
  llmsweep compare results/kpro6-run-*.json results/kpro5-run-*.json

Each command's -h lists its most used flags; its --help shows them all, with examples."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Throughput sweep: tokens/s, TTFT and decode speed at each concurrency.
    Throughput(ThroughputArgs),
    /// Context sweep: TTFT, prefill and decode speed at each input length.
    Context(ContextArgs),
    /// Both sweeps into one bundle, the way a new deployment is validated.
    Run(RunArgs),
    /// Compare runs against a baseline: every metric at every level, and what else differs.
    Compare(CompareArgs),
    /// Write one self-contained HTML report of bundles, to open from disk or send around.
    Report(ReportArgs),
    /// Turn another tool's results (a text table, vLLM or SGLang output) into a bundle.
    Import(ImportArgs),
    /// Write a bundle's points as CSV, one row per point, for spreadsheets and scripts.
    Export(ExportArgs),
    /// Serve the viewer and a folder of bundles on 127.0.0.1, to pick runs from in a browser.
    View(ViewArgs),
    /// Draw one of the viewer's charts as an SVG or PNG image, for slides and documents.
    Plot(PlotArgs),
    /// A metric across a label's runs in a folder or a bucket, changes beyond the noise marked.
    History(HistoryArgs),
    /// Copy bundles into a bucket (s3://…), where a team's runs are kept.
    Push(PushArgs),
    /// Rebuild the index that lists a folder's or a bucket's runs without reading them.
    Index(IndexArgs),
    /// Run the simulated server (a test instrument with known timing, not a real engine).
    ServeSim(SimArgs),
    /// Start the simulated server on loopback, sweep it briefly, and write a bundle.
    Demo(DemoArgs),
    /// Measure this client's own limits: tokens/s, CPU, memory and timing error.
    ///
    /// It measures against a loopback endpoint that costs next to nothing, so that a limit of
    /// the client is never taken for the server's.
    Selftest(SelftestArgs),
}

impl Command {
    /// The checked plan of a sweep command (`throughput`, `context`, `run`); `None` for the
    /// others.
    pub fn sweep_plan(&self) -> Option<anyhow::Result<RunPlan>> {
        match self {
            Command::Throughput(a) => Some(a.plan()),
            Command::Context(a) => Some(a.plan()),
            Command::Run(a) => Some(a.plan()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Every command that writes a file or a folder takes `-o`, `--out` and `--output` alike: a
    /// user who wrote one for `run` writes it again for `import` or `report`.
    #[test]
    fn every_command_that_writes_takes_out_and_output_alike() {
        let commands: [&[&str]; 7] = [
            &["run"],
            &["throughput"],
            &["context"],
            &["demo"],
            &["selftest"],
            &["import", "--label", "x", "a.txt"],
            &["report", "a.json"],
        ];
        for args in commands {
            for flag in ["-o", "--out", "--output"] {
                let mut argv = vec!["llmsweep"];
                argv.extend_from_slice(args);
                argv.extend_from_slice(&[flag, "somewhere"]);
                if let Err(e) = Cli::try_parse_from(&argv) {
                    panic!("{argv:?}: {e}");
                }
            }
        }
        for flag in ["-o", "--out", "--output"] {
            let argv = ["llmsweep", "plot", "a.json", flag, "a.svg"];
            assert!(Cli::try_parse_from(argv).is_ok(), "{argv:?}");
            let argv = ["llmsweep", "export", "a.json", flag, "a.csv"];
            assert!(Cli::try_parse_from(argv).is_ok(), "{argv:?}");
        }
    }

    /// `llmsweep NAME -h` (or `--help` when `long`) as a terminal 100 columns wide shows it.
    fn help(name: &str, long: bool) -> (clap::Command, String) {
        let mut cli = Cli::command();
        cli.build();
        let cmd = cli
            .find_subcommand(name)
            .unwrap_or_else(|| panic!("no command {name}"))
            .clone()
            .term_width(100);
        let text = if long {
            cmd.clone().render_long_help()
        } else {
            cmd.clone().render_help()
        };
        (cmd, text.to_string())
    }

    /// The headings of a help text, in order: the unindented lines that end with a colon.
    fn headings(help: &str) -> Vec<&str> {
        help.lines()
            .filter(|l| !l.starts_with(' '))
            .filter_map(|l| l.strip_suffix(':'))
            .collect()
    }

    /// The long names of the flags a help text lists (`help` for `-h, --help`), in order: a flag's
    /// line is indented by 2 (with a short name) or 6 columns, its help by more.
    fn flags(help: &str) -> Vec<&str> {
        help.lines()
            .filter(|l| [2, 6].contains(&(l.len() - l.trim_start().len())))
            .filter(|l| l.trim_start().starts_with('-'))
            .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("--")))
            .map(|w| w.trim_end_matches(','))
            .collect()
    }

    #[test]
    fn a_sweep_commands_short_help_is_a_one_screen_map_of_its_flags() {
        let common = ["Options", "Target", "Workload", "Load shape"];
        let cases: [(&str, &[&str], &[&str]); 3] = [
            (
                "throughput",
                &["Open loop", "Output and resume"],
                &["Open loop", "Output and resume", "Telemetry", "Examples"],
            ),
            (
                "context",
                &["Output and resume", "Goodput"],
                &["Output and resume", "Goodput", "Telemetry", "Examples"],
            ),
            (
                "run",
                &["Open loop", "Output and resume"],
                &["Open loop", "Output and resume", "Telemetry", "Examples"],
            ),
        ];
        for (name, short_tail, long_tail) in cases {
            let (cmd, short) = help(name, false);
            let (_, long) = help(name, true);
            let lines: Vec<&str> = short.lines().collect();
            assert!(
                lines.len() <= 50,
                "{name} -h has {} lines:\n{short}",
                lines.len()
            );
            for line in &lines {
                assert!(
                    line.chars().count() <= 100,
                    "{name} -h is wider than 100 columns: {line:?}"
                );
                if line.starts_with(' ') {
                    let indent = line.len() - line.trim_start().len();
                    assert!(
                        [2, 6].contains(&indent) && line.trim_start().starts_with('-'),
                        "{name} -h gives a flag more than one line: {line:?}\n{short}"
                    );
                }
            }
            assert_eq!(
                headings(&short),
                [&common[..], short_tail].concat(),
                "{name} -h"
            );
            assert_eq!(
                headings(&long),
                [&common[..], long_tail].concat(),
                "{name} --help"
            );
            assert!(
                short.ends_with("--help shows all flags, their details and examples.\n"),
                "{name} -h does not say where the rest is:\n{short}"
            );

            let shown = flags(&short);
            let listed = flags(&long);
            assert!(
                listed.len() >= 25 && listed.contains(&"url"),
                "{name}: {listed:?}"
            );
            let mut hidden = 0;
            for flag in &listed {
                let arg = cmd
                    .get_arguments()
                    .find(|a| a.get_long() == Some(*flag))
                    .unwrap_or_else(|| panic!("{name} --help lists --{flag}, which it lacks"));
                if arg.is_hide_short_help_set() {
                    assert!(!shown.contains(flag), "{name} -h shows the hidden --{flag}");
                    hidden += 1;
                } else {
                    assert!(shown.contains(flag), "{name} -h lacks --{flag}:\n{short}");
                }
            }
            assert_eq!(shown.len() + hidden, listed.len(), "{name}: {shown:?}");
            assert!(hidden > 0 && shown.len() > 15, "{name}: {shown:?}");
        }
    }

    /// Splits an example as a POSIX shell would, quotes and all (no globbing: a pattern stays one
    /// word, which the parser takes as well as the files it would match).
    fn shell_words(line: &str) -> Vec<String> {
        let (mut words, mut word, mut quote) = (Vec::new(), None::<String>, None);
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.get_or_insert_with(String::new).push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    word.get_or_insert_with(String::new);
                }
                (None, c) if c.is_whitespace() => words.extend(word.take()),
                (None, c) => word.get_or_insert_with(String::new).push(c),
            }
        }
        assert!(quote.is_none(), "an unclosed quote in {line:?}");
        words.extend(word);
        words
    }

    #[test]
    fn shell_words_splits_like_a_shell() {
        assert_eq!(
            shell_words(r#"llmsweep run --note gpu="2x RTX A6000" --extra-body '{"a":1}'"#),
            [
                "llmsweep",
                "run",
                "--note",
                "gpu=2x RTX A6000",
                "--extra-body",
                r#"{"a":1}"#
            ]
        );
    }

    #[test]
    fn every_command_ends_its_help_with_examples_that_parse() {
        let mut cli = Cli::command().term_width(100);
        cli.build();
        let mut commands = vec![cli.clone()];
        commands.extend(
            cli.get_subcommands()
                .filter(|c| c.get_name() != "help")
                .cloned(),
        );
        assert_eq!(commands.len(), 16);
        for cmd in commands {
            let name = cmd.get_name().to_string();
            let long = cmd.term_width(100).render_long_help().to_string();
            let (_, tail) = long
                .split_once("\nExamples:\n")
                .unwrap_or_else(|| panic!("{name} --help has no Examples:\n{long}"));
            let examples: Vec<&str> = tail
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("llmsweep "))
                .collect();
            assert!(
                (2..=4).contains(&examples.len()),
                "{name} has {} examples:\n{tail}",
                examples.len()
            );
            for example in examples {
                let words = shell_words(example);
                if let Err(e) = Cli::try_parse_from(&words) {
                    panic!("{name}'s example {example:?} does not parse:\n{e}");
                }
                if name != "llmsweep" && name != "demo" {
                    assert_eq!(words[1], name, "{name}'s example runs another command");
                }
            }
        }
    }
}
