//! Reading a control as written, `NAME[:key=value,...]` (`--budget grpc:max_tokens=20`):
//! the name, then each parameter by key, each checked against its range; a key the option
//! does not take is refused naming the options that do take it. Errors are a value and what
//! is accepted, for the config layer to name the flag. No I/O, no clap.

use crate::time::{parse_duration, SimDuration};

/// A refused control text: the value as given and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The offending text.
    pub value: String,
    /// What would be accepted.
    pub accepted: String,
}

/// Every option's name and keys, for "a parameter of another option" messages.
pub type Catalogue = &'static [(&'static str, &'static [&'static str])];

/// A control text split into its name and parameters, consumed key by key.
pub struct Params<'a> {
    whole: &'a str,
    name: &'a str,
    pairs: Vec<(&'a str, &'a str, bool)>,
    catalogue: Catalogue,
}

impl<'a> Params<'a> {
    /// Splits `text` into a name among `catalogue` and `key=value` pairs.
    pub fn parse(text: &'a str, catalogue: Catalogue) -> Result<Params<'a>, SpecError> {
        let whole = text.trim();
        let (name, rest) = match whole.split_once(':') {
            Some((name, rest)) => (name.trim(), Some(rest)),
            None => (whole, None),
        };
        if !catalogue.iter().any(|(n, _)| *n == name) {
            let names: Vec<&str> = catalogue.iter().map(|(n, _)| *n).collect();
            return Err(SpecError {
                value: whole.to_string(),
                accepted: format!("accepted: {}", names.join(", ")),
            });
        }
        let mut pairs = Vec::new();
        for pair in rest.into_iter().flat_map(|r| r.split(',')) {
            let pair = pair.trim();
            let Some((key, value)) = pair.split_once('=') else {
                return Err(SpecError {
                    value: whole.to_string(),
                    accepted: format!(
                        "`{pair}` is not key=value; accepted: {}",
                        Self::usage(catalogue, name)
                    ),
                });
            };
            pairs.push((key.trim(), value.trim(), false));
        }
        Ok(Params {
            whole,
            name,
            pairs,
            catalogue,
        })
    }

    /// `name[:k=..,...]` with the keys `name` takes.
    fn usage(catalogue: Catalogue, name: &str) -> String {
        let keys = catalogue
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[][..], |(_, k)| k);
        if keys.is_empty() {
            format!("{name} (it takes no parameters)")
        } else {
            format!(
                "{name}:{}",
                keys.iter()
                    .map(|k| format!("{k}=.."))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
    }

    /// The option's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    fn take(&mut self, key: &str) -> Option<&'a str> {
        let pair = self.pairs.iter_mut().find(|(k, _, _)| *k == key)?;
        pair.2 = true;
        Some(pair.1)
    }

    fn refuse(&self, key: &str, value: &str, accepted: &str) -> SpecError {
        SpecError {
            value: self.whole.to_string(),
            accepted: format!("{key}={value} is out of range; accepted: {key} {accepted}"),
        }
    }

    /// A number under `key` (`default` when absent) for which `ok` holds; `accepted` says
    /// which numbers those are.
    pub fn number(
        &mut self,
        key: &str,
        default: f64,
        ok: impl Fn(f64) -> bool,
        accepted: &str,
    ) -> Result<f64, SpecError> {
        let Some(text) = self.take(key) else {
            return Ok(default);
        };
        match text.replace('_', "").parse::<f64>() {
            Ok(v) if v.is_finite() && ok(v) => Ok(v),
            _ => Err(self.refuse(key, text, accepted)),
        }
    }

    /// A whole number under `key` within `low..=high`.
    pub fn whole(
        &mut self,
        key: &str,
        default: u64,
        low: u64,
        high: u64,
    ) -> Result<u64, SpecError> {
        let accepted = format!("a whole number from {low} to {high}");
        let Some(text) = self.take(key) else {
            return Ok(default);
        };
        match text.replace('_', "").parse::<u64>() {
            Ok(v) if (low..=high).contains(&v) => Ok(v),
            _ => Err(self.refuse(key, text, &accepted)),
        }
    }

    /// A duration under `key` for which `ok` holds.
    pub fn duration(
        &mut self,
        key: &str,
        default: SimDuration,
        ok: impl Fn(SimDuration) -> bool,
        accepted: &str,
    ) -> Result<SimDuration, SpecError> {
        let Some(text) = self.take(key) else {
            return Ok(default);
        };
        match parse_duration(text) {
            Ok(d) if ok(d) => Ok(d),
            _ => Err(self.refuse(key, text, accepted)),
        }
    }

    /// The raw text under `key`, if given.
    pub fn text(&mut self, key: &str) -> Option<&'a str> {
        self.take(key)
    }

    /// Refuses any key left: one of another option (named), or unknown.
    pub fn finish(self) -> Result<(), SpecError> {
        let Some((key, _, _)) = self.pairs.iter().find(|(_, _, used)| !used) else {
            return Ok(());
        };
        let owners: Vec<&str> = self
            .catalogue
            .iter()
            .filter(|(_, keys)| keys.contains(key))
            .map(|(n, _)| *n)
            .collect();
        let usage = Self::usage(self.catalogue, self.name);
        let accepted = if owners.is_empty() {
            format!("unknown parameter `{key}`; accepted: {usage}")
        } else {
            format!(
                "`{key}` is a parameter of {}, not of {}; accepted: {usage}",
                owners.join(", "),
                self.name
            )
        };
        Err(SpecError {
            value: self.whole.to_string(),
            accepted,
        })
    }
}
