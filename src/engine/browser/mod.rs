//! Browser tabs: what a web app's retry loop meets that a backend's does not. Owns
//! the tab model — visibility, Chrome's timer throttling in hidden tabs, pausing while
//! hidden, which tabs can read the headers, HTTP-date `Retry-After` read against a skewed
//! clock — and what a herd client carries to follow it (`herd.rs`). No I/O.
//!
//! **A tab** ([`Tab`]) is one client's browser state, drawn from its own stream (a SplitMix64
//! seeded from the run seed and the client's index, apart from the client's retry stream, so
//! the retry draws are those of the same run without tabs). In this order: hidden at t = 0
//! (probability `hidden`), the phase of the tab's own clock within a minute (uniform), whether
//! it can read the headers (probability `headers_visible`), its first dwell (exponential),
//! its clock skew; later dwells as the tab flips. A tab flips between hidden and visible
//! after exponential dwells of mean `switch_mean` (never without it).
//!
//! **Timers in a hidden tab** ([`HiddenTimers::Chrome`], after "Heavy throttling of chained
//! JS timers beginning in Chrome 88", developer.chrome.com, and Chrome's intensive wake-up
//! throttling entry on chromestatus.com): a timer due while the page is hidden runs at the
//! next 1-second-aligned wake-up of the tab's clock; once the page has been hidden 5 minutes
//! and the timer belongs to a chain (chain count ≥ 5) in a silent page without WebRTC, at the
//! next 1-minute-aligned wake-up. We assume a silent page without WebRTC. A retry timer set
//! in a fetch's callback is not chained (the HTML timer nesting level is that of the timer's
//! own task), so [`HiddenTimers::ChromeUnchained`] applies the 1-second rule only;
//! [`HiddenTimers::Chrome`] takes the stricter reading, that a retry loop is a chain. A tab
//! that becomes visible before its wake-up runs the timer when it does. The condition is
//! checked when the timer is due.
//!
//! **Pausing** ([`WhenHidden::Pause`]): a tab hidden when it reads a refusal draws no wait;
//! a retry timer that runs while the tab is hidden sends nothing. Either way the tab waits
//! for `visibilitychange`, then draws its strategy's next wait (with what it read of the
//! headers, counted from then) and retries once it has passed, unless hidden again by then.
//! A tab hidden for good (no switching) stays paused: counted `paused`, not given up, with no
//! finish time.
//!
//! **Headers as the tab reads them.** `Retry-After` in seconds counts from the reading; as an
//! HTTP date ([`RetryAfterFormat::HttpDate`]) it is the whole second of the server's clock
//! `floor(server now + Retry-After)`, read against the tab's clock, `skew` ahead of the
//! server's: the tab waits until its clock shows the date, so a clock ahead wakes early by
//! the skew. `X-RateLimit-Reset` is a Unix time, so it is read against the skewed clock too.
//! An *early* retry is one that reaches the server before the instant the refusal announced
//! (the date, or the refusal's time plus Retry-After seconds).
//!
//! **Paths.** The herd paths' own two loops ([`crate::engine::simulate_event_queue`]'s and
//! [`crate::engine::simulate_independent`]'s) run the tabs: what a client carries is a type
//! parameter of theirs, nothing without tabs (so runs without tabs keep their 24-byte events
//! and their code), and with tabs the tab and its reading in each event beside the client,
//! with its step at each event (`herd.rs`). Same answers, same counts, and the two paths agree
//! exactly for a stateless server, since a tab's draws depend only on the run seed and its
//! index. The call loop ([`crate::engine::calls`]) keeps one tab a client process and one
//! [`Reading`] a call, and checks a retry timer when it is due. Both follow [`TabRules`]: one
//! copy of the rules above.

mod skew;

pub use skew::ClockSkew;

use super::delay::unit;
use super::RunSpec;
use crate::metrics::BrowserCounts;
use crate::policy::Hints;
use crate::rng::{splitmix64, uniform_below, ClientRng};
use crate::server::clock::floor_second;
use crate::server::Server;
use crate::time::{SimDuration, SimTime, NANOS_PER_SEC};
use crate::workload::unit_exponential;

const MINUTE: u64 = 60 * NANOS_PER_SEC;
/// Hidden this long, a chained timer's wake-ups are aligned to the minute (Chrome 88).
pub const INTENSIVE_AFTER: SimDuration = SimDuration(5 * MINUTE);
const NEVER: u64 = u64::MAX;

/// What a hidden tab's timers do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum HiddenTimers {
    /// Chrome's rules, the retry loop counted as a chain: 1-second-aligned wake-ups, and
    /// 1-minute-aligned once hidden 5 minutes.
    #[default]
    Chrome,
    /// Chrome's rules for a timer that is not chained: 1-second-aligned wake-ups only.
    ChromeUnchained,
    /// No throttling: timers run when due.
    None,
}

impl HiddenTimers {
    /// Every option, the default first.
    pub const ALL: [HiddenTimers; 3] = [
        HiddenTimers::Chrome,
        HiddenTimers::ChromeUnchained,
        HiddenTimers::None,
    ];
    /// Their names, in the same order: what `--hidden-timers`, the config key and the sweep
    /// accept.
    pub const NAMES: [&'static str; 3] = [
        Self::ALL[0].name(),
        Self::ALL[1].name(),
        Self::ALL[2].name(),
    ];
    /// The name on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            HiddenTimers::Chrome => "chrome",
            HiddenTimers::ChromeUnchained => "chrome-unchained",
            HiddenTimers::None => "none",
        }
    }
}

/// What a hidden tab does about a retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum WhenHidden {
    /// Retries as if visible (what most code does), its timers throttled.
    #[default]
    Retry,
    /// Waits until visible (Page Visibility API), then draws its wait.
    Pause,
}

impl WhenHidden {
    /// Every option, the default first.
    pub const ALL: [WhenHidden; 2] = [WhenHidden::Retry, WhenHidden::Pause];
    /// Their names, in the same order: what `--when-hidden`, the config key and the sweep
    /// accept.
    pub const NAMES: [&'static str; 2] = [Self::ALL[0].name(), Self::ALL[1].name()];
    /// The name on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            WhenHidden::Retry => "retry",
            WhenHidden::Pause => "pause",
        }
    }
}

/// How `Retry-After` is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RetryAfterFormat {
    /// A number of seconds, counted from the reading.
    #[default]
    Seconds,
    /// An HTTP date: a whole second of the server's clock, read against the client's.
    HttpDate,
}

impl RetryAfterFormat {
    /// Every option, the default first.
    pub const ALL: [RetryAfterFormat; 2] = [RetryAfterFormat::Seconds, RetryAfterFormat::HttpDate];
    /// Their names, in the same order: what `--retry-after-format` and the config key accept.
    pub const NAMES: [&'static str; 2] = [Self::ALL[0].name(), Self::ALL[1].name()];
    /// The name on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            RetryAfterFormat::Seconds => "seconds",
            RetryAfterFormat::HttpDate => "http-date",
        }
    }
}

/// The browser options of a run. The default is no tab model at all ([`Browser::is_active`]
/// false), and the herd paths run as they always did.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Browser {
    /// Fraction of tabs hidden at t = 0, in `[0, 1]`.
    pub hidden: f64,
    /// Mean dwell between visibility flips; `None`: never flips.
    pub switch_mean: Option<SimDuration>,
    /// What a hidden tab's timers do.
    pub timers: HiddenTimers,
    /// What a hidden tab does about a retry.
    pub when_hidden: WhenHidden,
    /// Fraction of tabs that can read the headers, when strictly between 0 and 1 (a
    /// limiter's 0 and 1 are its own `headers_visible`), or 0 for a capacity server whose
    /// sheds no tab can read; `None`: every tab reads them.
    pub headers_visible: Option<f64>,
    /// How `Retry-After` is written.
    pub retry_after_format: RetryAfterFormat,
    /// How far each tab's clock is off the server's.
    pub skew: ClockSkew,
}

impl Browser {
    /// True when any option differs from a plain client: only then do the clients carry tabs.
    pub fn is_active(&self) -> bool {
        self.hidden > 0.0
            || self.switch_mean.is_some()
            || self.when_hidden != WhenHidden::Retry
            || self.headers_visible.is_some()
            || self.retry_after_format != RetryAfterFormat::Seconds
            || self.skew != ClockSkew::Fixed(0)
    }

    /// A short description for titles (empty when inactive).
    pub fn describe(&self) -> String {
        if !self.is_active() {
            return String::new();
        }
        let mut parts = vec![format!("tabs {}% hidden", self.hidden * 100.0)];
        if let Some(mean) = self.switch_mean {
            parts.push(format!("switching every {mean} on average"));
        }
        if self.hidden > 0.0 || self.switch_mean.is_some() {
            parts.push(format!("{} timers", self.timers.name()));
            parts.push(format!("{} when hidden", self.when_hidden.name()));
        }
        if let Some(f) = self.headers_visible {
            parts.push(format!("{}% read the headers", f * 100.0));
        }
        if self.retry_after_format != RetryAfterFormat::Seconds {
            parts.push(format!("Retry-After as {}", self.retry_after_format.name()));
        }
        if self.skew != ClockSkew::Fixed(0) {
            parts.push(format!("clock skew {}", self.skew));
        }
        parts.join(", ")
    }
}

/// A uniform `f64` in `[0, 1)` below `p`: true with probability `p` (always for 1, never
/// for 0).
fn chance(rng: &mut ClientRng, p: f64) -> bool {
    unit(rng) < p
}

/// One tab's state: its own stream, its clock and its visibility. 48 bytes; the herd paths
/// carry it in the tab's pending event, the call loop keeps one a client process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tab {
    rng: ClientRng,
    /// Where the tab's clock is within its minute at t = 0, nanoseconds below one minute.
    phase: u64,
    /// The tab's clock minus the server's, nanoseconds.
    skew: i64,
    /// When the tab next flips (`NEVER`).
    next_flip: u64,
    /// When it was last hidden (meaningful while hidden).
    hidden_since: u64,
    hidden: bool,
    reads_headers: bool,
}

impl Tab {
    /// Tab `id` of the run with `seed`, at t = 0.
    pub fn new(browser: &Browser, seed: u64, id: u32) -> Tab {
        let mut key = seed ^ 0x7ab5_b0a7_5eed_0012;
        let mut state = splitmix64(&mut key) ^ u64::from(id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut rng = ClientRng::new(splitmix64(&mut state));
        let hidden = chance(&mut rng, browser.hidden);
        let phase = uniform_below(&mut rng, MINUTE);
        let reads_headers = chance(&mut rng, browser.headers_visible.unwrap_or(1.0));
        let first_dwell = unit_exponential(&mut rng);
        let skew = browser.skew.draw(&mut rng);
        let next_flip = match browser.switch_mean {
            Some(mean) => dwell(first_dwell, mean),
            None => NEVER,
        };
        Tab {
            rng,
            phase,
            skew,
            next_flip,
            hidden_since: 0,
            hidden,
            reads_headers,
        }
    }

    /// True while hidden (as of the last [`Tab::advance`]).
    pub fn hidden(&self) -> bool {
        self.hidden
    }

    /// Where the tab's clock was within its minute at t = 0.
    pub fn phase(&self) -> SimDuration {
        SimDuration(self.phase)
    }

    /// The tab's clock skew, nanoseconds ahead of the server's.
    pub fn skew(&self) -> i64 {
        self.skew
    }

    /// Flips the tab as often as its dwells say up to `t` (a flip at `t` counts). Times
    /// passed in must never go back.
    pub fn advance(&mut self, t: SimTime, switch_mean: Option<SimDuration>) {
        let Some(mean) = switch_mean else { return };
        while self.next_flip <= t.0 {
            self.hidden = !self.hidden;
            if self.hidden {
                self.hidden_since = self.next_flip;
            }
            let d = dwell(unit_exponential(&mut self.rng), mean);
            self.next_flip = self.next_flip.saturating_add(d);
        }
    }

    /// When the next flip comes, if ever.
    pub fn next_flip(&self) -> Option<SimTime> {
        (self.next_flip != NEVER).then_some(SimTime(self.next_flip))
    }

    /// When a timer due at `due` runs in this tab, hidden at `due` (advanced to it): the
    /// next aligned wake-up of its clock, or the flip to visible if that comes first.
    pub fn wake(&self, due: SimTime, timers: HiddenTimers) -> SimTime {
        let period = match timers {
            HiddenTimers::None => return due,
            HiddenTimers::Chrome if due.0 - self.hidden_since >= INTENSIVE_AFTER.0 => MINUTE,
            HiddenTimers::Chrome | HiddenTimers::ChromeUnchained => NANOS_PER_SEC,
        };
        let clock = due.0 + self.phase;
        let aligned = clock.div_ceil(period) * period - self.phase;
        SimTime(aligned.min(self.next_flip))
    }
}

/// An exponential dwell of `mean` from a unit exponential draw, at least 1 ns.
fn dwell(unit_exp: f64, mean: SimDuration) -> u64 {
    ((unit_exp * mean.as_nanos() as f64).round() as u64).max(1)
}

/// What a tab read of the last refusal to one of its calls, as simulated instants (`NEVER`:
/// nothing): the instant the server announced (for `early_retries`), and, if the tab can
/// read the headers, when `Retry-After` says to retry and the reset, as its clock reads
/// them. 24 bytes: in the herd's event, or one a call in flight on the call loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    announced: u64,
    retry_at: u64,
    reset_at: u64,
}

impl Default for Reading {
    fn default() -> Self {
        Reading {
            announced: NEVER,
            retry_at: NEVER,
            reset_at: NEVER,
        }
    }
}

impl Reading {
    /// The instant the last refusal announced, if any.
    pub fn announced(&self) -> Option<SimTime> {
        (self.announced != NEVER).then_some(SimTime(self.announced))
    }

    /// Forgets the headers read (a timeout reads none), keeping the announced instant.
    pub fn forget_headers(&mut self) {
        self.retry_at = NEVER;
        self.reset_at = NEVER;
    }

    /// The hints as the tab reads them at `now`: the waits left until the instants read.
    pub fn at(&self, now: SimTime) -> Hints {
        let left = |at: u64| (at != NEVER).then(|| SimTime(at) - now);
        Hints {
            retry_after: left(self.retry_at),
            reset_in: left(self.reset_at),
        }
    }
}

/// When a retry timer runs ([`TabRules::timer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The retry is sent at this instant (due, or later when throttled while hidden).
    Runs(SimTime),
    /// The tab is hidden and pauses: the retry is not sent, and is drawn again once visible.
    Paused,
}

/// The tab rules every loop follows (the herd paths' and the call loop), with what they
/// count: the options, the server's clock phase (HTTP dates are its whole seconds) and the
/// [`BrowserCounts`]. Every time handed to one tab's methods must be at or after the last
/// one handed for that tab.
#[derive(Clone, Debug)]
pub struct TabRules {
    /// The options.
    pub browser: Browser,
    server_phase: u64,
    /// What the tabs did so far.
    pub counts: BrowserCounts,
}

impl TabRules {
    /// The rules of `spec`'s run (its browser options and its server's clock).
    pub fn new(spec: &RunSpec) -> Self {
        TabRules {
            browser: spec.browser,
            server_phase: match &spec.server {
                Server::Limited(l) => l.headers.clock.phase.as_nanos(),
                _ => 0,
            },
            counts: BrowserCounts::default(),
        }
    }

    /// Tab `id` of the run with `seed`, counted if hidden.
    pub fn open(&mut self, seed: u64, id: u32) -> Tab {
        let tab = Tab::new(&self.browser, seed, id);
        self.counts.hidden_clients += u64::from(tab.hidden);
        tab
    }

    /// A request reaches the server at `time`: counted early when it is a retry arriving
    /// before the instant the last refusal announced.
    #[inline]
    pub fn arrives(&mut self, time: SimTime, retry: bool, reading: &Reading) {
        if retry && reading.announced != NEVER && time.0 < reading.announced {
            self.counts.early_retries += 1;
        }
    }

    /// Records what the refusal at `time` (the server's), read at `read` by `tab`,
    /// announced and what the tab read of it. `hints` are as the server sent them: the
    /// reset counted from `time`.
    pub fn note(
        &self,
        time: SimTime,
        read: SimTime,
        tab: &Tab,
        reading: &mut Reading,
        hints: Hints,
    ) {
        let wall = |t: SimTime| i128::from(t.0) + i128::from(self.server_phase);
        let sim = |w: i128| w - i128::from(self.server_phase);
        // As the tab's clock reads a server instant `w`: skew earlier in simulated time.
        let on_tab = |w: i128| -> u64 {
            let t = sim(w) - i128::from(tab.skew);
            t.clamp(i128::from(read.0), i128::from(NEVER - 1)) as u64
        };
        let (announced, retry_at) = match hints.retry_after {
            None => (NEVER, NEVER),
            Some(ra) => match self.browser.retry_after_format {
                RetryAfterFormat::Seconds => ((time + ra).0, (read + ra).0),
                RetryAfterFormat::HttpDate => {
                    let date = floor_second((wall(time) + i128::from(ra.0)).max(0) as u64);
                    let at = sim(i128::from(date)).max(0) as u64;
                    (at, on_tab(i128::from(date)))
                }
            },
        };
        let reset_at = match hints.reset_in {
            None => NEVER,
            Some(r) => on_tab(wall(time) + i128::from(r.0)),
        };
        reading.announced = announced;
        if tab.reads_headers {
            reading.retry_at = retry_at;
            reading.reset_at = reset_at;
        } else {
            reading.retry_at = NEVER;
            reading.reset_at = NEVER;
        }
    }

    /// True when `tab`, advanced to `now`, is hidden.
    #[inline]
    pub fn hidden_at(&self, tab: &mut Tab, now: SimTime) -> bool {
        tab.advance(now, self.browser.switch_mean);
        tab.hidden
    }

    /// True when `tab`, advanced to `now`, is hidden and pauses rather than draw a wait.
    #[inline]
    pub fn pauses(&self, tab: &mut Tab, now: SimTime) -> bool {
        tab.advance(now, self.browser.switch_mean);
        tab.hidden && self.browser.when_hidden == WhenHidden::Pause
    }

    /// The retry timer of `tab` due at `due`: when it runs, counted in
    /// `retries_while_hidden` when it sends while hidden; or the pause it turns into.
    #[inline]
    pub fn timer(&mut self, tab: &mut Tab, due: SimTime) -> Timer {
        tab.advance(due, self.browser.switch_mean);
        if !tab.hidden {
            return Timer::Runs(due);
        }
        let wake = tab.wake(due, self.browser.timers);
        if wake.0 == tab.next_flip {
            // Visible by the time the timer runs.
            return Timer::Runs(wake);
        }
        match self.browser.when_hidden {
            WhenHidden::Retry => {
                self.counts.retries_while_hidden += 1;
                Timer::Runs(wake)
            }
            WhenHidden::Pause => Timer::Paused,
        }
    }

    /// A paused tab waits for `visibilitychange`: when it comes, or `None` (counted
    /// `paused`) when the tab stays hidden for good.
    pub fn resume_at(&mut self, tab: &Tab) -> Option<SimTime> {
        let visible = tab.next_flip();
        self.counts.paused += u64::from(visible.is_none());
        visible
    }
}

pub(super) mod herd;
#[cfg(test)]
mod tests;
