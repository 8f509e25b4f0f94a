//! Memory for the sweeps and tables bound by memory rather than arithmetic: prefetching, and
//! large vectors backed by huge pages.

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
/// - a table read at random misses the TLB on nearly every lookup: training the standard
///   n-tuple network from 200,000 games on, one thread, went from 1.36-1.52 M moves/s to
///   1.59-1.80 M (three alternating runs each);
/// - every fresh page faults on its first touch: the bearoff sweeps allocate tens of MB per
///   table (the 15x6 one-sided build with gammons some 75 MB by the buffers' sizes, 19,000
///   pages of 4 KiB; the whole build faults 7,300 times with the advice). Median
///   of 100 builds, three runs each: 52.9-57.2 ms before, 45.0-47.7 ms with the advice; two-sided
///   6x6 (median of 15, two runs each) 356-359 ms before, 279-290 ms after.
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

/// Memory this process may still take: the kernel's MemAvailable, or less where a cgroup
/// limits the process.
pub fn memory_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let available = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())?
        * 1024;
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|m| m.trim().parse::<u64>().ok())
        .map(|limit| {
            let used = std::fs::read_to_string("/sys/fs/cgroup/memory.current")
                .ok()
                .and_then(|c| c.trim().parse::<u64>().ok())
                .unwrap_or(0);
            limit.saturating_sub(used)
        });
    Some(cgroup.map_or(available, |c| c.min(available)))
}

/// Refuses, before anything is allocated, a job of `items` that hold about `bytes_each` of
/// memory each when together they need more than the machine has: the message names the need
/// and what is available.
pub fn check_fits(what: &str, items: u64, bytes_each: u64) -> Result<(), String> {
    let need = items.saturating_mul(bytes_each);
    match memory_available() {
        Some(m) if need > m => Err(format!(
            "{what} would hold about {} in memory ({items} x {bytes_each} bytes), but {} is \
             available",
            human(need),
            human(m)
        )),
        _ => Ok(()),
    }
}
