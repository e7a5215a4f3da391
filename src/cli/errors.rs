//! Clap's errors rendered in the project's one-line form: the offending flag and value, what
//! is accepted, and a hint. `--help` and `--version` stay as clap prints them.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

pub(crate) use herd_sim::chart::table::edit_distance;

use super::Cli;

/// A clap error as one line, without the `error: ` prefix: the offending flag and value, what
/// is accepted, and a hint (clap's suggestion, or where to look).
pub fn one_line(error: &clap::Error) -> String {
    let text = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        Some(ContextValue::StyledStrs(v)) => Some(
            v.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        ),
        Some(ContextValue::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    // `Usage: herd-sim sweep --resume` → `herd-sim sweep`: the command the user was typing.
    let usage = text(ContextKind::Usage).unwrap_or_default();
    let usage_line = usage
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("Usage:")
        .trim()
        .to_string();
    let command: Vec<&str> = usage_line
        .split_whitespace()
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect();
    let command = match command.is_empty() {
        true => "herd-sim".to_string(),
        false => command.join(" "),
    };
    let see_help = format!("see `{command} --help`");
    let arg = text(ContextKind::InvalidArg).map(|a| flag_name(&a));
    let arg_or = |fallback: &str| arg.clone().unwrap_or_else(|| fallback.to_string());
    let value = text(ContextKind::InvalidValue).unwrap_or_default();
    match error.kind() {
        ErrorKind::InvalidValue => {
            let accepted = text(ContextKind::ValidValue).unwrap_or_default();
            let hint = match text(ContextKind::SuggestedValue) {
                Some(s) => format!("did you mean '{s}'?"),
                None => see_help,
            };
            match value.is_empty() {
                true => {
                    let shown = text(ContextKind::InvalidArg).unwrap_or_default();
                    let accepted = match accepted.is_empty() {
                        true => shown
                            .split_whitespace()
                            .skip(1)
                            .collect::<Vec<_>>()
                            .join(" "),
                        false => accepted,
                    };
                    format!(
                        "a value is required for {}; accepted: {accepted} (hint: write it after the flag, e.g. {shown})",
                        arg_or("a flag")
                    )
                }
                false => format!(
                    "invalid value '{value}' for {}; accepted: {accepted} (hint: {hint})",
                    arg_or("a flag")
                ),
            }
        }
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(error)
                .map(|e| e.to_string())
                .unwrap_or_else(|| "not accepted".into());
            format!("invalid value '{value}' for {}: {why}", arg_or("a flag"))
        }
        ErrorKind::UnknownArgument => {
            let given = arg_or("?");
            let owners = subcommands_with_flag(&given);
            let plain_run_flag = given.strip_prefix("--").is_some_and(|long| {
                Cli::command()
                    .get_arguments()
                    .any(|a| a.get_long() == Some(long))
            });
            let hint = if plain_run_flag && command != "herd-sim" {
                format!("{given} is an option of a plain run (`herd-sim {given} ...`), not of `{command}`")
            } else if !foreign_owners(&owners, &command).is_empty() {
                let owners = foreign_owners(&owners, &command);
                let mut hint = format!(
                    "{given} belongs to `herd-sim {}`",
                    owners.join("` and `herd-sim ")
                );
                // Clap's nearest flag only when it is a likely slip (`--seeds` for `--seed`),
                // not whatever flag is least unlike (`--aggregate` → `--failure-rate`).
                if let Some(s) = text(ContextKind::SuggestedArg)
                    .filter(|s| edit_distance(flag_name(s).as_str(), &given) <= 1)
                {
                    hint.push_str(&format!("; or did you mean '{s}'?"));
                }
                hint
            } else if let Some(s) = text(ContextKind::SuggestedArg) {
                format!("did you mean '{s}'?")
            } else if let Some(s) = text(ContextKind::Suggested) {
                s
            } else if given.starts_with('-') && given[1..].starts_with(|c: char| c.is_ascii_digit())
            {
                "a number is the value of a flag and follows it, e.g. --retries 1".into()
            } else if !given.starts_with('-') {
                "a value goes right after its flag; quote a value that holds spaces".into()
            } else {
                see_help
            };
            format!("unexpected argument '{given}' for `{command}`; accepted: the flags listed by `{command} --help` (hint: {hint})")
        }
        ErrorKind::InvalidSubcommand => {
            let given = text(ContextKind::InvalidSubcommand).unwrap_or_default();
            let accepted: Vec<String> = Cli::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let hint = match text(ContextKind::SuggestedSubcommand).filter(|s| !s.is_empty()) {
                Some(s) => format!("did you mean '{s}'?"),
                None => see_help,
            };
            format!(
                "unknown subcommand '{given}'; accepted: {}, or flags of a plain run (hint: {hint})",
                accepted.join(", ")
            )
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = error
                .get(ContextKind::InvalidArg)
                .map(|v| match v {
                    ContextValue::Strings(v) => v.iter().map(|a| flag_name(a)).collect(),
                    other => vec![flag_name(&other.to_string())],
                })
                .unwrap_or_default();
            format!(
                "`{command}` needs {} (hint: usage: {usage_line})",
                missing.join(", ")
            )
        }
        ErrorKind::ArgumentConflict => {
            let prior = text(ContextKind::PriorArg).map(|a| flag_name(&a));
            match prior {
                Some(p) if Some(&p) == arg.as_ref() => {
                    format!("{p} is given twice; accepted: once (hint: keep the value you mean)")
                }
                Some(p) => format!(
                    "{} cannot be used with {p}; accepted: one of them (hint: {see_help})",
                    arg_or("this flag")
                ),
                None => format!(
                    "{} conflicts with another flag (hint: {see_help})",
                    arg_or("a flag")
                ),
            }
        }
        ErrorKind::TooManyValues | ErrorKind::WrongNumberOfValues | ErrorKind::TooFewValues => {
            format!(
                "wrong number of values for {}{}; (hint: {see_help})",
                arg_or("a flag"),
                match value.is_empty() {
                    true => String::new(),
                    false => format!(" at '{value}'"),
                }
            )
        }
        _ => generic_one_line(error, &see_help),
    }
}

/// `owners` (subcommands accepting a flag) other than the one being typed, `command`
/// (`herd-sim sweep` → every owner but `sweep`; a plain run, `herd-sim`, → all of them).
fn foreign_owners<'a>(owners: &'a [String], command: &str) -> Vec<&'a str> {
    let current = command.strip_prefix("herd-sim").unwrap_or(command).trim();
    owners
        .iter()
        .map(String::as_str)
        .filter(|owner| *owner != current)
        .collect()
}

/// The subcommands that accept the long flag `given` (`--seeds` → `sweep`).
pub(crate) fn subcommands_with_flag(given: &str) -> Vec<String> {
    let Some(long) = given.strip_prefix("--") else {
        return Vec::new();
    };
    Cli::command()
        .get_subcommands()
        .filter(|c| c.get_arguments().any(|a| a.get_long() == Some(long)))
        .map(|c| c.get_name().to_string())
        .collect()
}

/// Any other clap error: its own lines (without usage and the `--help` footer) joined into one.
pub(crate) fn generic_one_line(error: &clap::Error, see_help: &str) -> String {
    let rendered = error.render().to_string();
    let mut parts: Vec<String> = Vec::new();
    for line in rendered.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.trim_start_matches("error:").trim().to_string());
        }
    }
    format!("{} (hint: {see_help})", parts.join("; "))
}

/// `--headers-visible <BOOL>` → `--headers-visible`; `<FILE>` → `FILE`.
pub(crate) fn flag_name(shown: &str) -> String {
    let first = shown.split_whitespace().next().unwrap_or(shown);
    let first = first.split('=').next().unwrap_or(first);
    first
        .trim_matches(['<', '>'])
        .trim_end_matches("...")
        .to_string()
}
