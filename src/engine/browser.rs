//! Browser tabs: what a web app's retry loop meets that a backend's does not (issue 12). Owns
//! the tab model — visibility, Chrome's timer throttling in hidden tabs, pausing while
//! hidden, which tabs can read the headers, HTTP-date `Retry-After` read against a skewed
//! clock — and the herd paths' loops for runs that use it. No I/O.
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
//! [`HiddenTimers::Chrome`] takes the reading that a retry loop is a chain. A tab
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
//! **Paths.** [`simulate_event_queue`] and [`simulate_independent`] are the herd paths'
//! loops with the tab carried in each event beside the client (so runs without tabs keep
//! their 24-byte events): same answers, same counts, and the two agree exactly for a
//! stateless server, since a tab's draws depend only on the run seed and its index.

use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::delay::{standard_normal, unit};
use super::{
    Client, Event, EventQueue, FindWindow, PreviousWait, Run, RunSpec, Single, CLIENTS_PER_BLOCK,
};
use crate::metrics::{BrowserCounts, Tally, WindowCursor, Windows};
use crate::policy::{Decision, Hints};
use crate::rng::{splitmix64, uniform_below, ClientRng, ClientSeeds};
use crate::server::clock::floor_second;
use crate::server::{Response, Server};
use crate::time::{parse_duration, SimDuration, SimTime, NANOS_PER_SEC};
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
    /// The name on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            RetryAfterFormat::Seconds => "seconds",
            RetryAfterFormat::HttpDate => "http-date",
        }
    }
}

/// How far a client's clock is ahead of the server's (negative: behind), in nanoseconds,
/// drawn once per tab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockSkew {
    /// The same for every tab (`2s`, `-500ms`, `0s`).
    Fixed(i64),
    /// Uniform over whole nanoseconds in `[low, high)` (`uniform:-5s..5s`).
    Uniform {
        /// Lowest skew.
        low: i64,
        /// Highest (exclusive).
        high: i64,
    },
    /// Normal (`normal:0s,2s`), rounded to the nanosecond.
    Normal {
        /// Mean skew.
        mean: i64,
        /// Standard deviation.
        sd: u64,
    },
}

impl Default for ClockSkew {
    fn default() -> Self {
        ClockSkew::Fixed(0)
    }
}

impl ClockSkew {
    /// One tab's skew.
    fn draw(&self, rng: &mut ClientRng) -> i64 {
        match *self {
            ClockSkew::Fixed(s) => s,
            ClockSkew::Uniform { low, high } => low + uniform_below(rng, high.abs_diff(low)) as i64,
            ClockSkew::Normal { mean, sd } => {
                mean + (standard_normal(rng) * sd as f64).round() as i64
            }
        }
    }

    /// The largest skew a tab can have in practice, either way (for bounds): the normal's
    /// 40 standard deviations.
    pub fn practical_max(&self) -> u64 {
        match *self {
            ClockSkew::Fixed(s) => s.unsigned_abs(),
            ClockSkew::Uniform { low, high } => low.unsigned_abs().max(high.unsigned_abs()),
            ClockSkew::Normal { mean, sd } => mean.unsigned_abs().saturating_add(40 * sd),
        }
    }
}

/// A signed duration as written: `-2s`, `+1.5s`, `500ms`.
fn parse_signed(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, rest) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let d = i64::try_from(parse_duration(rest).ok()?.as_nanos()).ok()?;
    Some(if negative { -d } else { d })
}

fn signed(f: &mut fmt::Formatter<'_>, nanos: i64) -> fmt::Result {
    let sign = if nanos < 0 { "-" } else { "" };
    write!(f, "{sign}{}", SimDuration(nanos.unsigned_abs()))
}

impl fmt::Display for ClockSkew {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ClockSkew::Fixed(s) => signed(f, s),
            ClockSkew::Uniform { low, high } => {
                f.write_str("uniform:")?;
                signed(f, low)?;
                f.write_str("..")?;
                signed(f, high)
            }
            ClockSkew::Normal { mean, sd } => {
                f.write_str("normal:")?;
                signed(f, mean)?;
                write!(f, ",{}", SimDuration(sd))
            }
        }
    }
}

impl FromStr for ClockSkew {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{text}` is not a clock skew; accepted: a signed duration (2s, -500ms), \
                 uniform:LOW..HIGH (uniform:-5s..5s) or normal:MEAN,SD (normal:0s,2s)"
            )
        };
        let t = text.trim();
        if let Some(rest) = t.strip_prefix("uniform:") {
            let (low, high) = rest.split_once("..").ok_or_else(bad)?;
            let (low, high) = (
                parse_signed(low).ok_or_else(bad)?,
                parse_signed(high).ok_or_else(bad)?,
            );
            if high <= low {
                return Err(format!(
                    "`{text}` is an empty range; accepted: uniform:LOW..HIGH with LOW below HIGH"
                ));
            }
            return Ok(ClockSkew::Uniform { low, high });
        }
        if let Some(rest) = t.strip_prefix("normal:") {
            let (mean, sd) = rest.split_once(',').ok_or_else(bad)?;
            let mean = parse_signed(mean).ok_or_else(bad)?;
            let sd = parse_duration(sd).map_err(|_| bad())?.as_nanos();
            return Ok(ClockSkew::Normal { mean, sd });
        }
        parse_signed(t).map(ClockSkew::Fixed).ok_or_else(bad)
    }
}

impl Serialize for ClockSkew {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ClockSkew {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
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
    /// Fraction of tabs that can read the headers, when strictly between 0 and 1 (0 and 1
    /// are the server's `headers_visible`); 1 otherwise.
    pub headers_visible: Option<f64>,
    /// How `Retry-After` is written.
    pub retry_after_format: RetryAfterFormat,
    /// How far each tab's clock is off the server's.
    pub skew: ClockSkew,
}

impl Browser {
    /// True when any option differs from a plain client: only then do the tab loops run.
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

/// One tab's state: its own stream, its clock, its visibility and what it last read. 64
/// bytes, carried in the tab's pending event.
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
    /// The instant the last refusal announced, in simulated time (`NEVER`: none).
    announced: u64,
    /// What the tab read of the last refusal, as instants (`NEVER`: not read): when
    /// Retry-After says to retry, and the reset.
    retry_at: u64,
    reset_at: u64,
    hidden: bool,
    reads_headers: bool,
    /// The pending event is the tab becoming visible while paused, not a request.
    resume: bool,
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
            announced: NEVER,
            retry_at: NEVER,
            reset_at: NEVER,
            hidden,
            reads_headers,
            resume: false,
        }
    }

    /// True while hidden (as of the last [`Tab::advance`]).
    pub fn hidden(&self) -> bool {
        self.hidden
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

/// A client and its tab: the event of a run with tabs.
#[derive(Clone, Copy, Debug)]
struct TabClient<W> {
    client: Client<W, Single>,
    tab: Tab,
}

/// What the tab loops share besides [`Run`]: the options, the server's clock phase and the
/// counts.
struct Tabs<'a, F> {
    run: Run<'a, F>,
    browser: Browser,
    /// The server's wall clock phase (HTTP dates are its whole seconds).
    server_phase: u64,
    counts: BrowserCounts,
}

impl<'a, F: FindWindow> Tabs<'a, F> {
    fn new(spec: &RunSpec, run: Run<'a, F>) -> Self {
        Tabs {
            run,
            browser: spec.browser,
            server_phase: match &spec.server {
                Server::Limited(l) => l.headers.clock.phase.as_nanos(),
                _ => 0,
            },
            counts: BrowserCounts::default(),
        }
    }

    fn start<W: PreviousWait>(&mut self, spec: &RunSpec, id: u32, rng: ClientRng) -> TabClient<W> {
        let tab = Tab::new(&self.browser, spec.seed, id);
        self.counts.hidden_clients += u64::from(tab.hidden);
        TabClient {
            client: self.run.start(id, rng),
            tab,
        }
    }

    /// Handles `c`'s pending event at `time` (a request reaching the server, or the tab
    /// becoming visible while paused): returns the time of its next event, or `None` when
    /// the client is done.
    #[inline]
    fn step<W: PreviousWait>(
        &mut self,
        time: SimTime,
        c: &mut TabClient<W>,
        server: &mut Server,
    ) -> Option<SimTime> {
        if c.tab.resume {
            c.tab.resume = false;
            c.tab.advance(time, self.browser.switch_mean);
            let hints = self.read_at(&c.tab, time);
            return self.decide(time, c, hints);
        }
        if c.client.retries_made > 0 && c.tab.announced != NEVER && time.0 < c.tab.announced {
            self.counts.early_retries += 1;
        }
        c.tab.announced = NEVER;
        match server.respond(time, c.client.id) {
            Response::Served => self.run.answer(time, &mut c.client, Response::Served),
            Response::Refused(hints) => self.refused(time, c, hints),
        }
    }

    fn refused<W: PreviousWait>(
        &mut self,
        time: SimTime,
        c: &mut TabClient<W>,
        hints: Hints,
    ) -> Option<SimTime> {
        let run = &mut self.run;
        let window = run.windows.window_of(time);
        run.tally
            .request_in_window(time, window, c.client.retries_made > 0, false);
        let read = time + run.latency.draw(&mut c.client.rng);
        self.note(time, read, &mut c.tab, hints);
        if c.client.retries_made >= self.run.policy.max_retries {
            self.run.tally.gave_up += 1;
            self.run.tally.finish(read, c.client.id, false);
            return None;
        }
        c.tab.advance(read, self.browser.switch_mean);
        if c.tab.hidden && self.browser.when_hidden == WhenHidden::Pause {
            return self.pause(&mut c.tab);
        }
        let hints = self.read_at(&c.tab, read);
        self.decide(read, c, hints)
    }

    /// Records what the refusal at `time`, read at `read`, announced and what the tab read.
    fn note(&self, time: SimTime, read: SimTime, tab: &mut Tab, hints: Hints) {
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
        tab.announced = announced;
        if tab.reads_headers {
            tab.retry_at = retry_at;
            tab.reset_at = reset_at;
        } else {
            tab.retry_at = NEVER;
            tab.reset_at = NEVER;
        }
    }

    /// The hints as the tab reads them at `now`.
    fn read_at(&self, tab: &Tab, now: SimTime) -> Hints {
        let left = |at: u64| (at != NEVER).then(|| SimTime(at) - now);
        Hints {
            retry_after: left(tab.retry_at),
            reset_in: left(tab.reset_at),
        }
    }

    /// The strategy's wait, drawn at `now`, and the retry timer it sets.
    fn decide<W: PreviousWait>(
        &mut self,
        now: SimTime,
        c: &mut TabClient<W>,
        hints: Hints,
    ) -> Option<SimTime> {
        let policy = self.run.policy;
        let client = &mut c.client;
        match policy.decide(
            client.retries_made,
            client.previous.get(policy.backoff.base),
            &hints,
            &mut client.rng,
        ) {
            Decision::Retry { retry, delay } => {
                client.retries_made = retry;
                client.previous.set(delay);
                self.timer(now + delay, c)
            }
            Decision::GiveUp => {
                self.run.tally.gave_up += 1;
                self.run.tally.finish(now, client.id, false);
                None
            }
        }
    }

    /// The retry timer due at `due`: when the retry is sent, or the pause it turns into.
    fn timer<W: PreviousWait>(&mut self, due: SimTime, c: &mut TabClient<W>) -> Option<SimTime> {
        let tab = &mut c.tab;
        tab.advance(due, self.browser.switch_mean);
        if !tab.hidden {
            return Some(due);
        }
        let wake = tab.wake(due, self.browser.timers);
        if wake.0 == tab.next_flip {
            // Visible by the time the timer runs.
            return Some(wake);
        }
        match self.browser.when_hidden {
            WhenHidden::Retry => {
                self.counts.retries_while_hidden += 1;
                Some(wake)
            }
            WhenHidden::Pause => {
                // The retry is not sent: it is drawn again once visible.
                c.client.retries_made -= 1;
                self.pause(&mut c.tab)
            }
        }
    }

    /// Waits for the tab to become visible; paused for good if it never does.
    fn pause(&mut self, tab: &mut Tab) -> Option<SimTime> {
        match tab.next_flip() {
            Some(visible) => {
                tab.resume = true;
                Some(visible)
            }
            None => {
                self.counts.paused += 1;
                None
            }
        }
    }
}

/// The event-queue path with tabs: [`super::simulate_event_queue`]'s loop, each event
/// carrying its tab.
pub fn simulate_event_queue(spec: &RunSpec) -> Tally {
    if spec.policy.strategy.reads_previous_wait() {
        event_queue_loop::<SimDuration>(spec)
    } else {
        event_queue_loop::<super::NoWait>(spec)
    }
}

fn event_queue_loop<W: PreviousWait>(spec: &RunSpec) -> Tally {
    let mut tally = Tally::for_clients(spec.bin, spec.clients);
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let run: Run<WindowCursor> = Run::new(spec, 0, spec.clients, &mut tally);
    let mut tabs = Tabs::new(spec, run);
    let mut seeds = ClientSeeds::starting_at(spec.seed, 0);
    let mut queue: EventQueue<TabClient<W>> = EventQueue::new();
    // First requests at t = 0 in client order, answered without queueing (as the herd loop).
    for id in 0..spec.clients {
        let mut c: TabClient<W> = tabs.start(spec, id, seeds.next_rng());
        if let Some(next) = tabs.step(SimTime::ZERO, &mut c, &mut server) {
            queue.push(Event {
                time: next,
                item: c,
            });
        }
    }
    while let Some(Event { time, item: mut c }) = queue.pop() {
        if let Some(next) = tabs.step(time, &mut c, &mut server) {
            queue.push(Event {
                time: next,
                item: c,
            });
        }
    }
    let counts = tabs.counts;
    tally.browser = Some(counts);
    tally.window_starts = server.window_starts();
    tally
}

/// The independent path with tabs: each client's life in turn, blocks in parallel.
pub fn simulate_independent(spec: &RunSpec) -> Tally {
    let blocks = spec.clients.div_ceil(CLIENTS_PER_BLOCK);
    (0..blocks)
        .into_par_iter()
        .map(|block| {
            let first = block * CLIENTS_PER_BLOCK;
            let last = (first + CLIENTS_PER_BLOCK).min(spec.clients);
            if spec.policy.strategy.reads_previous_wait() {
                block_loop::<SimDuration>(spec, first, last)
            } else {
                block_loop::<super::NoWait>(spec, first, last)
            }
        })
        .reduce(
            || Tally::new(spec.bin),
            |mut a, b| {
                a.merge(&b);
                a
            },
        )
}

fn block_loop<W: PreviousWait>(spec: &RunSpec, first: u32, last: u32) -> Tally {
    let mut tally = Tally::for_clients(spec.bin, spec.clients);
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let run: Run<Windows> = Run::new(spec, first, last - first, &mut tally);
    let mut tabs = Tabs::new(spec, run);
    let mut seeds = ClientSeeds::starting_at(spec.seed, u64::from(first));
    for id in first..last {
        let mut c: TabClient<W> = tabs.start(spec, id, seeds.next_rng());
        let mut time = SimTime::ZERO;
        while let Some(next) = tabs.step(time, &mut c, &mut server) {
            time = next;
        }
    }
    let counts = tabs.counts;
    tally.browser = Some(counts);
    tally
}

#[cfg(test)]
mod tests;
