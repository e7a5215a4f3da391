//! What a run's `--trace` costs before it starts: the bytes it writes at most (refused past
//! [`TRACE_BYTES_LIMIT`] unless `--yes`) and the memory its writer holds, added to the
//! run's estimate. Saturating arithmetic ([`Sat`]) as every estimate.

use super::memory::human_bytes;
use super::saturating::Sat;
use super::{ConfigError, Scenario};
use crate::engine::{Path, Work};
use crate::trace::{
    part_clients, BUFFER_BYTES, HANDOFF_BYTES, LINE_BYTES_MAX, PARTS_PER_THREAD, PART_BYTES,
};

/// A trace estimated to write more than this (10 GiB) needs `--yes`.
pub const TRACE_BYTES_LIMIT: u64 = 10 << 30;

/// Bytes of a herd client's position the writer keeps (item number and next send).
const CLIENT_STATE_BYTES: u128 = 12;

impl Scenario {
    /// Bytes a trace of this run keeping `fraction` of its clients writes at most: every
    /// attempt replicate 0 of each strategy can make, every layer's when layered
    /// ([`Scenario::trace_lines_per_run`]), a line of at most [`LINE_BYTES_MAX`] each, and
    /// the CSV header.
    pub fn trace_bytes(&self, fraction: f64) -> u64 {
        let attempts = Sat(self.trace_lines_per_run()) * Sat::from(self.strategies.len());
        (Sat::ceil(attempts.as_f64() * fraction) * u128::from(LINE_BYTES_MAX) + 128).to_u64()
    }

    /// Bytes the trace writer holds: its buffer and line, on the herd paths with several
    /// items a client or the `occ` server each client's position, and on the independent
    /// paths the parts formatted on the worker threads ([`PARTS_PER_THREAD`] a thread of
    /// [`PART_BYTES`], with their clients' positions), on the paths of one thread (the call
    /// loop, the event queue) the two batches of attempts handed to the thread that formats
    /// them ([`HANDOFF_BYTES`]); with retry layers, the outer layers' lines held while an
    /// innermost attempt's is told first (one a layer).
    pub fn trace_memory(&self) -> u64 {
        let spec = self.run_spec(self.strategies[0]);
        let per_client = !spec.uses_call_loop()
            && (self.work != Work::Items(1) || spec.server.reads_before_writing());
        let clients = if per_client {
            Sat::from(self.clients) * CLIENT_STATE_BYTES
        } else {
            Sat::ZERO
        };
        let split = spec.clients_independent() && self.path != Path::EventQueue;
        let parts = match (split, part_clients(spec.attempts_per_client())) {
            (true, Some(clients)) => {
                let part = Sat::from(PART_BYTES as u64)
                    + Sat::from(clients) * CLIENT_STATE_BYTES
                    + u128::from(LINE_BYTES_MAX);
                Sat::from(self.threads.max(1)) * (PARTS_PER_THREAD as u128) * part
            }
            _ => Sat::ZERO,
        };
        let handoff = if spec.uses_call_loop() || !split {
            Sat::from(HANDOFF_BYTES as u64)
        } else {
            Sat::ZERO
        };
        let deferred = Sat::from(self.overload.layers.outer.len())
            * (std::mem::size_of::<crate::trace::Attempt>() as u128);
        (clients
            + parts
            + handoff
            + deferred
            + Sat::from(BUFFER_BYTES as u64)
            + u128::from(LINE_BYTES_MAX))
        .to_u64()
    }

    /// Refuses a trace past the memory budget (with the run's own estimate, `report` as
    /// [`Scenario::check_memory_with`]) or past [`TRACE_BYTES_LIMIT`] without `yes`; with
    /// `yes`, the note to print before writing a trace that large.
    pub fn check_trace(
        &self,
        fraction: f64,
        report: bool,
        yes: bool,
    ) -> Result<Option<String>, ConfigError> {
        let memory = (Sat::from(self.memory_terms(report).total())
            + Sat::from(self.trace_memory()))
        .to_u64();
        if memory > self.memory_limit {
            return Err(ConfigError::TooBig {
                estimate: format!(
                    "{} (with {} of it the trace writer's buffer and client positions)",
                    human_bytes(memory),
                    human_bytes(self.trace_memory())
                ),
                budget: human_bytes(self.memory_limit),
                advice: "fewer clients, or raise --memory-limit".into(),
            });
        }
        let bytes = self.trace_bytes(fraction);
        if bytes <= TRACE_BYTES_LIMIT {
            return Ok(None);
        }
        let size = format!(
            "{} (up to {} B a line for each of {} attempts)",
            human_bytes(bytes),
            LINE_BYTES_MAX,
            (Sat(self.trace_lines_per_run()) * Sat::from(self.strategies.len())).0
        );
        if !yes {
            return Err(ConfigError::Invalid {
                field: "--trace",
                value: format!("a trace estimated at {size}"),
                accepted: format!(
                    "accepted: up to {} without --yes; keep a fraction of the clients with \
                     --trace-sample, trace fewer clients, or add --yes",
                    human_bytes(TRACE_BYTES_LIMIT)
                ),
            });
        }
        Ok(Some(format!(
            "the trace may write {size}; writing it (--yes)"
        )))
    }
}
