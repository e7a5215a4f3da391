//! Whose state a budget or a breaker keeps ([`Scope`]): each client process its own (`client`,
//! the default), or one shared by every process of the run (`global`), written as a key of the
//! control's text (`--budget token-bucket:scope=global`, `--breaker retries:scope=global`).
//! [`RunControls`] holds a run's states: one [`ProcessControl`] a process for the controls
//! kept per process (the throttle always is), and one shared for the global ones, and tells
//! both of every call and attempt in the order that keeps each decision as one process's
//! would be: the part holding the breaker judges first, so a breaker that rejects leaves the
//! budget untouched, and only the part holding the budget charges it.
//!
//! A sticky failure (a user whose every attempt fails) shows the difference: with a global
//! budget the failing users spend the tokens every user shares; with one a process, only
//! their own.

use super::{Breaker, Budget, CallEnd, Controls, Gate, Outcome, ProcessControl, SpecError};
use crate::time::SimTime;

/// Whose state a budget or breaker keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One state per client process (as every control was before scopes).
    #[default]
    Client,
    /// One state shared by every process of the run.
    Global,
}

impl Scope {
    /// The name a text takes after `scope=`.
    pub const fn name(self) -> &'static str {
        match self {
            Scope::Client => "client",
            Scope::Global => "global",
        }
    }

    /// Splits a `scope=client|global` item off a control's text (`grpc:scope=global,max_tokens=20`
    /// is `grpc:max_tokens=20` and global); the text without it goes to the control's parser.
    pub fn split(text: &str) -> Result<(String, Scope), SpecError> {
        let trimmed = text.trim();
        let Some((name, params)) = trimmed.split_once(':') else {
            return Ok((trimmed.to_string(), Scope::Client));
        };
        let mut scope = None;
        let mut rest = Vec::new();
        for item in params.split(',') {
            match item.trim().split_once('=') {
                Some((key, value)) if key.trim() == "scope" => {
                    let found = match value.trim() {
                        "client" => Scope::Client,
                        "global" => Scope::Global,
                        other => {
                            return Err(SpecError {
                                value: trimmed.to_string(),
                                accepted: format!(
                                    "scope={other} is out of range; accepted: scope=client (one state a client process) or scope=global (one shared by all)"
                                ),
                            })
                        }
                    };
                    if scope.replace(found).is_some() {
                        return Err(SpecError {
                            value: trimmed.to_string(),
                            accepted: "scope is given twice; accepted: one scope=client|global"
                                .to_string(),
                        });
                    }
                }
                _ => rest.push(item),
            }
        }
        let text = match rest.is_empty() {
            true => name.to_string(),
            false => format!("{name}:{}", rest.join(",")),
        };
        Ok((text, scope.unwrap_or_default()))
    }

    /// `,scope=global` (or `:scope=global` after a bare name) to append to a control's text
    /// when global; nothing for the default.
    pub fn suffix(self, text: &str) -> String {
        match self {
            Scope::Client => String::new(),
            Scope::Global if text.contains(':') => ",scope=global".to_string(),
            Scope::Global => ":scope=global".to_string(),
        }
    }
}

/// A run's control states: per process and shared (see the module's doc).
#[derive(Debug)]
#[cfg_attr(not(feature = "tower"), derive(Clone))]
pub struct RunControls {
    /// The controls each process keeps for itself (the throttle, and the budget and breaker
    /// of client scope).
    local: Controls,
    /// The controls shared by all processes (budget and breaker of global scope).
    global: Controls,
    /// One state a process; empty when `local` controls nothing.
    processes: Vec<ProcessControl>,
    /// The shared state; `None` when `global` controls nothing.
    shared: Option<ProcessControl>,
    /// The shared part holds the breaker, so it judges first.
    breaker_global: bool,
    /// Anything is controlled: kept, as loops ask at every attempt.
    active: bool,
}

impl RunControls {
    /// The states of `controls` at the start of a run of `clients` processes.
    pub fn new(controls: &Controls, clients: u32) -> RunControls {
        let mut local = *controls;
        let mut global = Controls::default();
        if controls.budget_scope == Scope::Global {
            global.budget = controls.budget;
            local.budget = Budget::None;
        }
        if controls.breaker_scope == Scope::Global {
            global.breaker = controls.breaker;
            local.breaker = Breaker::None;
        }
        local.budget_scope = Scope::Client;
        local.breaker_scope = Scope::Client;
        let processes = match local.is_none() {
            true => Vec::new(),
            false => local.start_many(clients as usize),
        };
        let shared = (!global.is_none()).then(|| global.start());
        RunControls {
            active: !processes.is_empty() || shared.is_some(),
            processes,
            shared,
            breaker_global: global.breaker != Breaker::None,
            local,
            global,
        }
    }

    /// True when anything is controlled.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// A call of `process` wants to start ([`ProcessControl::call_started`]).
    #[inline]
    pub fn call_started(&mut self, process: u32, now: SimTime, trial: &mut bool) -> bool {
        let (local, global) = (&self.local, &self.global);
        let own = self.processes.get_mut(process as usize);
        let shared = self.shared.as_mut();
        if self.breaker_global {
            shared.is_none_or(|c| c.call_started(global, now, trial))
                && own.is_none_or(|c| c.call_started(local, now, trial))
        } else {
            own.is_none_or(|c| c.call_started(local, now, trial))
                && shared.is_none_or(|c| c.call_started(global, now, trial))
        }
    }

    /// An attempt of `process` wants to go ([`ProcessControl::send`]); the throttle is the
    /// process's own.
    #[inline]
    pub fn send(&mut self, process: u32, now: SimTime, draw: impl FnOnce() -> f64) -> Gate {
        let gate = match self.processes.get_mut(process as usize) {
            Some(c) => c.send(&self.local, now, draw),
            None => Gate::Go,
        };
        if gate == Gate::Go {
            if let Some(c) = &mut self.shared {
                c.sent();
            }
        }
        gate
    }

    /// An attempt of a call of `process` holding `held` ended ([`ProcessControl::attempt_ended`]).
    #[inline]
    pub fn attempt_ended(&mut self, process: u32, now: SimTime, outcome: Outcome, held: &mut u64) {
        if let Some(c) = self.processes.get_mut(process as usize) {
            c.attempt_ended(&self.local, now, outcome, held);
        }
        if let Some(c) = &mut self.shared {
            c.attempt_ended(&self.global, now, outcome, held);
        }
    }

    /// Whether the retry a call of `process` wants may go ([`ProcessControl::allow_retry`]):
    /// the breaker's part first, so only an allowed retry is charged.
    #[inline]
    pub fn allow_retry(
        &mut self,
        process: u32,
        now: SimTime,
        outcome: Outcome,
        held: &mut u64,
    ) -> bool {
        let (local, global) = (&self.local, &self.global);
        let own = self.processes.get_mut(process as usize);
        let shared = self.shared.as_mut();
        if self.breaker_global {
            shared.is_none_or(|c| c.allow_retry(global, now, outcome, held))
                && own.is_none_or(|c| c.allow_retry(local, now, outcome, held))
        } else {
            own.is_none_or(|c| c.allow_retry(local, now, outcome, held))
                && shared.is_none_or(|c| c.allow_retry(global, now, outcome, held))
        }
    }

    /// A call of `process` holding `held` ended ([`ProcessControl::call_ended`]).
    #[inline]
    pub fn call_ended(
        &mut self,
        process: u32,
        now: SimTime,
        end: CallEnd,
        held: &mut u64,
        trial: bool,
    ) {
        if let Some(c) = self.processes.get_mut(process as usize) {
            c.call_ended(&self.local, now, end, held, trial);
        }
        if let Some(c) = &mut self.shared {
            c.call_ended(&self.global, now, end, held, trial);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_is_split_off_the_text_wherever_it_stands() {
        let split = |t: &str| Scope::split(t).unwrap();
        assert_eq!(split("grpc"), ("grpc".into(), Scope::Client));
        assert_eq!(split("grpc:scope=global"), ("grpc".into(), Scope::Global));
        assert_eq!(
            split("grpc:scope=global,max_tokens=20"),
            ("grpc:max_tokens=20".into(), Scope::Global)
        );
        assert_eq!(
            split("retries:ratio=0.2,scope=client"),
            ("retries:ratio=0.2".into(), Scope::Client)
        );
        let e = Scope::split("grpc:scope=world").unwrap_err();
        assert!(e.accepted.contains("scope=world") && e.accepted.contains("global"));
        assert!(Scope::split("grpc:scope=global,scope=client").is_err());
        assert_eq!(Scope::Global.suffix("grpc"), ":scope=global");
        assert_eq!(Scope::Global.suffix("grpc:max_tokens=20"), ",scope=global");
        assert_eq!(Scope::Client.suffix("grpc"), "");
    }
}
