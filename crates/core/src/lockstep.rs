//! A team of threads in lock step: every member runs the same body, and [`Team::sync`] waits
//! for all of them at a barrier where they spin rather than sleep. It is for sweeps of many
//! short phases, where waking a sleeping thread for every phase costs more than the phase
//! (a rayon worker parked between levels took about 100 us to wake on a KVM guest).
//!
//! The members are threads of their own, spawned for the team, not a pool's: a team that
//! borrowed a pool's threads could wait forever for a thread that waits itself for another
//! team (two teams started at once from the same pool).
//!
//! A team with a member for each CPU the process may run on (rayon's default) pins each member
//! to a CPU of its own for the team's life (the leader gets its own affinity back at the end).
//! Two spinning members on one CPU take turns, and the scheduler sometimes placed a new member
//! beside the leader for tens of milliseconds (`results/bearoff/one-sided-colocation.txt`). A
//! smaller team is not pinned: the teams of several processes would all be pinned to the same
//! first CPUs.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a member spins at a barrier before it yields its CPU between checks: long
/// enough for the phases of a sweep, short enough not to starve a machine with more threads
/// than cores.
const SPIN: Duration = Duration::from_micros(500);

/// One member's view of its team.
pub struct Team<'a> {
    index: usize,
    shared: &'a Shared,
}

impl Team<'_> {
    /// This member's index, 0 for the leader (the thread that called [`run`]).
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many members the team has.
    pub fn size(&self) -> usize {
        self.shared.size.load(Ordering::Acquire)
    }

    /// Whether this member leads the team.
    pub fn leads(&self) -> bool {
        self.index == 0
    }

    /// Waits until every member has called `sync` as often as this one. What a member wrote
    /// before it is visible to every member after it. If a member panicked, the others unwind
    /// from here, and [`run`] resumes the first panic.
    pub fn sync(&self) {
        self.shared.wait();
    }
}

struct Shared {
    /// 0 until every member is spawned.
    size: AtomicUsize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    abandoned: AtomicBool,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// What a member unwinds with when another member panicked.
struct Abandoned;

impl Shared {
    fn wait(&self) {
        let size = self.size.load(Ordering::Acquire);
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == size {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation
                .store(generation.wrapping_add(1), Ordering::Release);
            return;
        }
        self.spin_until(|| self.generation.load(Ordering::Acquire) != generation);
    }

    fn spin_until(&self, done: impl Fn() -> bool) {
        let start = Instant::now();
        let mut spins = 0u32;
        while !done() {
            if self.abandoned.load(Ordering::Relaxed) {
                panic::resume_unwind(Box::new(Abandoned));
            }
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) || start.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Runs one member, catching its panic: the first real one is kept for [`run`] to resume,
    /// and every member waiting at a barrier unwinds.
    fn member<R>(&self, index: usize, body: &(impl Fn(&Team) -> R + Sync)) -> Option<R> {
        let team = Team {
            index,
            shared: self,
        };
        match panic::catch_unwind(AssertUnwindSafe(|| body(&team))) {
            Ok(r) => Some(r),
            Err(payload) => {
                self.abandoned.store(true, Ordering::Relaxed);
                if !payload.is::<Abandoned>() {
                    let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
                    first.get_or_insert(payload);
                }
                None
            }
        }
    }
}

/// Runs `body` on a team of up to `threads` members (the calling thread and `threads - 1`
/// spawned ones; fewer if the system refuses threads) and returns the leader's result. A panic
/// in any member is resumed here once every member has stopped.
pub fn run<R>(threads: usize, body: impl Fn(&Team) -> R + Sync) -> R {
    let shared = Shared {
        size: AtomicUsize::new(0),
        arrived: AtomicUsize::new(0),
        generation: AtomicUsize::new(0),
        abandoned: AtomicBool::new(false),
        panic: Mutex::new(None),
    };
    let threads = threads.max(1);
    let cpus = affinity::Cpus::for_team(threads);
    let result = std::thread::scope(|scope| {
        let mut size = 1;
        for index in 1..threads {
            let (shared, body, cpus) = (&shared, &body, &cpus);
            let spawned = std::thread::Builder::new()
                .name(format!("rollsim-team-{index}"))
                .spawn_scoped(scope, move || {
                    let _pinned = cpus.as_ref().map(|c| c.pin(index));
                    shared.spin_until(|| shared.size.load(Ordering::Acquire) != 0);
                    shared.member(index, body);
                });
            if spawned.is_err() {
                break;
            }
            size += 1;
        }
        shared.size.store(size, Ordering::Release);
        let _pinned = cpus.as_ref().map(|c| c.pin(0));
        shared.member(0, &body)
    });
    let panic = shared
        .panic
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    match (result, panic) {
        (_, Some(payload)) => panic::resume_unwind(payload),
        (Some(r), None) => r,
        (None, None) => unreachable!("the leader unwound with no member's panic"),
    }
}

/// Pinning members to CPUs of their own (Linux; elsewhere members are not pinned).
mod affinity {
    /// The CPUs a team's members are pinned to, one each, in member order.
    pub struct Cpus {
        #[cfg(target_os = "linux")]
        cpus: Vec<usize>,
    }

    /// A pinned thread's affinity as it was before, put back when dropped.
    pub struct Pinned {
        #[cfg(target_os = "linux")]
        before: libc::cpu_set_t,
    }

    #[cfg(target_os = "linux")]
    pub fn current() -> Option<libc::cpu_set_t> {
        // SAFETY: a zeroed cpu_set_t is an empty set, and the call writes at most its size.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) == 0).then_some(set)
        }
    }

    #[cfg(target_os = "linux")]
    fn set(set: &libc::cpu_set_t) -> bool {
        // SAFETY: the call reads one cpu_set_t of the size given.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(set), set) == 0 }
    }

    impl Cpus {
        /// CPUs for a team of `members`, if the calling thread may run on exactly that many.
        #[cfg(target_os = "linux")]
        pub fn for_team(members: usize) -> Option<Cpus> {
            if members < 2 {
                return None;
            }
            let allowed = current()?;
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                // SAFETY: every index is under the set's size.
                .filter(|&c| unsafe { libc::CPU_ISSET(c, &allowed) })
                .collect();
            (cpus.len() == members).then_some(Cpus { cpus })
        }

        #[cfg(not(target_os = "linux"))]
        pub fn for_team(_members: usize) -> Option<Cpus> {
            None
        }

        /// Pins the calling thread to member `index`'s CPU until the result is dropped (no
        /// pin, and nothing to put back, if the system refuses).
        #[cfg(target_os = "linux")]
        pub fn pin(&self, index: usize) -> Option<Pinned> {
            let before = current()?;
            // SAFETY: a zeroed cpu_set_t is an empty set; every CPU index is under its size.
            let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            unsafe { libc::CPU_SET(self.cpus[index], &mut one) };
            set(&one).then_some(Pinned { before })
        }

        #[cfg(not(target_os = "linux"))]
        pub fn pin(&self, _index: usize) -> Option<Pinned> {
            None
        }
    }

    impl Drop for Pinned {
        fn drop(&mut self) {
            #[cfg(target_os = "linux")]
            set(&self.before);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_see_what_others_wrote_before_each_sync() {
        let cells: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
        let sums = run(4, |team| {
            let mut sums: Vec<usize> = Vec::new();
            for round in 1..=200 {
                cells[team.index()].store(round * (team.index() + 1), Ordering::Relaxed);
                team.sync();
                sums.push(
                    cells[..team.size()]
                        .iter()
                        .map(|c| c.load(Ordering::Relaxed))
                        .sum(),
                );
                team.sync();
            }
            (team.size(), sums)
        });
        let (size, sums) = sums;
        assert!((1..=4).contains(&size));
        let members: usize = (1..=size).sum();
        assert_eq!(sums, (1..=200).map(|r| r * members).collect::<Vec<usize>>());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_team_for_every_cpu_is_pinned_one_a_cpu_and_the_leader_gets_its_affinity_back() {
        let before = affinity::current().expect("the thread's affinity");
        // SAFETY: CPU_COUNT and CPU_EQUAL read whole cpu_set_t values; sched_getcpu takes
        // nothing.
        let members = unsafe { libc::CPU_COUNT(&before) } as usize;
        let cpus: Vec<AtomicUsize> = (0..members).map(|_| AtomicUsize::new(usize::MAX)).collect();
        let size = run(members, |team| {
            let mine = unsafe { libc::sched_getcpu() };
            cpus[team.index()].store(mine as usize, Ordering::Relaxed);
            team.sync();
            team.size()
        });
        let mut cpus: Vec<usize> = cpus[..size]
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        assert_eq!(cpus.len(), size, "each member on a CPU of its own");
        let after = affinity::current().expect("the thread's affinity");
        assert!(unsafe { libc::CPU_EQUAL(&before, &after) });
        // A team smaller than the CPUs is left to the scheduler.
        if members > 2 {
            let pinned = AtomicUsize::new(0);
            run(members - 1, |team| {
                let mine = affinity::current().expect("the thread's affinity");
                if !unsafe { libc::CPU_EQUAL(&before, &mine) } {
                    pinned.fetch_add(1, Ordering::Relaxed);
                }
                team.sync();
            });
            assert_eq!(
                pinned.into_inner(),
                0,
                "no member of a smaller team is pinned"
            );
        }
    }

    #[test]
    fn a_team_of_one_needs_no_threads() {
        assert_eq!(run(1, |team| (team.index(), team.size())), (0, 1));
        assert_eq!(run(0, |team| team.size()), 1);
    }

    #[test]
    fn a_members_panic_reaches_the_caller_and_frees_the_others() {
        let caught = panic::catch_unwind(|| {
            run(3, |team| {
                team.sync();
                if team.index() == team.size() - 1 && team.size() > 1 {
                    panic!("member failed");
                }
                // The others wait here for the member that panicked.
                team.sync();
                team.sync();
            })
        });
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"member failed"));
    }
}
