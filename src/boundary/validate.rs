//! The one validation that builds a [`BoundaryPlan`] from a [`BoundarySpec`], before any run:
//! the axis, range, level, tolerance, seeds and budget, every case and its scenario at both
//! ends of the range, the collapse rule in words and the bands' settings.

use std::sync::atomic::AtomicU64;

use super::band::{self, KnockOver};
use super::evaluate::{value_text, SweepOracle};
use super::search::Settings;
use super::{
    is_numeric, numeric_axes, one_value, BoundaryError, BoundaryPlan, BoundarySpec, Case,
    BATCHES_PER_POINT,
};
use crate::config::{check_requests, check_work, ConfigError, Scenario, ScenarioFile};
use crate::sweep::parameter::{
    parameter, parse_axis, strategies_unnamed, Kind, Parameter, Value, FROM_PRESET, PARAMETERS,
};
use crate::sweep::shard::ROW_OVERHEAD;
use crate::sweep::SweepError;
use crate::time::SimDuration;

impl BoundaryPlan {
    /// Checks everything before any run: the axis, range, level, tolerance, seeds and budget,
    /// and every case's scenario at both ends of the range.
    pub fn new(spec: BoundarySpec) -> Result<BoundaryPlan, BoundaryError> {
        let (name, range) = &spec.axis;
        let axis = parameter(name)
            .filter(|p| is_numeric(p.kind))
            .ok_or_else(|| BoundaryError::Flag {
                flag: "--axis",
                value: name.clone(),
                problem: match parameter(name) {
                    Some(_) => "not a numeric sweep parameter".into(),
                    None => "not a sweep parameter".into(),
                },
                accepted: numeric_axes(),
            })?;
        let range_error = |problem: String| BoundaryError::Flag {
            flag: "--range",
            value: range.clone(),
            problem,
            accepted: format!(
                "LO..HI in the unit of --axis {}, LO below HI, e.g. {}",
                axis.name,
                match axis.kind {
                    Kind::Duration => "100ms..1s",
                    Kind::Whole => "1..20",
                    _ => "20..120",
                }
            ),
        };
        let Some((lo_text, hi_text)) = range.split_once("..") else {
            return Err(range_error("not a range".into()));
        };
        let parse_end = |text: &str| {
            one_value(axis, text).map_err(|e| {
                range_error(match e {
                    SweepError::Values { message, .. } => message,
                    other => other.to_string(),
                })
            })
        };
        let (lo, hi) = (parse_end(lo_text)?, parse_end(hi_text)?);
        if lo >= hi {
            return Err(range_error("LO is not below HI".into()));
        }
        if spec.band {
            band::check_axis(axis, &spec.lists)?;
        }
        if !(spec.level > 0.0 && spec.level < 1.0) {
            return Err(BoundaryError::Flag {
                flag: "--level",
                value: spec.level.to_string(),
                problem: "outside (0, 1)".into(),
                accepted: "a probability strictly between 0 and 1, e.g. 0.5".into(),
            });
        }
        if spec.seeds == 0 || spec.seeds > 10_000 {
            return Err(BoundaryError::Flag {
                flag: "--seeds",
                value: spec.seeds.to_string(),
                problem: "out of range".into(),
                accepted: "a whole number of seeds a point gets at a time, 1 to 10000".into(),
            });
        }
        let tolerance = parse_tolerance(axis, &spec.tolerance, hi - lo)?;
        let batches = match spec.curve {
            Some(k) if !(2..=1_000).contains(&k) => {
                return Err(BoundaryError::Flag {
                    flag: "--points",
                    value: k.to_string(),
                    problem: "out of range".into(),
                    accepted: "2 to 1000 points of the curve".into(),
                })
            }
            Some(k) => k,
            None => 2,
        };
        if spec.max_runs < batches * spec.seeds {
            return Err(BoundaryError::Flag {
                flag: "--max-runs",
                value: spec.max_runs.to_string(),
                problem: format!(
                    "fewer than the {} runs of the first {batches} points",
                    batches * spec.seeds
                ),
                accepted: format!("at least --seeds × {batches} = {}", batches * spec.seeds),
            });
        }
        let threads = spec
            .threads
            .unwrap_or_else(crate::config::default_threads)
            .max(1);
        let cases = cases(&spec.base, axis, &spec.lists)?;
        let mut work: u128 = 0;
        let mut requests: u128 = 0;
        let mut first_ends: Vec<Scenario> = Vec::new();
        let mut settles = Vec::new();
        let mut bands = Vec::new();
        for case in &cases {
            let mut per_run: u128 = 0;
            let mut at_ends: Vec<Scenario> = Vec::new();
            let ends = [lo, hi].map(|end| case_scenario(&spec.base, axis, case, end, threads));
            for (end, scenario) in [lo, hi].into_iter().zip(&ends) {
                let scenario = match scenario {
                    Ok(s) => s.clone(),
                    Err(problem) => {
                        // Refused at both ends: the scenario cannot take the axis at all.
                        let both = ends.iter().all(Result::is_err);
                        return Err(BoundaryError::Flag {
                            flag: if both { "--axis" } else { "--range" },
                            value: match both {
                                true => axis.name.to_string(),
                                false => format!("{range} (at {})", value_text(axis.kind, end)),
                            },
                            problem: problem.to_string(),
                            accepted: match both {
                                true => format!(
                                    "an axis this scenario reads: {}",
                                    axes_read(&spec.base, threads)
                                ),
                                false => "a range over which every case is a valid scenario".into(),
                            },
                        });
                    }
                };
                per_run = per_run.max(scenario.attempts_per_run());
                at_ends.push(scenario);
            }
            check_case(axis, case, &at_ends, (lo, hi))?;
            settles.push((at_ends[0].overload.settle, at_ends[1].overload.settle));
            let runs = u128::from(spec.max_runs);
            if spec.band {
                let (knock_over, file, band_run) =
                    band_of(&spec.base, axis, case, &at_ends[0], (lo, hi), threads)?;
                requests = requests.saturating_add(band_run.saturating_mul(runs));
                work = work.saturating_add((ROW_OVERHEAD + band_run).saturating_mul(runs));
                bands.push((knock_over, file));
            }
            if first_ends.is_empty() {
                first_ends = at_ends;
            }
            requests = requests.saturating_add(per_run.saturating_mul(runs));
            work = work.saturating_add((ROW_OVERHEAD + per_run).saturating_mul(runs));
        }
        let names: Vec<String> = cases.iter().map(Case::name).collect();
        let verdict_rule = verdict_rule_of(&first_ends, &names, &settles);
        check_requests(requests, spec.max_requests, "boundary search")?;
        check_work(work, "boundary search", spec.yes)?;
        // Each end and case validated as a one-cell sweep too (its memory check among them).
        let done = AtomicU64::new(0);
        let pool = crate::sweep::thread_pool(Some(1))?;
        for (i, case) in cases.iter().enumerate() {
            let bases = std::iter::once(&spec.base).chain(bands.get(i).map(|(_, file)| file));
            for base in bases {
                let oracle = SweepOracle {
                    base,
                    axis,
                    fixed: &case.pairs,
                    pool: &pool,
                    threads,
                    max_requests: spec.max_requests,
                    progress: &|_| {},
                    done: &done,
                };
                // A key one end leaves unread (--balancer at one server) is read at the
                // other; one neither reads, no point of the search does.
                let mut unread = Vec::new();
                for end in [lo, hi] {
                    unread.push(oracle.plan(end, 1)?.unread().to_vec());
                }
                if let Some(u) = crate::config::Unread::in_every(unread).first() {
                    return Err(u.refusal("no point of this search reads it").into());
                }
            }
        }
        Ok(BoundaryPlan {
            base: spec.base,
            axis,
            cases,
            settings: Settings {
                range: (lo, hi),
                level: spec.level,
                batch: spec.seeds,
                max_seeds: spec.seeds * BATCHES_PER_POINT,
                tolerance,
                max_runs: spec.max_runs,
            },
            curve: spec.curve,
            threads,
            max_requests: spec.max_requests,
            verdict_rule,
            work,
            settles,
            bands: spec.band.then_some(bands),
        })
    }
}

/// The collapse rule in words ([`crate::series::verdict_rule`]), from the validated
/// scenarios at the two ends of the range of the first case, and every case's settle at both
/// ends: the settle differs along the range when the axis changes it (retries, timeout, cap,
/// a trigger's end), and between cases when their lists do; the rule then names each.
fn verdict_rule_of(
    ends: &[Scenario],
    names: &[String],
    settles: &[(SimDuration, SimDuration)],
) -> String {
    let rule = ends[0].overload.verdict_rule();
    let at_ends = |(lo, hi): (SimDuration, SimDuration)| match lo == hi {
        true => lo.to_string(),
        false => format!("{lo} at the low end of the range and {hi} at the high end"),
    };
    match settles {
        [] => rule,
        [first, rest @ ..] if rest.iter().all(|s| s == first) => match first.0 == first.1 {
            true => rule,
            false => format!("{rule}; the settle is {}", at_ends(*first)),
        },
        _ => {
            let each: Vec<String> = names
                .iter()
                .zip(settles)
                .map(|(name, &s)| format!("{} for {name}", at_ends(s)))
                .collect();
            let rule = rule.replacen(
                &format!("for at least {} after", settles[0].0),
                "for at least the case's settle after",
                1,
            );
            format!("{rule}; the settle differs by case: {}", each.join("; "))
        }
    }
}

/// A case's knock-over, its scenario started collapsed, and the attempts a run of it sends at
/// most (at the costlier end of the range), each end validated.
fn band_of(
    base: &ScenarioFile,
    axis: &'static Parameter,
    case: &Case,
    at_lo: &Scenario,
    (lo, hi): (u64, u64),
    threads: usize,
) -> Result<(KnockOver, ScenarioFile, u128), BoundaryError> {
    let refuse = |problem: String| {
        BoundaryError::Flag {
        flag: "--band",
        value: format!("for {}", case.name()),
        problem,
        accepted: "a capacity server with --workers and a --timeout: one a herd's retries can hold past its capacity".into(),
    }
    };
    let knock_over = KnockOver::of(at_lo).map_err(refuse)?;
    let file = knock_over.scenario(base)?;
    let mut per_run: u128 = 0;
    for end in [lo, hi] {
        let scenario = case_scenario(&file, axis, case, end, threads).map_err(|e| {
            refuse(format!(
                "started collapsed ({}) at {}: {e}",
                knock_over.degrade(),
                value_text(axis.kind, end)
            ))
        })?;
        per_run = per_run.max(scenario.attempts_per_run());
    }
    Ok((knock_over, file, per_run))
}

/// The tolerance in integer units: `P%` of the range, or a value in the axis's unit.
fn parse_tolerance(axis: &'static Parameter, text: &str, range: u64) -> Result<u64, BoundaryError> {
    let error = |problem: String| BoundaryError::Flag {
        flag: "--tolerance",
        value: text.to_string(),
        problem,
        accepted: format!(
            "a percentage of the range (e.g. 2%) or a value in the unit of --axis {} (e.g. {})",
            axis.name,
            match axis.kind {
                Kind::Duration => "50ms",
                _ => "1",
            }
        ),
    };
    if let Some(percent) = text.trim().strip_suffix('%') {
        let share: f64 = percent
            .trim()
            .parse()
            .map_err(|_| error("not a number before %".into()))?;
        if !(share > 0.0 && share < 100.0) {
            return Err(error("outside (0%, 100%)".into()));
        }
        return Ok((range as f64 * share / 100.0).round() as u64);
    }
    one_value(axis, text).map_err(|e| {
        error(match e {
            SweepError::Values { message, .. } => message,
            other => other.to_string(),
        })
    })
}

/// The cases: every combination of the listed parameters' values (table order, the first
/// slowest), strategy always among them (the base's list when not given).
fn cases(
    base: &ScenarioFile,
    axis: &'static Parameter,
    lists: &[(String, String)],
) -> Result<Vec<Case>, BoundaryError> {
    let mut given: Vec<(&'static Parameter, Vec<Value>)> = Vec::new();
    for (name, text) in lists {
        let p = parameter(name).ok_or_else(|| SweepError::UnknownParameter {
            name: name.clone(),
            accepted: crate::sweep::parameter::parameter_names(),
        })?;
        if std::ptr::eq(p, axis) {
            return Err(BoundaryError::Flag {
                flag: "--axis",
                value: axis.name.to_string(),
                problem: format!("--{} is given a list as well", axis.name),
                accepted: "the axis's values from --range alone".into(),
            });
        }
        let parsed = parse_axis(p, text)?;
        given.push((p, (0..parsed.len()).map(|i| parsed.value(i)).collect()));
    }
    if !given.iter().any(|(p, _)| p.name == "strategy") {
        let preset = base.preset.is_some() || given.iter().any(|(p, _)| p.name == "preset");
        let values = strategies_unnamed(base, preset)?;
        given.push((&PARAMETERS[0], values));
    }
    given.sort_by_key(|(p, _)| PARAMETERS.iter().position(|q| std::ptr::eq(*p, q)));
    let mut cases: Vec<Vec<(&'static Parameter, Value)>> = vec![Vec::new()];
    for (p, values) in &given {
        cases = cases
            .into_iter()
            .flat_map(|case| {
                values.iter().map(move |v| {
                    let mut next = case.clone();
                    next.push((*p, v.clone()));
                    next
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for case in cases {
        let mut file = base.clone();
        for (p, v) in &case {
            (p.set)(&mut file, v);
        }
        let strategy = file.clone().validate()?.strategies[0].name().to_string();
        out.push(Case {
            strategy,
            with: case
                .iter()
                .filter(|(p, _)| p.name != "strategy")
                .map(|(p, v)| (p.name.to_string(), v.to_string()))
                .collect(),
            pairs: case
                .iter()
                .filter(|(_, v)| *v != Value::Name(FROM_PRESET))
                .map(|(p, v)| (p.name.to_string(), v.to_string()))
                .collect(),
        });
    }
    Ok(out)
}

/// The validated scenario of `case` with the axis at `value` (integer units).
fn case_scenario(
    base: &ScenarioFile,
    axis: &'static Parameter,
    case: &Case,
    value: u64,
    threads: usize,
) -> Result<Scenario, ConfigError> {
    let mut file = base.clone();
    for (name, text) in &case.pairs {
        if let Some(p) = parameter(name) {
            if let Ok(parsed) = parse_axis(p, text) {
                (p.set)(&mut file, &parsed.value(0));
            }
        }
    }
    let text = value_text(axis.kind, value);
    if let Ok(parsed) = parse_axis(axis, &text) {
        (axis.set)(&mut file, &parsed.value(0));
    }
    file.validate_without_budget_on(Some(threads))
}

/// The numeric parameters that apply to the scenario of `base` (their value is not empty).
fn axes_read(base: &ScenarioFile, threads: usize) -> String {
    match base.clone().validate_without_budget_on(Some(threads)) {
        Ok(scenario) => PARAMETERS
            .iter()
            .filter(|p| is_numeric(p.kind) && !(p.get)(&scenario).is_empty())
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", "),
        Err(_) => numeric_axes(),
    }
}

/// Refuses a case no run of which can give a verdict, or that the axis does not change.
fn check_case(
    axis: &'static Parameter,
    case: &Case,
    at_ends: &[Scenario],
    (lo, hi): (u64, u64),
) -> Result<(), BoundaryError> {
    let scenario = &at_ends[0];
    if !scenario.run_spec(scenario.strategies[0]).uses_call_loop() {
        return Err(BoundaryError::Flag {
            flag: "--config",
            value: "(its scenario)".into(),
            problem: format!(
                "a herd against a {} server, which no retry storm can keep down",
                scenario.server.name()
            ),
            accepted: "a call-loop scenario (a capacity or flaky server, or Poisson arrivals) with a trigger: a spike, outage or degradation".into(),
        });
    }
    if at_ends.iter().any(|s| s.overload.trigger_end().is_none()) {
        return Err(BoundaryError::Flag {
            flag: "--axis",
            value: axis.name.to_string(),
            problem: "the scenario has no trigger (spike, outage or degradation) after which a run could stay collapsed".into(),
            accepted: "a scenario with --spike, --outage or --degrade, or --axis outage (which adds one)".into(),
        });
    }
    let (at_lo, at_hi) = ((axis.get)(&at_ends[0]), (axis.get)(&at_ends[1]));
    if at_lo == at_hi {
        let reads: Vec<&str> = PARAMETERS
            .iter()
            .filter(|p| is_numeric(p.kind) && !(p.get)(scenario).is_empty())
            .map(|p| p.name)
            .collect();
        return Err(BoundaryError::Flag {
            flag: "--axis",
            value: axis.name.to_string(),
            problem: match at_lo.is_empty() {
                // A trigger axis without its trigger (spike-rate without a spike), say.
                true => format!(
                    "the scenario of {} has nothing it sets ({})",
                    case.strategy, axis.help
                ),
                false => format!(
                    "it leaves the scenario of {} unchanged (the same at {} and {})",
                    case.strategy,
                    value_text(axis.kind, lo),
                    value_text(axis.kind, hi)
                ),
            },
            accepted: format!("an axis this scenario reads: {}", reads.join(", ")),
        });
    }
    Ok(())
}
