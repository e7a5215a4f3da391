//! The command line (part of the binary, not the library): clap definitions, and the one
//! function that turns flags into the library's [`ScenarioFile`] so they can be laid over a
//! config file. Parsers here only check what the user typed; ranges and relations between
//! fields are checked once, by [`ScenarioFile::validate`].

mod browser;
mod control;
mod errors;
mod fixture;
mod plot;
mod preset;
mod run;
mod sweep;
mod values;

pub use browser::BrowserArgs;
pub use control::ControlArgs;
pub use errors::one_line;
pub use fixture::{FixtureArgs, FixtureFormat};
pub use plot::PlotArgs;
pub use preset::{PresetArgs, PresetsArgs};
pub use run::RunArgs;
pub use sweep::{MergeArgs, SweepArgs};

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

/// Simulate N clients retrying against a modelled server, and count what lands in each window.
///
/// Example: herd-sim --clients 1000 --strategy all
#[derive(Debug, Parser)]
#[command(
    name = "herd-sim",
    version,
    about,
    long_about = None,
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// A subcommand; without one, a plain run of the scenario the flags describe.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The scenario of a plain run.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Parses the command line. `--help` and `--version` print as clap prints them; every other
/// clap error becomes the project's one `error:` line ([`one_line`]) and exit code 2.
pub fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => match error.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => error.exit(),
            _ => {
                eprintln!("error: {}", one_line(&error));
                std::process::exit(2)
            }
        },
    }
}

/// Subcommands beside the plain run. Each later capability (sweep, plot, fixture) adds one arm.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play scripted retry scenarios (JSON) through the simulator's policy code, and with
    /// --check compare each with its `expect` block.
    ///
    /// Example: herd-sim fixture configs/scenarios.json --check
    Fixture(FixtureArgs),

    /// Line chart of a CSV (a sweep's): one line per --by value, mean over seeds with a min-max band.
    ///
    /// Example: herd-sim plot output/sweep.csv --x clients --y peak --by strategy --out output/peak.png
    Plot(PlotArgs),
    /// Run a grid of scenarios × seeds in parallel into CSV, one row per cell and seed.
    ///
    /// Example: herd-sim sweep --clients 100,1000,10000 --strategy all --seeds 30 --out output/sweep.csv
    Sweep(SweepArgs),
    /// List the production-client presets (`--preset NAME`) and what each sets.
    ///
    /// Example: herd-sim presets
    Presets(PresetsArgs),
    /// Join the shards of one sweep (`sweep --shard K/N`) into the file one machine writes.
    ///
    /// Example: herd-sim merge --out output/sweep.csv output/shards/
    Merge(MergeArgs),
}

#[cfg(test)]
mod tests {
    use super::values::parse_size;
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    fn error_of(args: &str) -> String {
        let words = std::iter::once("herd-sim").chain(args.split_whitespace());
        let error = Cli::try_parse_from(words).expect_err(args);
        assert_eq!(error.exit_code(), 2, "{args}");
        one_line(&error)
    }

    #[test]
    fn clap_errors_render_as_one_line_naming_flag_value_and_what_is_accepted() {
        let cases = [
            (
                "--headers-visible yes",
                "invalid value 'yes' for --headers-visible: `yes` is not accepted; accepted: true, false, or the fraction",
            ),
            (
                "--clock-skew 2",
                "invalid value '2' for --clock-skew: `2` is not a clock skew; accepted: a signed duration",
            ),
            (
                "--visibility-switch -3m",
                "invalid value '-3m' for --visibility-switch: `-3m` is negative",
            ),
            ("-1", "unexpected argument '-1' for `herd-sim`"),
            ("--clinets 5", "(hint: did you mean '--clients'?)"),
            ("--seeds 3", "(hint: --seeds belongs to `herd-sim sweep`; or did you mean '--seed'?)"),
            ("--clients", "a value is required for --clients; accepted: <N> (hint: write it after the flag, e.g. --clients <N>)"),
            ("--clients abc", "invalid value 'abc' for --clients: `abc` is not a whole number"),
            ("--server dwn", "invalid value 'dwn' for --server; accepted: down, fixed-window, "),
            ("--server dwn", "(hint: did you mean 'down'?)"),
            ("--clients 1 --clients 2", "--clients is given twice"),
            ("plot", "`herd-sim plot` needs --x, --y, CSV (hint: usage: herd-sim plot"),
            ("sweep --frob", "unexpected argument '--frob' for `herd-sim sweep`"),
            ("fixture a b", "unexpected argument 'b' for `herd-sim fixture`"),
            (
                "fixture a.json --hidden 0.4",
                "unexpected argument '--hidden' for `herd-sim fixture`; accepted: the flags listed by `herd-sim fixture --help` (hint: --hidden is an option of a plain run",
            ),
        ];
        for (args, expected) in cases {
            let line = error_of(args);
            assert!(!line.contains('\n'), "{args}: {line}");
            assert!(line.contains(expected), "{args}: {line}");
        }
    }

    #[test]
    fn a_subcommands_flag_elsewhere_names_its_subcommand_and_no_far_fetched_flag() {
        let plain: Vec<String> = Cli::command()
            .get_arguments()
            .filter_map(|a| a.get_long().map(String::from))
            .collect();
        let mut checked = 0;
        for sub in Cli::command().get_subcommands() {
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                if plain.iter().any(|p| p == long) || long == "help" {
                    continue;
                }
                let line = error_of(&format!("--{long}"));
                let owners = errors::subcommands_with_flag(&format!("--{long}"));
                let expected = format!(
                    "unexpected argument '--{long}' for `herd-sim`; accepted: the flags listed by \
                     `herd-sim --help` (hint: --{long} belongs to `herd-sim {}`",
                    owners.join("` and `herd-sim ")
                );
                assert!(line.starts_with(&expected), "--{long}: {line}");
                assert!(owners.iter().any(|o| o == sub.get_name()), "--{long}");
                if let Some((_, suggested)) = line.split_once("did you mean '") {
                    let suggested = suggested.trim_end_matches("'?)");
                    assert!(
                        errors::edit_distance(suggested, &format!("--{long}")) <= 1,
                        "--{long}: {line}"
                    );
                }
                checked += 1;
            }
        }
        // sweep's own (seeds, aggregate, resume, quiet, max-cells, shard, shards), plot's
        // (x, y, by, where, log-x, log-y) and fixture's (check), at least.
        assert!(checked >= 14, "{checked}");
        let cases = [
            (
                "--aggregate",
                "(hint: --aggregate belongs to `herd-sim sweep` and `herd-sim merge`)",
            ),
            ("--resume", "(hint: --resume belongs to `herd-sim sweep`)"),
            ("--x a", "(hint: --x belongs to `herd-sim plot`)"),
            ("--y b", "(hint: --y belongs to `herd-sim plot`)"),
            ("--check", "(hint: --check belongs to `herd-sim fixture`)"),
            ("sweep --check", "for `herd-sim sweep`; accepted: the flags listed by `herd-sim sweep --help` (hint: --check belongs to `herd-sim fixture`)"),
            ("merge --seeds 3", "(hint: --seeds belongs to `herd-sim sweep`)"),
        ];
        for (args, expected) in cases {
            let line = error_of(args);
            assert!(line.ends_with(expected), "{args}: {line}");
        }
    }

    #[test]
    fn server_offers_every_model_of_the_one_list() {
        let command = Cli::command();
        let server = command
            .get_arguments()
            .find(|a| a.get_id() == "server")
            .expect("--server");
        let offered: Vec<String> = server
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(offered, herd_sim::config::SERVER_MODELS);
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("16GiB"), Ok(16 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("1GB").is_err());
    }
}
