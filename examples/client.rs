//! A real client retrying real HTTP calls with herd-sim's own policy: a local server (started
//! here, on a loopback port the system picks) answers 503 to its first 12 requests, as during
//! an outage, then 200; 20 calls go to it one after another through a [`Guard`] holding the
//! `aws-standard` preset's quota and full-jitter backoff (its curve scaled from seconds to
//! milliseconds so the example ends in about a second) on the real clock. It prints what each
//! call did and the quota left, and exits by itself: non-zero if the calls do not end as the
//! quota's arithmetic says (botocore's: 500 tokens, 5 a retry, a success giving back what its
//! last retry took).
//!
//! Run: cargo run --release --example client

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use herd_sim::client::{Admit, Guard, Next, SystemClock};
use herd_sim::policy::control::{Budget, BudgetState, Controls, Outcome};
use herd_sim::policy::{Backoff, Hints, Policy, RetryChance, Strategy};
use herd_sim::time::SimDuration;

/// Requests answered 503 before the server recovers.
const OUTAGE: u32 = 12;
const CALLS: u32 = 20;

/// Serves HTTP/1.1 on `listener` until `stop`: 503 for the first [`OUTAGE`] requests, then 200.
fn serve(listener: TcpListener, served: Arc<AtomicU32>) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let mut line = String::new();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        if reader.read_line(&mut line).is_err() || line.is_empty() {
            continue;
        }
        // Skip the headers.
        let mut header = String::new();
        while reader.read_line(&mut header).is_ok() && header != "\r\n" && !header.is_empty() {
            header.clear();
        }
        if line.starts_with("GET /stop") {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
            return;
        }
        let n = served.fetch_add(1, Ordering::SeqCst);
        let status = if n < OUTAGE {
            "503 Service Unavailable"
        } else {
            "200 OK"
        };
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        );
    }
}

/// One GET; the status code.
fn get(port: u16, path: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n"
    )?;
    let mut status = String::new();
    BufReader::new(stream).read_line(&mut status)?;
    status
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {status:?}")))
}

fn main() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicU32::new(0));
    let server = {
        let served = Arc::clone(&served);
        thread::spawn(move || serve(listener, served))
    };

    // The aws-standard preset (botocore standard mode): full jitter, 2 retries, base 1 s,
    // cap 20 s, the retry quota; the curve in milliseconds here, the quota as it is.
    let policy = Policy {
        strategy: Strategy::FullJitter,
        backoff: Backoff {
            base: SimDuration::from_millis(10),
            cap: SimDuration::from_millis(200),
            multiplier: 2.0,
            jitter_order: Default::default(),
        },
        max_retries: 2,
        retry_chance: RetryChance::ALWAYS,
    };
    let controls = Controls {
        budget: Budget::parse("aws-standard").unwrap(),
        ..Controls::default()
    };
    let mut guard = Guard::new(policy, controls, SystemClock::new(), 2015);
    let (mut attempts, mut succeeded) = (0u32, 0u32);
    for call_number in 1..=CALLS {
        let mut call = guard.start().expect("no breaker in this policy");
        let mut tries = 0;
        let result = loop {
            match guard.admit(&mut call) {
                Admit::Go => {}
                Admit::Wait(d) => {
                    thread::sleep(d);
                    continue;
                }
                Admit::Reject => break "rejected locally",
            }
            tries += 1;
            let status = get(port, "/").expect("the local server answers");
            if status == 200 {
                guard.succeeded(&mut call);
                break "succeeded";
            }
            match guard.failed(&mut call, Outcome::Error, Hints::default()) {
                Next::RetryAfter(wait) => thread::sleep(wait),
                Next::Fail => break "failed",
            }
        };
        attempts += tries;
        succeeded += u32::from(result == "succeeded");
        println!("call {call_number:>2}: {result} after {tries} attempt(s)");
    }
    let _ = get(port, "/stop");
    server.join().unwrap();
    let BudgetState::Tokens(left) = guard.state().budget else {
        unreachable!("aws-standard keeps tokens")
    };
    println!(
        "{CALLS} calls, {attempts} attempts, {succeeded} succeeded; retry quota left {left} of 500"
    );

    // By hand: the first 4 calls fail after 3 attempts each (12 answers of 503, 2 retries of
    // 5 tokens each: 40 taken); the 5th succeeds at once and gives back 1 (it never
    // retried): 461; the 15 after it succeed at once and give back 15: 476.
    let expected = (4 * 3 + 16, 16, 476);
    if (attempts, succeeded, left) != expected {
        eprintln!(
            "error: expected {} attempts, {} successes and {} tokens left",
            expected.0, expected.1, expected.2
        );
        std::process::exit(1);
    }
}
