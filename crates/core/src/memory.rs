//! Memory for the sweeps and tables bound by memory rather than arithmetic: prefetching, large
//! vectors backed by huge pages, and the memory this process may still take.

use std::path::{Path, PathBuf};

/// Asks the CPU to start loading `x`'s cache line: for sweeps that know the addresses they will
/// read before reading them, and are bound by memory latency.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint with no effect on memory or program state; the address is
    // that of a live reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch(x as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// [`prefetch`] of `items[i]`, without a bounds check: a prefetch of an address outside the
/// slice loads a line for nothing, and the hot loops that prefetch need not pay for a check.
#[inline(always)]
pub fn prefetch_at<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint with no effect on memory or program state, and faults on no
    // address; the pointer is only formed (wrapping), never read.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            items.as_ptr().wrapping_add(i) as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}

/// An empty vector with room for `n` items, its memory advised to be backed by huge pages
/// (Linux transparent huge pages in `madvise` mode; elsewhere, or if the kernel declines, plain
/// pages). Two costs of 4 KiB pages fall away:
/// - a table read at random (the n-tuple weights) misses the TLB on nearly every lookup;
/// - every fresh page faults on its first touch: the bearoff sweeps allocate tens of MB per
///   table (the 15x6 one-sided build some 19,000 pages of 4 KiB).
pub fn huge_vec<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + n * std::mem::size_of::<T>();
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: madvise only advises the kernel about pages of our own, not yet touched
            // allocation (whole huge pages inside it); it does not change their contents or
            // validity. Failure (no THP support) is harmless and ignored.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// `n` copies of `value` in a [`huge_vec`].
pub fn huge_filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = huge_vec(n);
    v.resize(n, value);
    v
}

/// The items of `iter` (exactly `n` of them, or fewer) in a [`huge_vec`].
pub fn huge_collect<T>(n: usize, iter: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v = huge_vec(n);
    v.extend(iter);
    v
}

/// Serves every allocation of 1 MiB or more with its own mapping, returned to the system when
/// freed. glibc otherwise raises that threshold to each large block freed (up to 32 MiB) and
/// serves the next ones from its heap, whose freed holes stay resident: the one-sided 15x10
/// build, whose level buffers come and go, peaked at 228 MB that way and at 200 MB with this.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Bytes shown to a person: `12.3 GB`, `1.5 EB`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    for (scale, unit) in [(1e18, "EB"), (1e15, "PB"), (1e12, "TB"), (1e9, "GB")] {
        if b >= scale {
            return format!("{:.1} {unit}", b / scale);
        }
    }
    if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} kB", b / 1e3)
    }
}

/// The memory this process may still take, and what bounds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes this process may still allocate.
    pub available: u64,
    /// What bounds it, for messages: "the machine's available memory", "the memory cgroup
    /// /a/b: limit 1.5 GB, 300 MB in use", "ulimit -v: RLIMIT_AS 2.0 GB, 150 MB of it mapped".
    pub bound: String,
}

impl std::fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is available ({})", human(self.available), self.bound)
    }
}

/// Memory this process may still take: the least of the machine's available memory, the
/// headroom under every memory limit on this process's cgroup path (v1 and v2, every ancestor:
/// Slurm, systemd and Kubernetes set theirs on nested groups), and the headroom under
/// `ulimit -v` (RLIMIT_AS) and `ulimit -d` (RLIMIT_DATA). None where none of them can be read.
pub fn memory_limit() -> Option<MemoryLimit> {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let mut bounds = Vec::new();
    if let Some(a) = read(Path::new("/proc/meminfo")).and_then(|m| meminfo_available(&m)) {
        bounds.push(MemoryLimit {
            available: a,
            bound: "the machine's available memory".into(),
        });
    }
    if let (Some(cgroups), Some(mounts)) = (
        read(Path::new("/proc/self/cgroup")),
        read(Path::new("/proc/self/mountinfo")),
    ) {
        bounds.extend(cgroup_limits(&memory_cgroups(&cgroups, &mounts), &read));
    }
    let status = read(Path::new("/proc/self/status")).unwrap_or_default();
    bounds.extend(rlimit_bounds(&status, rlimit));
    tightest(bounds)
}

/// The bytes of [`memory_limit`].
pub fn memory_available() -> Option<u64> {
    memory_limit().map(|l| l.available)
}

/// Refuses, before anything is allocated, a job of `items` that hold about `bytes_each` of
/// memory each when together they need more than this process may take: the message names
/// the need, what is available and what bounds it.
pub fn check_fits(what: &str, items: u64, bytes_each: u64) -> Result<(), String> {
    let need = items.saturating_mul(bytes_each);
    match refusal(need, memory_limit().as_ref()) {
        Some(l) => Err(format!(
            "{what} would hold about {} in memory ({items} x {bytes_each} bytes), but {l}",
            human(need)
        )),
        None => Ok(()),
    }
}

/// Refuses, before anything is allocated, a job (`what`) that needs about `need` bytes of
/// memory when this process may take less; the message names the need and the limit seen.
pub fn check_memory(what: &str, need: u64) -> Result<(), String> {
    match refusal(need, memory_limit().as_ref()) {
        Some(l) => Err(format!(
            "{what} needs about {} of memory, but {l}",
            human(need)
        )),
        None => Ok(()),
    }
}

/// The limit a job of `need` bytes does not fit under, if it does not (unknown: it fits).
fn refusal(need: u64, limit: Option<&MemoryLimit>) -> Option<&MemoryLimit> {
    limit.filter(|l| need > l.available)
}

/// The limit with the least headroom.
fn tightest(bounds: Vec<MemoryLimit>) -> Option<MemoryLimit> {
    bounds.into_iter().min_by_key(|l| l.available)
}

/// MemAvailable of `/proc/meminfo`, in bytes.
fn meminfo_available(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemAvailable:")
}

/// A `key  123 kB` line of `/proc/meminfo` or `/proc/self/status`, in bytes.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|k| k.saturating_mul(1024))
}

/// A cgroup memory controller's version: v1 (`memory.limit_in_bytes`) or v2 (`memory.max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

/// A memory cgroup this process is in: its path as `/proc/self/cgroup` names it, and where
/// the hierarchy's mount shows that group and the mount's own root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupDir {
    pub version: CgroupVersion,
    /// The group's path in its hierarchy, `/process_api/x`.
    pub path: String,
    /// The group's directory: the mount point joined with the path below the mount's root.
    pub dir: PathBuf,
    /// The mount point: the highest ancestor of `dir` this process can read.
    pub mount_point: PathBuf,
}

/// The memory cgroups of this process (the v1 memory hierarchy's and the v2 hierarchy's,
/// which limits memory only where its memory controller is enabled), found from the texts of
/// `/proc/self/cgroup` and `/proc/self/mountinfo`.
pub fn memory_cgroups(proc_cgroup: &str, mountinfo: &str) -> Vec<CgroupDir> {
    let mounts: Vec<Mount> = mountinfo.lines().filter_map(Mount::parse).collect();
    let mut found = Vec::new();
    for line in proc_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let version = if id == "0" && controllers.is_empty() {
            CgroupVersion::V2
        } else if controllers.split(',').any(|c| c == "memory") {
            CgroupVersion::V1
        } else {
            continue;
        };
        let mount = mounts.iter().find_map(|m| {
            let ours = match version {
                CgroupVersion::V1 => {
                    m.fstype == "cgroup" && m.super_options.split(',').any(|o| o == "memory")
                }
                CgroupVersion::V2 => m.fstype == "cgroup2",
            };
            let below = below_root(path, &m.root)?;
            ours.then_some((m, below))
        });
        if let Some((m, below)) = mount {
            found.push(CgroupDir {
                version,
                path: path.to_string(),
                dir: m.point.join(below),
                mount_point: m.point.clone(),
            });
        }
    }
    found
}

/// `path` relative to a mount's `root` (the mount shows only the groups below its root).
fn below_root<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(root.trim_end_matches('/'))?;
    match rest.strip_prefix('/') {
        Some(r) => Some(r),
        None => rest.is_empty().then_some(rest),
    }
}

/// The fields of a `/proc/self/mountinfo` line that say where a cgroup hierarchy is.
struct Mount {
    /// The directory of the file system mounted here (for cgroups, the group shown at the
    /// mount point).
    root: String,
    point: PathBuf,
    fstype: String,
    super_options: String,
}

impl Mount {
    /// `36 25 0:32 / /sys/fs/cgroup/memory rw,relatime shared:15 - cgroup cgroup rw,memory`:
    /// the root is the fourth field, the mount point the fifth, and after the `-` come the
    /// file system type, the source and the super block's options.
    fn parse(line: &str) -> Option<Mount> {
        let (head, tail) = line.split_once(" - ")?;
        let mut h = head.split(' ');
        let root = unescape(h.nth(3)?);
        let point = PathBuf::from(unescape(h.next()?));
        let mut t = tail.split(' ');
        let fstype = t.next()?.to_string();
        let super_options = t.nth(1).unwrap_or("").to_string();
        Some(Mount {
            root,
            point,
            fstype,
            super_options,
        })
    }
}

/// A mountinfo field with its octal escapes (`\040` a space) decoded.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push(d.iter().fold(0u8, |v, c| v.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The headroom under every memory limit on the path of each cgroup in `dirs`, from the group
/// up to its mount's root, with `read` giving a file's text. A v1 ancestor whose
/// `memory.use_hierarchy` is 0 does not count its children's memory: the walk stops there.
fn cgroup_limits(dirs: &[CgroupDir], read: &dyn Fn(&Path) -> Option<String>) -> Vec<MemoryLimit> {
    let mut out = Vec::new();
    for c in dirs {
        let (limit_file, usage_file, inactive_key) = match c.version {
            CgroupVersion::V1 => (
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "total_inactive_file",
            ),
            CgroupVersion::V2 => ("memory.max", "memory.current", "inactive_file"),
        };
        let (mut dir, mut path) = (c.dir.as_path(), c.path.as_str());
        loop {
            let file = |name: &str| read(&dir.join(name));
            if let Some(limit) = file(limit_file).and_then(|t| parse_limit(&t)) {
                let usage = file(usage_file).and_then(|t| t.trim().parse::<u64>().ok());
                let inactive = file("memory.stat").and_then(|s| stat_field(&s, inactive_key));
                // Inactive file pages (the page cache of files read or written, not used since)
                // are reclaimed before the limit is enforced.
                let used = usage.unwrap_or(0).saturating_sub(inactive.unwrap_or(0));
                out.push(MemoryLimit {
                    available: limit.saturating_sub(used),
                    bound: format!(
                        "the memory cgroup {}: limit {}, {} in use",
                        if path.is_empty() { "/" } else { path },
                        human(limit),
                        human(used)
                    ),
                });
            }
            if dir == c.mount_point.as_path() {
                break;
            }
            let (Some(up), Some((up_path, _))) = (dir.parent(), path.rsplit_once('/')) else {
                break;
            };
            if c.version == CgroupVersion::V1
                && read(&up.join("memory.use_hierarchy")).is_some_and(|t| t.trim() == "0")
            {
                break;
            }
            (dir, path) = (up, up_path);
        }
    }
    out
}

/// A cgroup memory limit: bytes, or None for v2's `max`.
fn parse_limit(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// A `key value` line of a cgroup's `memory.stat`.
fn stat_field(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

/// An address-space resource limit of this process: its soft limit, None where unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rlimit {
    /// `ulimit -v`, on every mapping.
    As,
    /// `ulimit -d`, on private writable mappings (the heap and large allocations).
    Data,
}

/// The soft limit of `which`, None where unlimited (or not Unix).
fn rlimit(which: Rlimit) -> Option<u64> {
    #[cfg(unix)]
    {
        let resource = match which {
            Rlimit::As => libc::RLIMIT_AS,
            Rlimit::Data => libc::RLIMIT_DATA,
        };
        // SAFETY: getrlimit fills the struct we pass.
        let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrlimit(resource, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        Some(r.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    {
        let _ = which;
        None
    }
}

/// The headroom under RLIMIT_AS (less the address space mapped, VmSize of `status`, the text
/// of `/proc/self/status`) and RLIMIT_DATA (less VmData), with `limit` giving each soft limit.
fn rlimit_bounds(status: &str, limit: impl Fn(Rlimit) -> Option<u64>) -> Vec<MemoryLimit> {
    [
        (
            Rlimit::As,
            "VmSize:",
            "ulimit -v",
            "RLIMIT_AS",
            "of it mapped",
        ),
        (
            Rlimit::Data,
            "VmData:",
            "ulimit -d",
            "RLIMIT_DATA",
            "of it in use",
        ),
    ]
    .into_iter()
    .filter_map(|(which, key, flag, name, used_as)| {
        let cap = limit(which)?;
        let used = kib_field(status, key).unwrap_or(0);
        Some(MemoryLimit {
            available: cap.saturating_sub(used),
            bound: format!("{flag}: {name} {}, {} {used_as}", human(cap), human(used)),
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// This machine's kind: cgroup v1 for memory, a cgroup2 beside it without the controller.
    const HYBRID_CGROUP: &str = "9:name=systemd:/\n4:memory:/process_api/ab12\n1:cpu:/\n0::/\n";
    const HYBRID_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    fn fs(files: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> + use<> {
        let m: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        move |p: &Path| m.get(p).cloned()
    }

    #[test]
    fn meminfo_and_status_are_read_in_kib() {
        let meminfo = "MemTotal:       24000000 kB\nMemFree: 100 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(meminfo_available(meminfo), Some(23_000_000 * 1024));
        assert_eq!(meminfo_available("MemTotal: 1 kB\n"), None);
        let status = "Name:\trollsim\nVmPeak:\t  500 kB\nVmSize:\t  149472 kB\nVmData:\t 6584 kB\n";
        assert_eq!(kib_field(status, "VmSize:"), Some(149_472 * 1024));
        assert_eq!(kib_field(status, "VmData:"), Some(6584 * 1024));
    }

    #[test]
    fn cgroups_are_found_through_mountinfo() {
        let found = memory_cgroups(HYBRID_CGROUP, HYBRID_MOUNTS);
        assert_eq!(
            found,
            vec![
                CgroupDir {
                    version: CgroupVersion::V1,
                    path: "/process_api/ab12".into(),
                    dir: "/sys/fs/cgroup/memory/process_api/ab12".into(),
                    mount_point: "/sys/fs/cgroup/memory".into(),
                },
                CgroupDir {
                    version: CgroupVersion::V2,
                    path: "/".into(),
                    dir: "/sys/fs/cgroup/unified".into(),
                    mount_point: "/sys/fs/cgroup/unified".into(),
                },
            ]
        );
        // A container whose mount shows only its own group, at a mount point with a space.
        let mounts = "50 40 0:40 /docker/c1 /mnt/cg\\040v2 ro - cgroup2 cgroup2 rw\n";
        let found = memory_cgroups("0::/docker/c1/job\n", mounts);
        assert_eq!(found[0].dir, PathBuf::from("/mnt/cg v2/job"));
        assert_eq!(found[0].mount_point, PathBuf::from("/mnt/cg v2"));
        // A group outside the mount's root is not shown there.
        assert!(memory_cgroups("0::/other\n", mounts).is_empty());
        assert!(memory_cgroups("0::/docker/c10\n", mounts).is_empty());
        // No memory hierarchy mounted: nothing to read.
        assert!(memory_cgroups(HYBRID_CGROUP, "").is_empty());
    }

    #[test]
    fn every_ancestor_limit_counts_and_the_tightest_names_itself() {
        let dirs = memory_cgroups(HYBRID_CGROUP, HYBRID_MOUNTS);
        let unlimited = "9223372036854771712";
        let read = fs(&[
            // The process's own group: no limit of its own.
            (
                "/sys/fs/cgroup/memory/process_api/ab12/memory.limit_in_bytes",
                unlimited,
            ),
            (
                "/sys/fs/cgroup/memory/process_api/ab12/memory.usage_in_bytes",
                "200000000",
            ),
            // Its parent: 1.5 GB, 700 MB in use of which 200 MB inactive page cache.
            (
                "/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "1500000000",
            ),
            (
                "/sys/fs/cgroup/memory/process_api/memory.usage_in_bytes",
                "700000000\n",
            ),
            (
                "/sys/fs/cgroup/memory/process_api/memory.stat",
                "cache 5\ninactive_file 1\ntotal_inactive_file 200000000\n",
            ),
            (
                "/sys/fs/cgroup/memory/process_api/memory.use_hierarchy",
                "1",
            ),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", unlimited),
            ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "9000000000"),
            ("/sys/fs/cgroup/memory/memory.use_hierarchy", "1"),
        ]);
        let limits = cgroup_limits(&dirs, &read);
        assert_eq!(limits.len(), 3);
        let t = tightest(limits).unwrap();
        assert_eq!(t.available, 1_000_000_000);
        assert_eq!(
            t.bound,
            "the memory cgroup /process_api: limit 1.5 GB, 500 MB in use"
        );
        // A parent that does not count its children's memory (v1 use_hierarchy 0) is left out.
        let flat = fs(&[
            (
                "/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "1500000000",
            ),
            (
                "/sys/fs/cgroup/memory/process_api/memory.use_hierarchy",
                "0",
            ),
        ]);
        assert!(cgroup_limits(&dirs, &flat).is_empty());
    }

    #[test]
    fn nested_v2_limits_count_and_max_is_none() {
        let mounts = "30 20 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let dirs = memory_cgroups("0::/system.slice/slurmstepd.scope/job_7/step_0\n", mounts);
        let base = "/sys/fs/cgroup/system.slice/slurmstepd.scope";
        let read = fs(&[
            (&format!("{base}/job_7/step_0/memory.max"), "max\n"),
            (&format!("{base}/job_7/step_0/memory.current"), "10000000"),
            (&format!("{base}/job_7/memory.max"), "300000000\n"),
            (&format!("{base}/job_7/memory.current"), "50000000\n"),
            (
                &format!("{base}/job_7/memory.stat"),
                "anon 1\ninactive_file 10000000\n",
            ),
            (&format!("{base}/memory.max"), "max"),
        ]);
        let limits = cgroup_limits(&dirs, &read);
        assert_eq!(
            limits,
            vec![MemoryLimit {
                available: 260_000_000,
                bound: "the memory cgroup /system.slice/slurmstepd.scope/job_7: limit 300 MB, \
                        40 MB in use"
                    .into(),
            }]
        );
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("1073741824\n"), Some(1 << 30));
    }

    #[test]
    fn rlimits_leave_what_is_not_yet_mapped() {
        let status = "VmSize:\t  150000 kB\nVmData:\t 10000 kB\n";
        let limits = rlimit_bounds(status, |r| match r {
            Rlimit::As => Some(700_000_000),
            Rlimit::Data => None,
        });
        assert_eq!(
            limits,
            vec![MemoryLimit {
                available: 700_000_000 - 150_000 * 1024,
                bound: "ulimit -v: RLIMIT_AS 700 MB, 154 MB of it mapped".into(),
            }]
        );
        let limits = rlimit_bounds(status, |r| (r == Rlimit::Data).then_some(200_000_000));
        assert_eq!(limits[0].available, 200_000_000 - 10_000 * 1024);
        assert!(limits[0].bound.starts_with("ulimit -d: RLIMIT_DATA 200 MB"));
        assert!(rlimit_bounds(status, |_| None).is_empty());
    }

    #[test]
    fn a_refusal_names_the_limit() {
        let l = MemoryLimit {
            available: 500_000_000,
            bound: "ulimit -v: RLIMIT_AS 700 MB, 200 MB of it mapped".into(),
        };
        assert_eq!(refusal(2_000_000_000, Some(&l)), Some(&l));
        assert_eq!(
            format!("the job needs about 2.0 GB of memory, but {l}"),
            "the job needs about 2.0 GB of memory, but 500 MB is available (ulimit -v: \
             RLIMIT_AS 700 MB, 200 MB of it mapped)"
        );
        assert_eq!(refusal(500_000_000, Some(&l)), None);
        assert_eq!(refusal(u64::MAX, None), None);
    }

    #[test]
    fn this_process_has_a_limit_no_larger_than_the_machine() {
        let Some(machine) = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| meminfo_available(&m))
        else {
            return;
        };
        let l = memory_limit().expect("a limit where /proc/meminfo is readable");
        // Memory comes and goes between the two reads: allow for it.
        assert!(l.available <= machine + (1 << 30), "{l}");
        assert!(!l.bound.is_empty());
    }
}
