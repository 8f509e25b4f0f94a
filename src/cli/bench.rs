//! `rollsim bench`: every workload on every backend it can use, side by side.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use super::{ComputeArgs, print_json};
use crate::bench::{Measurement, random_playouts, rollouts, sample_roots};
use crate::game2048::CpuEngine;
use crate::gpu::rollout::GpuRolloutEngine;
use crate::gpu::{Backend, Gpu};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A first look in well under a minute: shorter runs, smaller batches.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    compute: ComputeArgs,
    /// Write the figures as JSON to this file (written to a temporary file, then renamed).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct BenchReport {
    rollsim_version: &'static str,
    cpu: String,
    cpu_threads: usize,
    adapter: Option<crate::gpu::AdapterSummary>,
    /// The kernel's own time from timestamp queries, where the adapter has them.
    gpu_kernel_seconds: Option<f64>,
    measurements: Vec<Measurement>,
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

pub fn run(a: Args) -> anyhow::Result<()> {
    a.compute.init_threads()?;
    let secs = if a.quick { 1.0 } else { 5.0 };
    let threads = rayon::current_num_threads();
    let (roots, n) = if a.quick { (64, 64) } else { (256, 256) };
    let roots = sample_roots(roots);
    let mut out = Vec::new();
    let note = |m: &Measurement| {
        if !a.json {
            eprintln!("  measured {} on {} {}", m.workload, m.backend, m.on);
        }
    };
    let gpu = match a.compute.backend {
        Backend::Cpu => None,
        b => Gpu::for_backend(b)?,
    };
    let mut kernel_seconds = None;
    if a.compute.backend != Backend::Gpu {
        for t in [1, threads] {
            let m = random_playouts(t, secs)?;
            note(&m);
            out.push(m);
            if threads == 1 {
                break;
            }
        }
        let m = rollouts(&mut CpuEngine, &roots, n, secs)?;
        note(&m);
        out.push(m);
    }
    if let Some(g) = gpu {
        let mut engine = GpuRolloutEngine::new(g)?;
        // One untimed call compiles the pipeline and sizes the buffers.
        engine.evaluate_warm(&roots, n)?;
        let before = engine.gpu_seconds;
        let m = rollouts(&mut engine, &roots, n, secs)?;
        kernel_seconds = engine.gpu_seconds.zip(before).map(|(a, b)| a - b);
        note(&m);
        out.push(m);
    }
    let report = BenchReport {
        rollsim_version: env!("CARGO_PKG_VERSION"),
        cpu: cpu_model(),
        cpu_threads: threads,
        adapter: gpu.map(|g| g.adapter.clone()),
        gpu_kernel_seconds: kernel_seconds,
        measurements: out,
    };
    if let Some(path) = &a.out {
        write_atomically(path, &serde_json::to_vec_pretty(&report)?)?;
    }
    if a.json {
        return print_json(&report);
    }
    print_table(&report);
    Ok(())
}

fn print_table(r: &BenchReport) {
    println!("cpu: {} ({} threads)", r.cpu, r.cpu_threads);
    if let Some(a) = &r.adapter {
        println!(
            "gpu: {} ({}, {}, {})",
            a.name, a.device_type, a.backend, a.driver
        );
    }
    println!(
        "{:<36} {:<5} {:<28} {:>14} {:<11} also",
        "workload", "on", "", "figure", "unit"
    );
    let cpu_rollouts = r
        .measurements
        .iter()
        .find(|m| m.backend == "cpu" && m.unit == "rollouts/s")
        .map(|m| m.figure);
    for m in &r.measurements {
        let mut also: Vec<String> = m.extra.iter().map(|(u, v)| format!("{v:.0} {u}")).collect();
        if m.backend == "gpu"
            && let Some(c) = cpu_rollouts
        {
            also.push(format!("{:.2}x cpu", m.figure / c));
        }
        println!(
            "{:<36} {:<5} {:<28} {:>14.0} {:<11} {}",
            m.workload,
            m.backend,
            m.on,
            m.figure,
            m.unit,
            also.join(", ")
        );
    }
    if let Some(k) = r.gpu_kernel_seconds {
        println!("gpu kernel time (timestamp queries): {k:.3} s");
    }
}

/// Writes `bytes` to a temporary file beside `path`, then renames it into place, so that an
/// interrupted run never leaves a half-written file.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(d) = dir {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let tmp = path.with_extension("tmp");
    let mut f =
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}
