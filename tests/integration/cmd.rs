//! Runs the built `herd-sim` and checks its exit code and output: the few calls of assert_cmd
//! and predicates these tests used, in a page of std. The two crates (with bstr, regex-automata
//! and difflib under them) were a fifth of what `cargo test --release` compiled beyond the run's
//! own build (README, "Quick start").

use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A command line of the test binary, built like `std::process::Command`, with a timeout.
pub struct Command {
    inner: std::process::Command,
    timeout: Option<Duration>,
}

impl Command {
    /// The binary `name` of this package, as Cargo built it for the tests.
    pub fn cargo_bin(name: &str) -> io::Result<Command> {
        if name != "herd-sim" {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no binary {name}"),
            ));
        }
        Ok(Command {
            inner: std::process::Command::new(env!("CARGO_BIN_EXE_herd-sim")),
            timeout: None,
        })
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.inner.arg(arg);
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.inner.args(args);
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.inner.env(key, value);
        self
    }

    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.inner.envs(vars);
        self
    }

    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.inner.env_remove(key);
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.inner.current_dir(dir);
        self
    }

    /// Kills the process if it has not finished after `limit` (its output is what it wrote).
    pub fn timeout(&mut self, limit: Duration) -> &mut Self {
        self.timeout = Some(limit);
        self
    }

    /// Runs it to the end (or the timeout) with no input, collecting both outputs.
    pub fn output(&mut self) -> io::Result<Output> {
        let Some(limit) = self.timeout else {
            return self.inner.stdin(Stdio::null()).output();
        };
        let mut child = self
            .inner
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let status = wait_at_most(&mut child, limit)?;
        Ok(Output {
            status,
            stdout: stdout.join().expect("stdout reader"),
            stderr: stderr.join().expect("stderr reader"),
        })
    }

    /// Runs it and returns its output to check.
    pub fn assert(&mut self) -> Assert {
        let command = format!("{:?}", self.inner);
        let output = self
            .output()
            .unwrap_or_else(|e| panic!("cannot run {command}: {e}"));
        Assert { command, output }
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            pipe.read_to_end(&mut bytes).expect("read a child's output");
        }
        bytes
    })
}

fn wait_at_most(child: &mut Child, limit: Duration) -> io::Result<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() >= deadline {
            child.kill()?;
            return child.wait();
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// A finished run, whose checks panic with the command line and both outputs.
pub struct Assert {
    command: String,
    output: Output,
}

impl Assert {
    pub fn success(self) -> Self {
        if !self.output.status.success() {
            self.fail("expected success");
        }
        self
    }

    pub fn failure(self) -> Self {
        if self.output.status.success() {
            self.fail("expected failure");
        }
        self
    }

    pub fn code(self, code: i32) -> Self {
        if self.output.status.code() != Some(code) {
            self.fail(&format!("expected exit code {code}"));
        }
        self
    }

    pub fn stdout(self, expected: impl Into<Predicate>) -> Self {
        let expected = expected.into();
        if !expected.holds(&String::from_utf8_lossy(&self.output.stdout)) {
            self.fail(&format!("expected stdout {expected}"));
        }
        self
    }

    pub fn stderr(self, expected: impl Into<Predicate>) -> Self {
        let expected = expected.into();
        if !expected.holds(&String::from_utf8_lossy(&self.output.stderr)) {
            self.fail(&format!("expected stderr {expected}"));
        }
        self
    }

    pub fn get_output(&self) -> &Output {
        &self.output
    }

    fn fail(&self, what: &str) -> ! {
        panic!(
            "{what}\ncommand: {}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
            self.command,
            self.output.status,
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }
}

/// A check of a whole output, as text. A plain string must equal the output.
pub enum Predicate {
    Equals(String),
    Contains(String),
    StartsWith(String),
    EndsWith(String),
    IsEmpty,
    Function(Box<dyn Fn(&str) -> bool>),
    And(Box<Predicate>, Box<Predicate>),
    Not(Box<Predicate>),
}

impl Predicate {
    fn holds(&self, text: &str) -> bool {
        match self {
            Predicate::Equals(s) => text == s,
            Predicate::Contains(s) => text.contains(s.as_str()),
            Predicate::StartsWith(s) => text.starts_with(s.as_str()),
            Predicate::EndsWith(s) => text.ends_with(s.as_str()),
            Predicate::IsEmpty => text.is_empty(),
            Predicate::Function(f) => f(text),
            Predicate::And(a, b) => a.holds(text) && b.holds(text),
            Predicate::Not(a) => !a.holds(text),
        }
    }

    pub fn and(self, other: Predicate) -> Predicate {
        Predicate::And(Box::new(self), Box::new(other))
    }

    #[allow(clippy::should_implement_trait)] // predicates' spelling, not `!`
    pub fn not(self) -> Predicate {
        Predicate::Not(Box::new(self))
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Equals(s) => write!(f, "equal to {s:?}"),
            Predicate::Contains(s) => write!(f, "containing {s:?}"),
            Predicate::StartsWith(s) => write!(f, "starting with {s:?}"),
            Predicate::EndsWith(s) => write!(f, "ending with {s:?}"),
            Predicate::IsEmpty => write!(f, "empty"),
            Predicate::Function(_) => write!(f, "passing a check"),
            Predicate::And(a, b) => write!(f, "{a} and {b}"),
            Predicate::Not(a) => write!(f, "not {a}"),
        }
    }
}

impl From<&str> for Predicate {
    fn from(s: &str) -> Predicate {
        Predicate::Equals(s.to_string())
    }
}

impl From<String> for Predicate {
    fn from(s: String) -> Predicate {
        Predicate::Equals(s)
    }
}

/// `predicate::str::contains(..)` and the rest, spelled as the predicates crate spells them.
pub mod predicate {
    use super::Predicate;

    pub mod str {
        use super::Predicate;

        pub fn contains(s: impl Into<String>) -> Predicate {
            Predicate::Contains(s.into())
        }

        pub fn starts_with(s: impl Into<String>) -> Predicate {
            Predicate::StartsWith(s.into())
        }

        pub fn ends_with(s: impl Into<String>) -> Predicate {
            Predicate::EndsWith(s.into())
        }

        pub fn is_empty() -> Predicate {
            Predicate::IsEmpty
        }
    }

    pub fn function(f: impl Fn(&std::primitive::str) -> bool + 'static) -> Predicate {
        Predicate::Function(Box::new(f))
    }
}

pub mod prelude {
    pub use super::predicate;
}
