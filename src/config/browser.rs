//! The browser-tab keys as written (`hidden`, `visibility_switch`, `hidden_timers`,
//! `when_hidden`, `retry_after_format`, `clock_skew`, and `headers_visible` as a fraction) and
//! their validation into an [`engine::Browser`](crate::engine::Browser). No I/O, no clap.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{choose, invalid, ConfigError, ScenarioFile, ServerModel};
use crate::engine::browser::{HiddenTimers, RetryAfterFormat, WhenHidden};
use crate::engine::Browser;

/// `--headers-visible`: `true`, `false`, or the fraction of clients that can read the
/// headers (`0.7`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadersVisible(pub f64);

impl fmt::Display for HeadersVisible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 1.0 {
            f.write_str("true")
        } else if self.0 == 0.0 {
            f.write_str("false")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl FromStr for HeadersVisible {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim() {
            "true" => Ok(HeadersVisible(1.0)),
            "false" => Ok(HeadersVisible(0.0)),
            other => other.parse::<f64>().map(HeadersVisible).map_err(|_| {
                format!(
                    "`{text}` is not accepted; accepted: true, false, or the fraction of clients \
                     that can read the headers, from 0 to 1 (e.g. 0.7)"
                )
            }),
        }
    }
}

impl Serialize for HeadersVisible {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0 == 1.0 || self.0 == 0.0 {
            serializer.serialize_bool(self.0 == 1.0)
        } else {
            serializer.serialize_f64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for HeadersVisible {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Flag(bool),
            Fraction(f64),
        }
        Ok(match Written::deserialize(deserializer)? {
            Written::Flag(true) => HeadersVisible(1.0),
            Written::Flag(false) => HeadersVisible(0.0),
            Written::Fraction(x) => HeadersVisible(x),
        })
    }
}

/// A fraction in `[0, 1]`, or the error naming `field`.
pub(crate) fn fraction(field: &'static str, value: f64, what: &str) -> Result<f64, ConfigError> {
    if !(0.0..=1.0).contains(&value) {
        return Err(invalid(
            field,
            value,
            format!("accepted: {what}, a fraction from 0 to 1 (e.g. 0.4)"),
        ));
    }
    Ok(value)
}

impl ScenarioFile {
    /// The browser keys given, as (flag, given) pairs, for messages.
    pub(super) fn browser_keys(&self) -> [(&'static str, bool); 6] {
        [
            ("--hidden", self.hidden.is_some()),
            ("--visibility-switch", self.visibility_switch.is_some()),
            ("--hidden-timers", self.hidden_timers.is_some()),
            ("--when-hidden", self.when_hidden.is_some()),
            ("--retry-after-format", self.retry_after_format.is_some()),
            ("--clock-skew", self.clock_skew.is_some()),
        ]
    }

    /// The validated browser options, given the validated server.
    pub(crate) fn browser(&self, server: &ServerModel) -> Result<Browser, ConfigError> {
        let headers_visible = match self.server.as_ref().and_then(|s| s.headers_visible) {
            Some(HeadersVisible(f)) => {
                let f = fraction(
                    "--headers-visible",
                    f,
                    "true, false, or the fraction of clients that can read the headers",
                )?;
                // A limiter hides its headers itself when none can read them; the capacity
                // server's sheds are hidden tab by tab (every tab unable to read them).
                let hidden_sheds = f == 0.0 && matches!(server, ServerModel::Capacity(_));
                (f > 0.0 && f < 1.0 || hidden_sheds).then_some(f)
            }
            None => None,
        };
        let hidden = fraction(
            "--hidden",
            self.hidden.unwrap_or(0.0),
            "the fraction of clients that are hidden tabs at t = 0",
        )?;
        if let Some(mean) = self.visibility_switch {
            if mean.is_zero() {
                return Err(invalid(
                    "--visibility-switch",
                    mean,
                    "accepted: a positive mean dwell between visibility flips, e.g. 3m",
                ));
            }
        }
        let browser = Browser {
            hidden,
            switch_mean: self.visibility_switch,
            timers: choose(
                "--hidden-timers",
                self.hidden_timers.clone(),
                &HiddenTimers::ALL,
                HiddenTimers::name,
            )?,
            when_hidden: choose(
                "--when-hidden",
                self.when_hidden.clone(),
                &WhenHidden::ALL,
                WhenHidden::name,
            )?,
            headers_visible,
            retry_after_format: choose(
                "--retry-after-format",
                self.retry_after_format.clone(),
                &RetryAfterFormat::ALL,
                RetryAfterFormat::name,
            )?,
            skew: self.clock_skew.unwrap_or_default(),
        };
        // `occ`'s clients make one write each, with no retry timer a tab could hold back.
        if browser.is_active() && matches!(server, ServerModel::Occ) {
            let (field, value) = self
                .browser_keys()
                .iter()
                .find(|(_, given)| *given)
                .map(|(field, _)| (*field, "given with --server occ".to_string()))
                .unwrap_or(("--headers-visible", "a fraction, with --server occ".into()));
            return Err(invalid(
                field,
                value,
                "accepted: browser tabs with any server but occ",
            ));
        }
        Ok(browser)
    }
}
