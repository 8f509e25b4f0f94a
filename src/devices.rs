//! `rollsim devices`: the adapters wgpu finds, and the one `--backend auto` takes.

use rollsim_core::text::count;
use serde::Serialize;

use super::OutputArgs;
use rollsim_gpu::{AdapterSummary, list_adapters};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Serialize)]
struct Devices {
    adapters: Vec<AdapterSummary>,
    /// Index into `adapters` of what `--backend auto` takes; null means CPU threads.
    auto: Option<usize>,
    cpu_threads: usize,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let (adapters, auto) = list_adapters()?;
    let d = Devices {
        adapters,
        auto,
        cpu_threads: rayon::current_num_threads(),
    };
    crate::output::emit(&d, a.output.json)
}

impl crate::output::Report for Devices {
    fn text(&self) {
        let d = self;
        if d.adapters.is_empty() {
            outln!("no GPU adapters found");
        }
        for (i, s) in d.adapters.iter().enumerate() {
            outln!("[{i}] {} ({}, {})", s.name, s.device_type, s.backend);
            outln!("    driver: {} {}", s.driver, s.driver_info);
            outln!(
                "    max storage binding {} MiB, max buffer {} MiB, {} workgroups per dimension, {} invocations per workgroup, timestamps {}",
                s.max_storage_buffer_binding_size >> 20,
                s.max_buffer_size >> 20,
                s.max_compute_workgroups_per_dimension,
                s.max_compute_invocations_per_workgroup,
                if s.timestamp_queries { "yes" } else { "no" }
            );
        }
        match d.auto {
            Some(i) => outln!("--backend auto takes [{i}] {}", d.adapters[i].name),
            None => outln!(
                "--backend auto takes the CPU ({}): no real GPU{}",
                count(d.cpu_threads, "thread"),
                if d.adapters.is_empty() {
                    ""
                } else {
                    "; --backend gpu takes [0]"
                }
            ),
        }
    }
}
