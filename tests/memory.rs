//! Memory planning inside limits the machine does not show: under `ulimit -v` (RLIMIT_AS) and
//! `ulimit -d` (RLIMIT_DATA), and in a memory cgroup where the test can make one. Every job
//! planned is refused with exit 2, naming the limit it saw; none is killed (137) or aborts
//! (134), and none leaves a partial file. Linux: the limits are read from `/proc` and
//! `/sys/fs/cgroup`.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use rollsim_core::memory::{CgroupVersion, memory_cgroups};

/// `rollsim ARGS` run by a shell that first runs `setup` (a `ulimit`, or joining a cgroup),
/// then execs the binary in its place.
fn rollsim_after(setup: &str, args: &[&str]) -> Output {
    let bin = env!("CARGO_BIN_EXE_rollsim");
    let probe = rollsim_command();
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("{setup} && exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args);
    for (k, v) in probe.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.output().expect("run sh")
}

/// The refusal of a job too big for the limit: exit 2, its need in memory, no panic, no
/// abort. Returns the message.
fn assert_refused(what: &str, out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{what}: {:?}: {err}",
        out.status
    );
    assert!(err.contains("of memory"), "{what}: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{what}: {err}"
    );
    println!("{what}: {}", err.trim());
    err
}

/// A gnubg two-sided file's header before a hole of `bytes`: rollsim reads such files whole,
/// so the read is planned at twice the file's size.
fn sparse_gnubg(path: &Path, bytes: u64) {
    let mut head = b"gnubg-TS-06-04-0".to_vec();
    head.resize(39, b'x');
    head.push(b'\n');
    std::fs::write(path, &head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(bytes)
        .unwrap();
}

/// The jobs planned against the limit, each as (name, arguments, the file it must not leave),
/// with their files in `dir`: each needs more than 1.5 GB, but standard training (268 MB).
fn jobs(dir: &TempDir) -> Vec<(&'static str, Vec<String>, Option<PathBuf>)> {
    sparse_gnubg(&dir.path("big.bd"), 3_000_000_000);
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (
            "two-sided 13x6 build",
            s(&[
                "bearoff",
                "build",
                "--two-sided",
                "--points",
                "6",
                "--checkers",
                "13",
                "--backend",
                "cpu",
                "--threads",
                "1",
                "--out",
                &dir.file("t13.rsb"),
            ]),
            Some(dir.path("t13.rsb")),
        ),
        (
            "7-8 pattern databases",
            s(&[
                "puzzle",
                "solve",
                "--board",
                "1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15",
                "--method",
                "optimal",
                "--threads",
                "1",
                "--pdb-dir",
                &dir.file("pdb"),
            ]),
            Some(dir.path("pdb/pdb-4x4-1-2-3-4-5-6-7-8.bin")),
        ),
        (
            "standard training",
            s(&[
                "2048",
                "train",
                "--games",
                "1",
                "--threads",
                "1",
                "--out",
                &dir.file("std.nt"),
            ]),
            Some(dir.path("std.nt")),
        ),
        (
            "bench rollouts --roots 4294967295",
            s(&[
                "bench",
                "--backend",
                "cpu",
                "--threads",
                "1",
                "--only",
                "rollouts",
                "--roots",
                "4294967295",
            ]),
            None,
        ),
        (
            "bench mc-games --roots 4294967295",
            s(&[
                "bench",
                "--backend",
                "cpu",
                "--threads",
                "1",
                "--only",
                "mc-games",
                "--roots",
                "4294967295",
            ]),
            None,
        ),
        (
            "query of a 3 GB gnubg file",
            s(&[
                "bearoff",
                "query",
                &dir.file("big.bd"),
                "1,0,0,0,0,0",
                "1,0,0,0,0,0",
            ]),
            None,
        ),
    ]
}

/// `ulimit -v` (KiB): the binary maps about 15-150 MB at its start (measured, one thread), far
/// below each limit; the standard network trains with TC state here (805 MB), which fits no
/// limit of 700 MB.
#[test]
fn jobs_under_ulimit_v_are_refused_naming_it() {
    let dir = TempDir::new("ulimit-v");
    for (job, mut args, file) in jobs(&dir) {
        let kib = match job {
            "standard training" => {
                args.push("--tc".into());
                700_000
            }
            "7-8 pattern databases" => 1_200_000,
            _ => 1_500_000,
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = rollsim_after(&format!("ulimit -v {kib}"), &args);
        let err = assert_refused(job, &out);
        assert!(err.contains("ulimit -v: RLIMIT_AS"), "{job}: {err}");
        assert!(file.is_none_or(|f| !f.exists()), "{job} left a file");
    }
}

/// `ulimit -d` (KiB), which counts only data (the binary starts with about 6 MB): 200 MB is
/// less than the standard network's weights (268 MB).
#[test]
fn jobs_under_ulimit_d_are_refused_naming_it() {
    let dir = TempDir::new("ulimit-d");
    for (job, args, file) in jobs(&dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = rollsim_after("ulimit -d 200000", &args);
        let err = assert_refused(job, &out);
        assert!(err.contains("ulimit -d: RLIMIT_DATA"), "{job}: {err}");
        assert!(file.is_none_or(|f| !f.exists()), "{job} left a file");
    }
}

/// A memory cgroup made for one test below this process's own, removed when dropped (its
/// processes have exited by then).
struct Cgroup {
    dir: PathBuf,
    /// Its path as `/proc/self/cgroup` names it inside.
    path: String,
    /// The file a process writes its pid to, to join.
    procs: PathBuf,
}

impl Cgroup {
    /// A child of this process's memory cgroup (v1, or v2 where its memory controller can be
    /// enabled for children) limited to `limit` bytes, or why there cannot be one.
    fn new(limit: u64) -> Result<Cgroup, String> {
        let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
        let dirs = memory_cgroups(&read("/proc/self/cgroup")?, &read("/proc/self/mountinfo")?);
        let name = format!("rollsim-test-{}", std::process::id());
        let mut why = vec!["no memory cgroup hierarchy mounted".to_string()];
        for d in dirs {
            let dir = d.dir.join(&name);
            let path = format!("{}/{name}", d.path.trim_end_matches('/'));
            let limit_file = match d.version {
                CgroupVersion::V1 => "memory.limit_in_bytes",
                CgroupVersion::V2 => "memory.max",
            };
            if let Err(e) = std::fs::create_dir(&dir) {
                why.push(format!("cannot create {}: {e}", dir.display()));
                continue;
            }
            let cgroup = Cgroup {
                procs: dir.join("cgroup.procs"),
                dir,
                path,
            };
            if d.version == CgroupVersion::V2 && !cgroup.dir.join(limit_file).exists() {
                // The controller must be enabled for the children of the group, which v2
                // allows only of a group with no processes of its own (or the root).
                let control = d.dir.join("cgroup.subtree_control");
                if let Err(e) = std::fs::write(&control, "+memory") {
                    why.push(format!(
                        "cannot enable memory in {}: {e}",
                        control.display()
                    ));
                    continue;
                }
            }
            match std::fs::write(cgroup.dir.join(limit_file), limit.to_string()) {
                Ok(()) => return Ok(cgroup),
                Err(e) => why.push(format!("cannot set {limit_file} in {}: {e}", d.path)),
            }
        }
        Err(why.join("; "))
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // A cgroup is removed once its processes are gone, which can lag their exit a moment.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("could not remove the test cgroup {}", self.dir.display());
    }
}

/// In a memory cgroup of 200 MiB, less than the standard network's weights (the limit of a child of this process's own group, where it
/// can make one: root, or a delegated v2 subtree), each job is refused naming the cgroup,
/// though the machine has more. Elsewhere the test says it skipped and why, unless
/// `ROLLSIM_REQUIRE_CGROUP=1`.
#[test]
fn jobs_in_a_memory_cgroup_are_refused_naming_it() {
    let cgroup = match Cgroup::new(200 << 20) {
        Ok(c) => c,
        Err(why) if std::env::var("ROLLSIM_REQUIRE_CGROUP").is_ok_and(|v| v == "1") => {
            panic!("ROLLSIM_REQUIRE_CGROUP=1 but no memory cgroup can be made: {why}")
        }
        Err(why) => {
            println!("skipped: no memory cgroup can be made here: {why}");
            return;
        }
    };
    let dir = TempDir::new("cgroup");
    let join = format!("echo $$ > '{}'", cgroup.procs.display());
    let named = format!("the memory cgroup {}:", cgroup.path);
    for (job, args, file) in jobs(&dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = rollsim_after(&join, &args);
        let err = assert_refused(job, &out);
        assert!(err.contains(&named), "{job}: {err}");
        assert!(file.is_none_or(|f| !f.exists()), "{job} left a file");
    }
}
