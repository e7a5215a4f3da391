//! The one validation ([`ScenarioFile::validate`]): defaults applied, every field checked
//! once, each mistake one [`ConfigError`] naming the field, the value and what is accepted,
//! and the immutable [`Scenario`] built. Separate from reading the file: it never reads one.

use super::*;

/// The retry controls as written, validated: any server but `occ` (whose clients make one
/// write each, outside the call loop).
fn controls(file: &ScenarioFile, server: &ServerModel) -> Result<Controls, ConfigError> {
    let named = |field: &'static str| move |e: SpecError| invalid(field, e.value, e.accepted);
    // `scope=client|global` is split off before the control's own keys are read.
    let scoped = |field: &'static str, text: Option<&str>| -> Result<_, ConfigError> {
        let Some(text) = text else {
            return Ok((None, Scope::Client));
        };
        let (rest, scope) = Scope::split(text).map_err(named(field))?;
        if scope == Scope::Global && rest == "none" {
            return Err(invalid(
                field,
                text,
                "scope=global given without a control; accepted: scope with a named control",
            ));
        }
        Ok((Some(rest), scope))
    };
    let (budget, budget_scope) = scoped("--budget", file.budget.as_deref())?;
    let (breaker, breaker_scope) = scoped("--breaker", file.breaker.as_deref())?;
    let controls = Controls {
        budget: match budget.as_deref() {
            Some(t) => Budget::parse(t).map_err(named("--budget"))?,
            None => Budget::None,
        },
        breaker: match breaker.as_deref() {
            Some(t) => Breaker::parse(t).map_err(named("--breaker"))?,
            None => Breaker::None,
        },
        budget_scope,
        breaker_scope,
        throttle: match file.throttle.as_deref() {
            Some(t) => Throttle::parse(t).map_err(named("--throttle"))?,
            None => Throttle::None,
        },
    };
    if server.is_occ() {
        for (field, set, name) in [
            (
                "--budget",
                controls.budget != Budget::None,
                controls.budget.name(),
            ),
            (
                "--breaker",
                controls.breaker != Breaker::None,
                controls.breaker.name(),
            ),
            (
                "--throttle",
                controls.throttle != Throttle::None,
                controls.throttle.name(),
            ),
        ] {
            if set {
                return Err(invalid(field, name, "accepted with any server but occ"));
            }
        }
    }
    Ok(controls)
}

impl ScenarioFile {
    /// Lays the preset, if any, under the keys given, applies defaults and checks every field
    /// once, for a run on [`default_threads`].
    pub fn validate(self) -> Result<Scenario, ConfigError> {
        self.validate_on(None)
    }

    /// [`ScenarioFile::validate`] for a run on `threads` worker threads (`--threads`;
    /// [`default_threads`] when `None`): the memory estimate counts a run in flight on each.
    pub fn validate_on(self, threads: Option<usize>) -> Result<Scenario, ConfigError> {
        let given = self.clone();
        let scenario = self.validate_without_budget_on(threads)?;
        given.refuse_unread(&scenario)?;
        scenario.check_memory()?;
        Ok(scenario)
    }

    /// [`ScenarioFile::validate_on`] but for the keys the run never reads (see
    /// [`ScenarioFile::unread`]) and the memory budget, which the caller checks once
    /// it knows the path and the outputs ([`Scenario::check_memory_with`]), so that a refusal
    /// names the whole estimate whatever `--memory-limit` is.
    pub fn validate_without_budget_on(
        self,
        threads: Option<usize>,
    ) -> Result<Scenario, ConfigError> {
        preset::expand(self)?.validate_expanded(threads)
    }

    /// [`ScenarioFile::validate_without_budget_on`] once the preset is laid in.
    fn validate_expanded(self, threads: Option<usize>) -> Result<Scenario, ConfigError> {
        // The overload keys are checked against the validated server, once it exists.
        let whole = self.clone();
        let clients = self.clients.unwrap_or(DEFAULT_CLIENTS);
        if clients == 0 || clients > u64::from(u32::MAX) {
            return Err(invalid(
                "--clients",
                clients,
                format!("accepted: a whole number from 1 to {}", u32::MAX),
            ));
        }
        let strategies = self
            .strategy
            .map(|list| list.0)
            .unwrap_or_else(|| vec![Strategy::FullJitter]);
        if strategies.is_empty() {
            return Err(invalid(
                "--strategy",
                "(empty)",
                format!("accepted: {}, all", Strategy::accepted_names()),
            ));
        }
        // 0 is valid: no retries, the baseline every comparison needs.
        let retries = self.retries.unwrap_or(DEFAULT_RETRIES);
        let base = self.base.unwrap_or(SimDuration::from_secs(1));
        if base.is_zero() {
            return Err(invalid(
                "--base",
                base,
                "accepted: a positive duration such as 100ms or 1s",
            ));
        }
        let cap = self.cap.unwrap_or(SimDuration::from_secs(30));
        if cap < base {
            return Err(invalid(
                "--cap",
                cap,
                format!("accepted: a duration at least --base ({base})"),
            ));
        }
        let multiplier = self.multiplier.unwrap_or(Backoff::DEFAULT_MULTIPLIER);
        if !multiplier.is_finite() || multiplier < 1.0 {
            return Err(invalid(
                "--multiplier",
                multiplier,
                "accepted: a finite number of at least 1, such as 2 or 1.5",
            ));
        }
        let retry_chance = match self.retry_probability {
            None => RetryChance::ALWAYS,
            Some(p) if (0.0..=1.0).contains(&p) => RetryChance::new(p),
            Some(p) => {
                return Err(invalid(
                    "--retry-probability",
                    p,
                    "accepted: a probability from 0 to 1, such as 0.5",
                ))
            }
        };
        let jitter_order = choose(
            "--jitter-order",
            self.jitter_order.clone(),
            &JitterOrder::ALL,
            JitterOrder::name,
        )?;
        let bin = self.bin.unwrap_or(SimDuration::from_millis(100));
        if bin.is_zero() {
            return Err(invalid(
                "--bin",
                bin,
                "accepted: a positive duration such as 100ms",
            ));
        }
        let clients = clients as u32;
        let server = self.server.unwrap_or_default().validate(clients)?;
        let mut overload = whole.overload(&server)?;
        let settle = whole
            .settle
            .unwrap_or_else(|| overload.default_settle(retries, cap));
        overload.settle_load(settle);
        // `all` against a server that sends headers adds the header-reading strategies
        // (against one that sends none they would only repeat exponential and full jitter).
        let strategies = if strategies == Strategy::ALL && server.build().sends_headers() {
            Strategy::every().collect()
        } else {
            strategies
        };
        if server.is_occ() {
            let one_write = "accepted: not with --server occ, where each client stops after one \
                             successful write";
            if let Some(items) = self.items {
                return Err(invalid("--items", items, one_write));
            }
            if let Some(pool) = self.pool {
                return Err(invalid("--pool", pool, one_write));
            }
            if let Some(latency) = self.latency {
                return Err(invalid(
                    "--latency",
                    latency.0,
                    "accepted: not with --server occ, whose four messages an attempt each take \
                     --network-delay",
                ));
            }
        }
        let work = match (self.items, self.pool) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "--pool",
                    "given with --items",
                    "accepted: either --items (per client) or --pool (shared), not both",
                ))
            }
            (_, Some(pool)) if pool < u64::from(clients) => {
                return Err(invalid(
                    "--pool",
                    pool,
                    format!("accepted: at least one item per client ({clients})"),
                ))
            }
            (_, Some(pool)) => Work::Pool(pool),
            (Some(0), None) => {
                return Err(invalid(
                    "--items",
                    0,
                    "accepted: a whole number of at least 1",
                ))
            }
            (items, None) => Work::Items(items.unwrap_or(1)),
        };
        let controls = controls(&whole, &server)?;
        let browser = whole.browser(&server)?;
        let replicates = self.replicates.unwrap_or(1);
        if replicates == 0 {
            return Err(invalid(
                "--replicates",
                0,
                "accepted: a whole number of at least 1",
            ));
        }
        let mut published = Vec::new();
        for (name, row) in self.published.unwrap_or_default() {
            let strategy: Strategy = name
                .parse()
                .map_err(|e: UnknownStrategy| invalid("published", &name, e.to_string()))?;
            published.push((strategy, row));
        }
        // The preset's name, for a sweep's `preset` column (its keys are already laid in).
        let preset = match whole.preset.as_deref() {
            Some(name) => Some(Preset::named(name)?.name),
            None => None,
        };
        let scenario = Scenario {
            clients,
            strategies,
            retries,
            backoff: Backoff {
                base,
                cap,
                multiplier,
                jitter_order,
            },
            retry_chance,
            bin,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            server,
            memory_limit: self.memory_limit.unwrap_or(DEFAULT_MEMORY_LIMIT),
            path: Path::Auto,
            work,
            latency: self.latency.map_or(Latency::default(), |l| l.0),
            network_delay: self.network_delay.unwrap_or(STUDY_NETWORK),
            replicates,
            published,
            overload,
            controls,
            browser,
            preset,
            threads: threads.unwrap_or_else(default_threads).max(1),
        };
        scenario.check_closed_loop()?;
        Ok(scenario)
    }
}
