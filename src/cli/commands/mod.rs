//! The commands that run searches over many runs (`sweep`, `merge`, `boundary`, `lint`,
//! `tune`): each checks its input and opens every output before any run, then hands the work
//! to the library with a progress bar.

mod boundary;
mod lint;
mod sweep;
mod tune;

pub use boundary::boundary;
pub use lint::{lint, LINT_IGNORES};
pub use sweep::{merge, sweep};
pub use tune::tune;
