//! Records the git commit the binary was built from, for `rollsim bench`'s machine description.

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=ROLLSIM_GIT_COMMIT={commit}");
    // Rerun when HEAD moves; a path that does not exist (a tarball, no .git) would rerun this
    // script on every build, so only those that exist are watched.
    println!("cargo:rerun-if-changed=build.rs");
    for watched in [".git/HEAD", ".git/refs/heads", ".git/packed-refs"] {
        if Path::new(watched).exists() {
            println!("cargo:rerun-if-changed={watched}");
        }
    }
}
