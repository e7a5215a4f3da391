//! `herd-sim report`: the shipped report file's committed report is what a fresh run writes
//! (its `--check` passes, as a team's CI runs it), the bytes do not depend on `--threads`, a
//! band broken fails with the reviewer's line and exit 1, a changed figure inside its band is
//! said without failing, and bad input is one `error:` line with exit 2.

use std::fs;
use std::path::Path;

use crate::{herd_sim, herd_sim_ok};

const SHIPPED: &str = "configs/policy-report.toml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_committed_report_is_a_fresh_runs_and_its_check_passes() {
    let file = root().join(SHIPPED);
    let file = file.to_str().unwrap();
    let fresh = herd_sim()
        .current_dir(root())
        .args(["report", SHIPPED, "--threads", "1"])
        .output()
        .unwrap();
    assert!(
        fresh.status.success(),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    let committed = fs::read(root().join("configs/policy-report.md")).unwrap();
    assert!(
        fresh.stdout == committed,
        "configs/policy-report.md is not what `herd-sim report {SHIPPED}` writes: write it again"
    );
    let two = herd_sim()
        .current_dir(root())
        .args(["report", SHIPPED, "--threads", "2"])
        .output()
        .unwrap();
    assert_eq!(fresh.stdout, two.stdout, "1 and 2 threads");
    // The report does not depend on where it runs from or how its path is typed: from the
    // report's own folder as `./policy-report.toml`, and from elsewhere by absolute path.
    let elsewhere = tempfile::tempdir().unwrap();
    for (dir, path) in [
        (root().join("configs"), "./policy-report.toml"),
        (elsewhere.path().to_path_buf(), file),
    ] {
        let again = herd_sim()
            .current_dir(&dir)
            .args(["report", path, "--threads", "2"])
            .output()
            .unwrap();
        assert!(again.status.success(), "{path}");
        assert!(
            again.stdout == fresh.stdout,
            "`herd-sim report {path}` run in {} writes other bytes",
            dir.display()
        );
        let check = herd_sim()
            .current_dir(&dir)
            .args(["report", path, "--check"])
            .output()
            .unwrap();
        let said = String::from_utf8(check.stdout).unwrap();
        assert!(check.status.success(), "{path}: {said}");
        assert!(said.ends_with("byte for byte\n"), "{path}: {said}");
    }
    let check = herd_sim()
        .current_dir(root())
        .args(["report", SHIPPED, "--check"])
        .output()
        .unwrap();
    let said = String::from_utf8(check.stdout).unwrap();
    assert!(
        check.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(said.ends_with("byte for byte\n"), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
}

/// A report file of one scenario and policy in `dir`, with `bands` appended.
fn write_report(dir: &Path, bands: &str) -> String {
    let path = dir.join("r.toml");
    fs::write(
        &path,
        format!(
            "title = \"t\"\nseeds = 2\n[[scenarios]]\nid = \"down\"\nclients = 100\n\
             [[policies]]\nid = \"exp\"\nstrategy = \"exponential\"\n{bands}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_broken_band_fails_with_the_reviewers_line_and_a_change_inside_is_said() {
    // 100 exponential clients against a down server: every retry of a wave lands in one
    // 100 ms window, so the peak is exactly 100, the same for every seed.
    let dir = tempfile::tempdir().unwrap();
    let file = write_report(
        dir.path(),
        "[[bands]]\nmetric = \"peak\"\nband = [90, 110]\n",
    );
    let md = dir.path().join("r.md");
    let out = herd_sim_ok(&["report", &file, "--out", md.to_str().unwrap()]);
    assert!(out.is_empty());
    let text = fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("| down | exp | peak | 100.00 | 100.00 | 100.00 | 90–110 | ok |"),
        "{text}"
    );
    // The committed report said 95: a change inside the band is said, exit 0.
    fs::write(&md, text.replace("| peak | 100.00 |", "| peak | 95.00 |")).unwrap();
    let check = herd_sim()
        .args(["report", &file, "--check"])
        .output()
        .unwrap();
    let said = String::from_utf8(check.stdout).unwrap();
    assert!(check.status.success(), "{said}");
    assert_eq!(
        said.lines().next(),
        Some("down / exp: peak 95.00 → 100.00, band 90–110: ok")
    );
    // The band moves so that 100 is out: exit 1, the line says OUT.
    let file = write_report(
        dir.path(),
        "[[bands]]\nmetric = \"peak\"\nband = [101, 200]\n",
    );
    let check = herd_sim()
        .args(["report", &file, "--check"])
        .output()
        .unwrap();
    let said = String::from_utf8(check.stdout).unwrap();
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert_eq!(
        said.lines().next(),
        Some("down / exp: peak 95.00 → 100.00, band 101–200: OUT")
    );
    let stderr = String::from_utf8(check.stderr).unwrap();
    assert_eq!(stderr, "error: 1 of 1 figures out of their bands\n");
}

#[test]
fn bad_report_input_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    for (bands, named) in [
        (
            "[[bands]]\nmetric = \"goodness\"\nband = [0, 1]\n",
            "bands[0].metric",
        ),
        (
            "[[bands]]\nmetric = \"peak\"\nband = [10, 1]\n",
            "bands[0].band",
        ),
        (
            "[[bands]]\nmetric = \"peak\"\nband = [1, 2]\ntolerance = 1\n",
            "bands[0]",
        ),
        (
            "[[bands]]\nmetric = \"peak\"\npolicy = \"nope\"\nband = [1, 2]\n",
            "bands[0].policy",
        ),
        ("[[bands]]\nmetric = \"peak\"\nbend = [1, 2]\n", "bend"),
    ] {
        let file = write_report(dir.path(), bands);
        let out = herd_sim().args(["report", &file]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bands}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(named),
            "{named}: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    // --check without a committed report names the flag.
    let file = write_report(
        dir.path(),
        "[[bands]]\nmetric = \"peak\"\nband = [0, 1000]\n",
    );
    let out = herd_sim()
        .args(["report", &file, "--check"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--committed"), "{stderr}");
}
