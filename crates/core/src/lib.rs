//! rollsim's foundations, shared by every game and knowing none: counter-based random streams
//! (Philox4x32-10), files written atomically and inputs read with checks, memory sizing and
//! large allocations, teams of threads in lock step, progress, and board text.

pub mod container;
pub mod device;
pub mod files;
pub mod lockstep;
pub mod memory;
pub mod progress;
pub mod rng;
pub mod stats;
pub mod testing;
pub mod text;

pub use device::Device;

/// Instantiates tests written once, generic over a device, for every backend, as cubecl's
/// suites are instantiated per runtime. Each test is a function `fn name<D>()` of the calling
/// module; `per_backend!(cpu: Cpu, gpu: Gpu; [a, b])` makes tests `cpu::a`, `cpu::b` with
/// `D = Cpu` and `gpu::a`, `gpu::b` with `D = Gpu`. Attributes before a backend apply to its
/// module (`#[cfg(feature = "gpu")] gpu: Gpu`).
#[macro_export]
macro_rules! per_backend {
    ($($(#[$attr:meta])* $backend:ident: $device:ty),+ ; $tests:tt) => {
        $( $crate::per_backend!(@one $(#[$attr])* $backend: $device; $tests); )+
    };
    (@one $(#[$attr:meta])* $backend:ident: $device:ty; [$($test:ident),+ $(,)?]) => {
        $(#[$attr])*
        mod $backend {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $test() {
                    super::$test::<$device>()
                }
            )+
        }
    };
}
