//! What kind of text file a user handed to a command that reads another kind: a TOML
//! scenario given to `plot` (which reads CSV) or to `fixture` (which reads JSON), a JSON file
//! given to `plot`, so the refusal names the likely intent. `plot` refuses a file that opens
//! like TOML or JSON (as CSV it could only make a one-column table of fragments); `fixture`
//! only adds the hint to the JSON parser's own error.

/// The first line that is neither blank nor a `#` comment.
fn first_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
}

/// True when `text` opens like a TOML file: a `[table]` header or a `key = value` line, with no
/// comma before the `=` (a CSV header names its columns with commas).
pub fn looks_like_toml(text: &str) -> bool {
    let Some(line) = first_line(text.trim_start_matches('\u{feff}')) else {
        return false;
    };
    let bare_key = |key: &str| {
        !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | ' '))
    };
    if let Some(inner) = line
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    {
        let inner = inner.trim_start_matches('[').trim_end_matches(']');
        return bare_key(inner.trim());
    }
    match line.split_once('=') {
        Some((key, value)) => bare_key(key.trim()) && !value.trim().is_empty(),
        None => false,
    }
}

/// True when `text` opens like a JSON document (`{`, or `[` followed by a value).
pub fn looks_like_json(text: &str) -> bool {
    let text = text.trim_start_matches('\u{feff}').trim_start();
    text.starts_with('{')
        || text
            .strip_prefix('[')
            .is_some_and(|rest| rest.trim_start().starts_with(['{', '[', '"']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_and_json_are_told_from_csv() {
        let shipped = include_str!("../configs/fixed-window-five-clients.toml");
        assert!(looks_like_toml(shipped));
        assert!(looks_like_toml("# a scenario\n\nclients = 1000\n"));
        assert!(looks_like_toml("[server]\nmodel = \"down\"\n"));
        assert!(looks_like_toml("[[scenarios]]\n"));
        assert!(!looks_like_toml("clients,strategy,peak\n1,a,2\n"));
        assert!(!looks_like_toml("x,y=2\n1,2\n"));
        assert!(!looks_like_toml(""));
        assert!(!looks_like_toml("{\"scenarios\": []}"));
        let fixture = include_str!("../configs/scenarios.json");
        assert!(looks_like_json(fixture) && !looks_like_toml(fixture));
        assert!(!looks_like_json("clients,strategy\n"));
        assert!(!looks_like_json("[server]\n"));
    }
}
