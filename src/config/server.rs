//! The server as written (`[server]`, `--server` and its flags) and as validated: which model,
//! its parameters, and which keys belong to which model. No I/O, no clap.

use serde::{Deserialize, Serialize};

use super::workload::{Bound, DistText};
use super::{choose, invalid, positive_count, positive_duration, ConfigError};
use crate::server::{
    Capacity, CapacityRule, Down, FixedWindow, FixedWindowRule, Flaky, HeaderStyle, Headers,
    Keying, Limited, Limiter, Occ, QueueOrder, Refill, Server, SlidingWindow, SlidingWindowRule,
    Store, TokenBucket, TokenBucketRule, WallClock, WindowStart,
};
use crate::time::{SimDuration, SimTime, NANOS_PER_SEC};

/// The names `--server` (and the `model` key, and a sweep's `server` parameter) accepts, in
/// the order help and errors list them: the one list, so that a model added to
/// [`ServerModel`] is offered everywhere once it is added here (a test checks every name
/// validates to a model of that name).
pub const SERVER_MODELS: &[&str] = &[
    "down",
    "fixed-window",
    "sliding-window",
    "token-bucket",
    "occ",
    "capacity",
    "flaky",
];

/// The server model as written: `[server]` in a file, `--server` and friends on the command line.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    /// `down`, `fixed-window`, `sliding-window`, `token-bucket`, `occ`, `capacity` or `flaky`.
    pub model: Option<String>,
    /// For `down`: from this time on the server serves.
    pub recover_at: Option<SimDuration>,
    /// Windows: requests admitted per window (`--limit`).
    pub limit: Option<u32>,
    /// Windows: the window length (`--window`).
    pub window: Option<SimDuration>,
    /// Fixed window: `first-hit` or `aligned` (`--window-start`).
    pub window_start: Option<String>,
    /// Fixed window: `whole-second`, `precise` or `at-stamp` (`--store`).
    pub store: Option<String>,
    /// Token bucket: tokens held (`--capacity`).
    pub capacity: Option<u32>,
    /// Token bucket: tokens returned per interval (`--refill`).
    pub refill: Option<u32>,
    /// Token bucket: the refill interval (`--refill-interval`).
    pub refill_interval: Option<SimDuration>,
    /// Token bucket: `continuous` or `ticks` (`--refill-mode`).
    pub refill_mode: Option<String>,
    /// Limiters: `whole-seconds`, `exact` or `round-up` (`--headers`).
    pub headers: Option<String>,
    /// Limiters: whether clients can read the headers, or the fraction that can
    /// (`--headers-visible`).
    pub headers_visible: Option<super::HeadersVisible>,
    /// Limiters: clients sharing one address and so one key (`--clients-per-address`).
    pub clients_per_address: Option<u32>,
    /// Limiters: where in its second the run starts on the wall clock (`--epoch-phase`).
    pub epoch_phase: Option<SimDuration>,
    /// Capacity: requests in service at once, or `unlimited` (`--workers`).
    pub workers: Option<Bound>,
    /// Capacity: service time distribution (`--service-time`).
    pub service_time: Option<DistText>,
    /// Capacity: added per request in service when one starts (`--slowdown`).
    pub slowdown: Option<SimDuration>,
    /// Capacity: requests waiting at most, or `unlimited` (`--queue`).
    pub queue: Option<Bound>,
    /// Capacity: Retry-After sent with a shed (`--shed-retry-after`).
    pub shed_retry_after: Option<SimDuration>,
    /// Capacity: `fifo` or `lifo` (`--queue-order`).
    pub queue_order: Option<String>,
    /// Capacity: drop waiting requests whose client gave up (`--server-cancels`).
    pub server_cancels: Option<bool>,
    /// Flaky: probability that an attempt fails, 0 to 1 (`--failure-rate`).
    pub failure_rate: Option<f64>,
}

impl ServerFile {
    pub(crate) fn overridden_by(self, over: ServerFile) -> ServerFile {
        ServerFile {
            model: over.model.or(self.model),
            recover_at: over.recover_at.or(self.recover_at),
            limit: over.limit.or(self.limit),
            window: over.window.or(self.window),
            window_start: over.window_start.or(self.window_start),
            store: over.store.or(self.store),
            capacity: over.capacity.or(self.capacity),
            refill: over.refill.or(self.refill),
            refill_interval: over.refill_interval.or(self.refill_interval),
            refill_mode: over.refill_mode.or(self.refill_mode),
            headers: over.headers.or(self.headers),
            headers_visible: over.headers_visible.or(self.headers_visible),
            clients_per_address: over.clients_per_address.or(self.clients_per_address),
            epoch_phase: over.epoch_phase.or(self.epoch_phase),
            workers: over.workers.or(self.workers),
            service_time: over.service_time.or(self.service_time),
            slowdown: over.slowdown.or(self.slowdown),
            queue: over.queue.or(self.queue),
            shed_retry_after: over.shed_retry_after.or(self.shed_retry_after),
            queue_order: over.queue_order.or(self.queue_order),
            server_cancels: over.server_cancels.or(self.server_cancels),
            failure_rate: over.failure_rate.or(self.failure_rate),
        }
    }

    /// The validated model, given the scenario's number of clients.
    pub(crate) fn validate(self, clients: u32) -> Result<ServerModel, ConfigError> {
        let model = self.model.as_deref().unwrap_or("down");
        self.refuse_foreign_keys(model)?;
        let rule = match model {
            "down" => {
                return Ok(ServerModel::Down {
                    recover_at: self.recover_at,
                })
            }
            "occ" => return Ok(ServerModel::Occ),
            "flaky" => {
                let rate = self.failure_rate.unwrap_or(0.0);
                if !(0.0..=1.0).contains(&rate) {
                    return Err(invalid(
                        "--failure-rate",
                        rate,
                        "accepted: a probability from 0 to 1, such as 0.1",
                    ));
                }
                return Ok(ServerModel::Flaky(Flaky::new(rate)));
            }
            "capacity" => {
                let workers = self.workers.and_then(|b| b.0);
                if workers == Some(0) {
                    return Err(invalid(
                        "--workers",
                        0,
                        "accepted: a whole number of at least 1, or unlimited",
                    ));
                }
                return Ok(ServerModel::Capacity(CapacityRule {
                    workers,
                    service: self
                        .service_time
                        .map_or(CapacityRule::default().service, |d| d.0),
                    slowdown: self.slowdown.unwrap_or(SimDuration::ZERO),
                    queue: self.queue.and_then(|b| b.0),
                    shed_retry_after: self.shed_retry_after,
                    order: choose(
                        "--queue-order",
                        self.queue_order,
                        &QueueOrder::ALL,
                        QueueOrder::name,
                    )?,
                    cancels: self.server_cancels.unwrap_or(false),
                }));
            }
            "fixed-window" => LimiterRule::FixedWindow(FixedWindowRule {
                limit: positive_count("--limit", self.limit.unwrap_or(30))?,
                window: positive_duration("--window", self.window, 60)?,
                start: choose(
                    "--window-start",
                    self.window_start,
                    &WindowStart::ALL,
                    WindowStart::name,
                )?,
                store: choose("--store", self.store, &Store::ALL, Store::name)?,
            }),
            "sliding-window" => LimiterRule::SlidingWindow(SlidingWindowRule {
                limit: positive_count("--limit", self.limit.unwrap_or(30))?,
                window: positive_duration("--window", self.window, 60)?,
            }),
            "token-bucket" => LimiterRule::TokenBucket(TokenBucketRule {
                capacity: positive_count("--capacity", self.capacity.unwrap_or(30))?,
                refill: positive_count("--refill", self.refill.unwrap_or(1))?,
                interval: positive_duration("--refill-interval", self.refill_interval, 2)?,
                mode: choose(
                    "--refill-mode",
                    self.refill_mode,
                    &Refill::ALL,
                    Refill::name,
                )?,
            }),
            other => {
                return Err(invalid(
                    "--server",
                    other,
                    format!("accepted: {}", SERVER_MODELS.join(", ")),
                ))
            }
        };
        let clients_per_address = self.clients_per_address.unwrap_or(1);
        if clients_per_address == 0 {
            return Err(invalid(
                "--clients-per-address",
                0,
                format!("accepted: a whole number from 1 to the number of clients ({clients})"),
            ));
        }
        let epoch_phase = self.epoch_phase.unwrap_or(SimDuration::ZERO);
        if epoch_phase.as_nanos() >= NANOS_PER_SEC {
            return Err(invalid(
                "--epoch-phase",
                epoch_phase,
                "accepted: a duration below one second, e.g. 0s, 250ms, 0.9s",
            ));
        }
        Ok(ServerModel::Limited(LimitedModel {
            rule,
            clients_per_address: clients_per_address.min(clients),
            headers: choose(
                "--headers",
                self.headers,
                &HeaderStyle::ALL,
                HeaderStyle::name,
            )?,
            // A fraction strictly between 0 and 1 is the browser model's (per tab); the
            // server then sends readable headers.
            headers_visible: self.headers_visible.is_none_or(|v| v.0 > 0.0),
            epoch_phase,
        }))
    }
}

impl ServerFile {
    /// A limiter key given for the `down` server is an error (most likely `--server` was
    /// forgotten), and so is any key for `occ`, which has none. Between limiters, keys of another algorithm are ignored, so that a config
    /// written for one limiter can be rerun with `--server` naming another.
    fn refuse_foreign_keys(&self, model: &str) -> Result<(), ConfigError> {
        let window = ["--limit", "--window"];
        let fixed = ["--window-start", "--store"];
        let bucket = [
            "--capacity",
            "--refill",
            "--refill-interval",
            "--refill-mode",
        ];
        let limiter = [
            "--headers",
            "--headers-visible",
            "--clients-per-address",
            "--epoch-phase",
        ];
        let capacity = [
            "--workers",
            "--service-time",
            "--slowdown",
            "--queue",
            "--shed-retry-after",
            "--queue-order",
            "--server-cancels",
            // Whether (or by what fraction of the tabs) its shed's Retry-After can be read.
            "--headers-visible",
        ];
        let applies: Vec<&str> = match model {
            "down" => vec!["--recover-at"],
            "occ" => vec![],
            "capacity" => capacity.to_vec(),
            "flaky" => vec!["--failure-rate"],
            "fixed-window" | "sliding-window" | "token-bucket" => {
                [&window[..], &fixed, &bucket, &limiter].concat()
            }
            _ => return Ok(()),
        };
        let given = [
            ("--recover-at", self.recover_at.is_some()),
            ("--limit", self.limit.is_some()),
            ("--window", self.window.is_some()),
            ("--window-start", self.window_start.is_some()),
            ("--store", self.store.is_some()),
            ("--capacity", self.capacity.is_some()),
            ("--refill", self.refill.is_some()),
            ("--refill-interval", self.refill_interval.is_some()),
            ("--refill-mode", self.refill_mode.is_some()),
            ("--headers", self.headers.is_some()),
            ("--headers-visible", self.headers_visible.is_some()),
            ("--clients-per-address", self.clients_per_address.is_some()),
            ("--epoch-phase", self.epoch_phase.is_some()),
            ("--workers", self.workers.is_some()),
            ("--service-time", self.service_time.is_some()),
            ("--slowdown", self.slowdown.is_some()),
            ("--queue", self.queue.is_some()),
            ("--shed-retry-after", self.shed_retry_after.is_some()),
            ("--queue-order", self.queue_order.is_some()),
            ("--server-cancels", self.server_cancels.is_some()),
            ("--failure-rate", self.failure_rate.is_some()),
        ];
        match given
            .iter()
            .find(|(field, set)| *set && !applies.contains(field))
        {
            Some((field, _)) => {
                Err(invalid(
                    field,
                    format!("given for server {model}"),
                    if applies.is_empty() {
                        format!("it applies only to a server it configures; {model} takes no server keys")
                    } else {
                        format!(
                            "it applies only to a server it configures; accepted for {model}: {}",
                            applies.join(", ")
                        )
                    },
                ))
            }
            None => Ok(()),
        }
    }
}

/// The server model of a validated scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerModel {
    /// Refuses everything, until `recover_at` if given.
    Down {
        /// From this time on the server serves.
        recover_at: Option<SimDuration>,
    },
    /// Up, behind a rate limiter.
    Limited(LimitedModel),
    /// One row under optimistic concurrency control (Brooker 2015).
    Occ,
    /// Up, with finite capacity.
    Capacity(CapacityRule),
    /// Up, failing each attempt independently with a fixed probability.
    Flaky(Flaky),
}

/// The algorithm of a rate-limited server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimiterRule {
    /// Fixed windows.
    FixedWindow(FixedWindowRule),
    /// A sliding window.
    SlidingWindow(SlidingWindowRule),
    /// A token bucket.
    TokenBucket(TokenBucketRule),
}

/// A validated rate-limited server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitedModel {
    /// The algorithm.
    pub rule: LimiterRule,
    /// Clients sharing one key.
    pub clients_per_address: u32,
    /// How headers are written.
    pub headers: HeaderStyle,
    /// Whether clients can read them.
    pub headers_visible: bool,
    /// Where in its second the run starts on the wall clock.
    pub epoch_phase: SimDuration,
}

impl ServerModel {
    /// A fresh server in its initial state.
    pub fn build(&self) -> Server {
        match *self {
            ServerModel::Down { recover_at } => Server::Down(Down {
                recover_at: recover_at.map(|d| SimTime::ZERO + d),
            }),
            ServerModel::Limited(m) => Server::Limited(Limited {
                limiter: match m.rule {
                    LimiterRule::FixedWindow(r) => Limiter::FixedWindow(FixedWindow::new(r)),
                    LimiterRule::SlidingWindow(r) => Limiter::SlidingWindow(SlidingWindow::new(r)),
                    LimiterRule::TokenBucket(r) => Limiter::TokenBucket(TokenBucket::new(r)),
                },
                keying: Keying {
                    clients_per_address: m.clients_per_address,
                },
                headers: Headers {
                    clock: WallClock {
                        phase: m.epoch_phase,
                    },
                    style: m.headers,
                    visible: m.headers_visible,
                },
            }),
            ServerModel::Occ => Server::Occ(Occ::default()),
            ServerModel::Capacity(rule) => Server::Capacity(Capacity::new(rule)),
            ServerModel::Flaky(f) => Server::Flaky(f),
        }
    }

    /// The same model with the wall clock starting at `phase` into its second (no effect on a
    /// server that sends no headers).
    pub fn with_phase(mut self, phase: SimDuration) -> ServerModel {
        if let ServerModel::Limited(m) = &mut self {
            m.epoch_phase = phase;
        }
        self
    }

    /// True for a rate-limited server, false for `down` and `occ`.
    pub fn is_limited(&self) -> bool {
        matches!(self, ServerModel::Limited(_))
    }

    /// True for `occ`, whose attempts are a read then a write over the network delay.
    pub fn is_occ(&self) -> bool {
        matches!(self, ServerModel::Occ)
    }

    /// The name `--server` takes for this model.
    pub fn name(&self) -> &'static str {
        match self {
            ServerModel::Down { .. } => "down",
            ServerModel::Limited(m) => match m.rule {
                LimiterRule::FixedWindow(_) => "fixed-window",
                LimiterRule::SlidingWindow(_) => "sliding-window",
                LimiterRule::TokenBucket(_) => "token-bucket",
            },
            ServerModel::Occ => "occ",
            ServerModel::Capacity(_) => "capacity",
            ServerModel::Flaky(_) => "flaky",
        }
    }

    /// A short description for titles and tables.
    pub fn describe(&self) -> String {
        match self {
            ServerModel::Down { recover_at: None } => "down".to_string(),
            ServerModel::Down {
                recover_at: Some(at),
            } => format!("down, recovers at {at}"),
            ServerModel::Occ => "occ (one row, optimistic concurrency)".to_string(),
            ServerModel::Flaky(f) => f.to_string(),
            ServerModel::Limited(m) => {
                let rule = match m.rule {
                    LimiterRule::FixedWindow(r) => format!(
                        "fixed-window {}/{} ({}, {} store)",
                        r.limit,
                        r.window,
                        r.start.name(),
                        r.store.name()
                    ),
                    LimiterRule::SlidingWindow(r) => {
                        format!("sliding-window {}/{}", r.limit, r.window)
                    }
                    LimiterRule::TokenBucket(r) => format!(
                        "token-bucket {} + {}/{} ({})",
                        r.capacity,
                        r.refill,
                        r.interval,
                        r.mode.name()
                    ),
                };
                let keys = if m.clients_per_address == 1 {
                    "per client".to_string()
                } else {
                    format!("{} clients per address", m.clients_per_address)
                };
                let headers = if m.headers_visible {
                    format!("{} headers", m.headers.name())
                } else {
                    "hidden headers".to_string()
                };
                format!("{rule}, {keys}, {headers}, phase {}", m.epoch_phase)
            }
            ServerModel::Capacity(r) => {
                let bound = |b: Option<u32>| Bound(b).to_string();
                let mut text = format!(
                    "capacity: {} workers, service {}, queue {} {}",
                    bound(r.workers),
                    r.service,
                    bound(r.queue),
                    r.order.name()
                );
                if !r.slowdown.is_zero() {
                    text.push_str(&format!(", slowdown {}", r.slowdown));
                }
                if let Some(d) = r.shed_retry_after {
                    text.push_str(&format!(", Retry-After {d} on sheds"));
                }
                if r.cancels {
                    text.push_str(", cancels abandoned work");
                }
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_model_validates_to_a_model_of_that_name_and_nothing_else_does() {
        for &name in SERVER_MODELS {
            let file = ServerFile {
                model: Some(name.to_string()),
                ..Default::default()
            };
            let model = file.validate(10).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(model.name(), name);
        }
        let mut names = SERVER_MODELS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SERVER_MODELS.len(), "a name listed twice");
        let e = ServerFile {
            model: Some("dwn".into()),
            ..Default::default()
        }
        .validate(10)
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(
                "accepted: down, fixed-window, sliding-window, token-bucket, occ, capacity, flaky"
            ),
            "{e}"
        );
    }
}
