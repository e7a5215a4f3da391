//! A real async client retrying real HTTP calls with herd-sim's own policy: a tokio runtime
//! runs a local HTTP/1.1 server (started here, on a loopback port the system picks) that
//! answers 503 to its first 12 requests, as during an outage, then 200; 20 calls go to it one
//! after another through a [`Guard`] holding the `aws-standard` preset's quota and full-jitter
//! backoff (its curve scaled from seconds to milliseconds so the example ends in about a
//! second) on the real clock, each attempt under a per-attempt timeout (`tokio::time::timeout`,
//! reported to the guard as [`Outcome::Timeout`]). It prints what each call did and the quota
//! left, and exits by itself: non-zero if the calls do not end as the quota's arithmetic says
//! (botocore's: 500 tokens, 5 a retry, a success giving back what its last retry took).
//!
//! The waits are `tokio::time::sleep`, so the runtime's one thread serves the server's
//! connections while a call backs off: the guard never blocks. tokio comes with the
//! `async-example` feature (the default build holds no async runtime):
//!
//! Run: cargo run --release --features async-example --example client

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use herd_sim::client::{Admit, Guard, Next, SystemClock};
use herd_sim::policy::control::{Budget, BudgetState, Controls, Outcome};
use herd_sim::policy::{Backoff, Hints, Policy, RetryChance, Strategy};
use herd_sim::time::SimDuration;

/// Requests answered 503 before the server recovers.
const OUTAGE: u32 = 12;
const CALLS: u32 = 20;
/// The per-attempt timeout: far above a loopback round trip, so no attempt here times out.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// Answers one connection: 503 while `served` is under [`OUTAGE`], then 200.
async fn answer(stream: TcpStream, served: Arc<AtomicU32>) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    // The request line, then the headers up to the blank line.
    if lines.next_line().await?.is_none() {
        return Ok(());
    }
    while let Some(header) = lines.next_line().await? {
        if header.is_empty() {
            break;
        }
    }
    let status = if served.fetch_add(1, Ordering::SeqCst) < OUTAGE {
        "503 Service Unavailable"
    } else {
        "200 OK"
    };
    let response = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    write.write_all(response.as_bytes()).await?;
    write.shutdown().await
}

/// Accepts connections for ever, each answered on a task of its own.
async fn serve(listener: TcpListener, served: Arc<AtomicU32>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(answer(stream, Arc::clone(&served)));
    }
}

/// One GET; the status code.
async fn get(port: u16) -> std::io::Result<u16> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let (read, mut write) = stream.into_split();
    write
        .write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await?;
    let status = BufReader::new(read)
        .lines()
        .next_line()
        .await?
        .unwrap_or_default();
    status
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {status:?}")))
}

/// One call through the guard: its result and the attempts it sent.
async fn call(guard: &mut Guard<SystemClock>, port: u16) -> (&'static str, u32) {
    let Some(mut call) = guard.start() else {
        return ("rejected by the breaker", 0);
    };
    let mut tries = 0;
    loop {
        match guard.admit(&mut call) {
            Admit::Go => {}
            Admit::Wait(d) => {
                tokio::time::sleep(d).await;
                continue;
            }
            Admit::Reject => return ("rejected locally", tries),
        }
        tries += 1;
        let outcome = match tokio::time::timeout(ATTEMPT_TIMEOUT, get(port)).await {
            Ok(Ok(200)) => {
                guard.succeeded(&mut call);
                return ("succeeded", tries);
            }
            Ok(Ok(_)) => Outcome::Error,
            Ok(Err(e)) => panic!("the local server answers: {e}"),
            Err(_) => Outcome::Timeout,
        };
        match guard.failed(&mut call, outcome, Hints::default()) {
            Next::RetryAfter(wait) => tokio::time::sleep(wait).await,
            Next::Fail => return ("failed", tries),
        }
    }
}

async fn run() -> (u32, u32, u64) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(serve(listener, Arc::new(AtomicU32::new(0))));

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
        let (result, tries) = call(&mut guard, port).await;
        attempts += tries;
        succeeded += u32::from(result == "succeeded");
        println!("call {call_number:>2}: {result} after {tries} attempt(s)");
    }
    server.abort();
    let BudgetState::Tokens(left) = guard.state().budget else {
        unreachable!("aws-standard keeps tokens")
    };
    (attempts, succeeded, left)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (attempts, succeeded, left) = runtime.block_on(run());
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
