//! Which shard this process runs: `--shard K/N` checked, or `--shard auto` read from the
//! scheduler (a Slurm job array, else a Kubernetes Indexed Job), with one error naming both
//! when neither is there. Separate from the cut: it reads flags and the environment, not the
//! grid.

use super::{Shard, COUNT_VARIABLE, MAX_SHARDS};
use crate::sweep::SweepError;

const SHARD_ACCEPTED: &str =
    "accepted: K/N with N from 1 to 1048576 and K from 0 to N − 1 (0-based), e.g. 0/8, or auto";

pub(super) fn setting(field: &'static str, value: &str, accepted: impl Into<String>) -> SweepError {
    SweepError::Setting {
        field,
        value: value.to_string(),
        accepted: accepted.into(),
    }
}

fn whole(text: &str) -> Option<u64> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

impl Shard {
    /// Checks `index < count ≤ MAX_SHARDS`; `value` is what the user wrote, for the message.
    fn checked(
        index: u64,
        count: u64,
        field: &'static str,
        value: &str,
    ) -> Result<Shard, SweepError> {
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(setting(field, value, SHARD_ACCEPTED));
        }
        Ok(Shard { index, count })
    }
}

/// What `--shard` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardChoice {
    /// `--shard K/N`.
    Fixed(Shard),
    /// `--shard auto`: from the scheduler's environment.
    Auto,
}

impl ShardChoice {
    /// Parses `K/N` or `auto`.
    pub fn parse(text: &str) -> Result<ShardChoice, SweepError> {
        if text.trim() == "auto" {
            return Ok(ShardChoice::Auto);
        }
        let parsed = text
            .split_once('/')
            .and_then(|(k, n)| Some((whole(k)?, whole(n)?)));
        match parsed {
            Some((k, n)) => Shard::checked(k, n, "--shard", text).map(ShardChoice::Fixed),
            None => Err(setting("--shard", text, SHARD_ACCEPTED)),
        }
    }

    /// The shard to run: `K/N` as given, or read from the scheduler's environment through
    /// `env` (`std::env::var` in the binary). `shards` is `--shards N` as typed.
    pub fn resolve(
        self,
        shards: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Shard, SweepError> {
        let shards = shards
            .map(|text| {
                whole(text)
                    .filter(|&n| (1..=MAX_SHARDS).contains(&n))
                    .ok_or_else(|| {
                        setting(
                            "--shards",
                            text,
                            "accepted: a whole number from 1 to 1048576",
                        )
                    })
            })
            .transpose()?;
        let agree = |shard: Shard, source: &str| match shards {
            Some(n) if n != shard.count => Err(setting(
                "--shards",
                &n.to_string(),
                format!(
                    "{source} says {} shards; give the same count or leave --shards out",
                    shard.count
                ),
            )),
            _ => Ok(shard),
        };
        match self {
            ShardChoice::Fixed(shard) => agree(shard, &format!("--shard {shard}")),
            ShardChoice::Auto => {
                if let Some(id) = env("SLURM_ARRAY_TASK_ID") {
                    let shard = slurm(&id, env, shards)?;
                    agree(shard, "the Slurm job array")
                } else if let Some(index) = env("JOB_COMPLETION_INDEX") {
                    let shard = kubernetes(&index, env, shards)?;
                    agree(shard, "the Kubernetes job")
                } else {
                    Err(setting(
                        "--shard",
                        "auto",
                        "this process runs in neither a Slurm job array (no SLURM_ARRAY_TASK_ID) \
                         nor a Kubernetes Indexed Job (no JOB_COMPLETION_INDEX); accepted: \
                         --shard auto inside one of them, or --shard K/N",
                    ))
                }
            }
        }
    }
}

/// A whole number from an environment variable, or an error naming it.
fn variable(name: &'static str, value: &str) -> Result<u64, SweepError> {
    whole(value).ok_or_else(|| {
        setting(
            name,
            value,
            "accepted: a whole number (set by the scheduler)",
        )
    })
}

fn slurm(
    id: &str,
    env: &dyn Fn(&str) -> Option<String>,
    shards: Option<u64>,
) -> Result<Shard, SweepError> {
    let id = variable("SLURM_ARRAY_TASK_ID", id)?;
    let read = |name: &'static str| env(name).map(|v| variable(name, &v)).transpose();
    let min = read("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let max = read("SLURM_ARRAY_TASK_MAX")?;
    let count = read("SLURM_ARRAY_TASK_COUNT")?;
    let span = max.and_then(|max| max.checked_sub(min)).map(|d| d + 1);
    let count = match (count, span) {
        (Some(count), Some(span)) if count != span => {
            return Err(setting(
                "SLURM_ARRAY_TASK_COUNT",
                &count.to_string(),
                format!(
                    "the array runs {count} tasks over indices {min} to {}, so it has gaps (a step or a list); accepted: a contiguous array, sbatch --array=0-{}",
                    max.unwrap_or(min),
                    count.saturating_sub(1)
                ),
            ))
        }
        (Some(count), _) | (None, Some(count)) => count,
        (None, None) => shards.ok_or_else(|| {
            setting(
                "SLURM_ARRAY_TASK_ID",
                &id.to_string(),
                "without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX the count is unknown; accepted: an sbatch --array job, or --shards N",
            )
        })?,
    };
    let index = id.checked_sub(min).ok_or_else(|| {
        setting(
            "SLURM_ARRAY_TASK_ID",
            &id.to_string(),
            format!("it is below SLURM_ARRAY_TASK_MIN {min}"),
        )
    })?;
    Shard::checked(
        index,
        count,
        "--shard",
        &format!("auto (Slurm task {index} of {count})"),
    )
}

fn kubernetes(
    index: &str,
    env: &dyn Fn(&str) -> Option<String>,
    shards: Option<u64>,
) -> Result<Shard, SweepError> {
    let index = variable("JOB_COMPLETION_INDEX", index)?;
    let from_env = env(COUNT_VARIABLE)
        .map(|v| variable(COUNT_VARIABLE, &v))
        .transpose()?;
    let count = match (shards, from_env) {
        (Some(n), Some(m)) if n != m => {
            return Err(setting(
                "--shards",
                &n.to_string(),
                format!("{COUNT_VARIABLE} says {m}; give one count"),
            ))
        }
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => {
            return Err(setting(
                "--shard",
                "auto",
                format!("a Kubernetes Indexed Job (JOB_COMPLETION_INDEX={index}) does not tell the number of shards; accepted: --shards N or {COUNT_VARIABLE}=N, N the job's completions"),
            ))
        }
    };
    Shard::checked(
        index,
        count,
        "--shard",
        &format!("auto (Kubernetes index {index} of {count})"),
    )
}
