//! Input files read whole: scenario, sweep, tune, report and fixture files. Each is a few
//! kilobytes, so a read stops past [`MAX_INPUT_BYTES`]: a path given by mistake (a trace of
//! gigabytes, `/dev/zero`) fails in one line instead of filling the memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The largest input file read, 16 MiB: the shipped files are under 20 KiB.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// The text of the file at `path`, as [`std::fs::read_to_string`] reads it, or an error when it
/// holds more than [`MAX_INPUT_BYTES`] (read no further).
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let mut bytes = Vec::new();
    File::open(path)?
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(io::Error::other(format!(
            "more than {} MiB; accepted: a file of at most {} MiB",
            MAX_INPUT_BYTES >> 20,
            MAX_INPUT_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_up_to_the_limit_and_refused_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("scenario.toml");
        std::fs::write(&at, "clients = 5\n").unwrap();
        assert_eq!(read_to_string(&at).unwrap(), "clients = 5\n");
        std::fs::write(&at, vec![b'#'; MAX_INPUT_BYTES as usize]).unwrap();
        assert_eq!(read_to_string(&at).unwrap().len() as u64, MAX_INPUT_BYTES);
        std::fs::write(&at, vec![b'#'; MAX_INPUT_BYTES as usize + 1]).unwrap();
        let error = read_to_string(&at).unwrap_err().to_string();
        assert!(error.contains("at most 16 MiB"), "{error}");
        std::fs::write(&at, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_to_string(&at).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        assert!(read_to_string(dir.path()).is_err());
    }
}
