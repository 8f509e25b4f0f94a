//! `rollsim`, the command line: argument parsing, the choice of backend, output, error
//! reporting and exit codes. The only crate that knows clap; the work is in the library crates.
//!
//! Exit codes: 0 success; 1 a failure while computing (a lost GPU, an I/O error); 2 bad input
//! (clap's usage errors and ours alike: a malformed board, an impossible setting).

#[macro_use]
mod output;
mod args;
mod backend;
mod bearoff;
mod bench;
mod devices;
mod experiment;
mod game2048;
mod puzzle;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use clap::{CommandFactory, FromArgMatches};

use args::BackendArg;

#[derive(Parser, Debug)]
#[command(
    name = "rollsim",
    version,
    about = "GPU-accelerated batch simulator for 2048, backgammon bearoff and the 15-puzzle",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// 2048: play batches of games, train n-tuple networks, run experiments, evaluate and
    /// inspect boards.
    #[command(name = "2048", subcommand)]
    Game2048(game2048::Command),
    /// Backgammon bearoff databases: build them, look positions up.
    #[command(subcommand)]
    Bearoff(bearoff::Command),
    /// 15-puzzle: solve boards, benchmark the solvers.
    #[command(subcommand)]
    Puzzle(puzzle::Command),
    /// List the GPU adapters and say which one `--backend auto` takes.
    Devices(devices::Args),
    /// Measure throughput of every workload on every backend, side by side.
    Bench(bench::Args),
}

/// How a command reports, shared by every command: text or one JSON object on stdout, and
/// whether a progress bar shows on stderr.
#[derive(Args, Debug, Clone, Copy)]
pub struct OutputArgs {
    /// Print one JSON object on stdout (for scripts) instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// No progress bar and no notes on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Where to compute, shared by every command that computes.
#[derive(Args, Debug, Clone)]
pub struct ComputeArgs {
    /// auto: a real GPU if there is one, else CPU threads; gpu: any adapter, software included.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    #[command(flatten)]
    pub threads: ThreadArgs,
}

/// `--backend` of a command with no GPU kernel: `gpu` is accepted by the parser but hidden
/// from the help, so that it is refused with a message saying why rather than as a typo.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuBackend {
    Auto,
    Cpu,
    #[value(hide = true)]
    Gpu,
}

/// Where to compute, for a command that runs on CPU threads only.
#[derive(Args, Debug, Clone)]
pub struct CpuComputeArgs {
    /// auto or cpu: CPU threads (this command has no GPU kernel).
    #[arg(long, value_enum, default_value_t = CpuBackend::Auto)]
    pub backend: CpuBackend,
    #[command(flatten)]
    pub threads: ThreadArgs,
}

/// `--threads`, defined once for every command that computes.
#[derive(Args, Debug, Clone, Copy)]
pub struct ThreadArgs {
    /// CPU threads (default: all cores; at most 1024).
    #[arg(id = "threads", long = "threads", value_name = "THREADS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub count: Option<u16>,
}

impl CpuComputeArgs {
    /// `--backend gpu` is an input error naming `what`; `auto` and `cpu` mean CPU threads.
    /// Then sizes the thread pool.
    fn init(&self, what: &str) -> anyhow::Result<()> {
        if self.backend == CpuBackend::Gpu {
            return Err(input_error(format!(
                "--backend gpu: {what} run on CPU threads only, with no GPU kernel (use --backend \
                 cpu or auto)"
            )));
        }
        self.threads.init()
    }
}

impl ComputeArgs {
    fn backend(&self) -> rollsim_gpu::Backend {
        self.backend.into()
    }

    /// Sizes rayon's global pool; call once, before any parallel work.
    fn init_threads(&self) -> anyhow::Result<()> {
        self.threads.init()
    }
}

impl ThreadArgs {
    /// Sizes rayon's global pool; call once, before any parallel work.
    fn init(&self) -> anyhow::Result<()> {
        if let Some(t) = self.count {
            rayon::ThreadPoolBuilder::new()
                .num_threads(usize::from(t))
                .build_global()
                .map_err(|e| {
                    anyhow::anyhow!(
                        "--threads {t}: the system would not start {t} threads ({e}); give fewer"
                    )
                })?;
        }
        Ok(())
    }
}

/// Bad input: reported with exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Refuses each flag given (`true`) where it does not apply, the one shape of that message:
/// "`FLAG` is for `WHERE`, not `HERE`".
pub fn refuse_flags(flags: &[(bool, &str, &str)], here: &str) -> anyhow::Result<()> {
    match flags.iter().find(|&&(given, _, _)| given) {
        Some((_, flag, applies)) => {
            Err(input_error(format!("{flag} is for {applies}, not {here}")))
        }
        None => Ok(()),
    }
}

/// An input error from any displayable cause.
pub fn input_error(e: impl std::fmt::Display) -> anyhow::Error {
    InputError(e.to_string()).into()
}

fn is_input_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<InputError>()
            || c.is::<rollsim_core::files::InputFileError>()
            || c.is::<rollsim_2048::text::BoardParseError>()
            || c.downcast_ref::<rollsim_gpu::GpuError>()
                .is_some_and(rollsim_gpu::GpuError::is_bad_setting)
    })
}

/// Lets every option that takes a value take a negative number, in every subcommand, so that
/// `--rollouts -10` is refused by the option's own check ("invalid value '-10' for
/// '--rollouts <ROLLOUTS>': 0 is not in 1..") instead of as an unknown argument `-10`.
fn negative_numbers_are_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negative_numbers_are_values)
}

fn main() -> ExitCode {
    rollsim_core::memory::return_freed_memory();
    rollsim_gpu::prepare_driver_environment();
    rollsim_core::files::remove_temporaries_on_signal();
    let parsed = negative_numbers_are_values(Cli::command())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    let done = run(cli);
    let out = output::finish();
    match (done, out) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(e), _) => {
            eprintln!("rollsim: error: {e:#}");
            ExitCode::from(if is_input_error(&e) { 2 } else { 1 })
        }
        (Ok(()), Err(e)) => {
            eprintln!("rollsim: error: writing standard output: {e}");
            ExitCode::from(1)
        }
    }
}

/// Prints clap's help, version or usage error and gives its exit code. Help and version are
/// the command's output: a failure to write them (a full disk) is exit 1, as any other
/// output's, and a closed pipe (`rollsim --help | head`) is not a failure.
fn clap_exit(e: &clap::Error) -> ExitCode {
    use std::io::Write;
    let printed = e.print().and_then(|()| std::io::stdout().flush());
    if e.use_stderr() {
        // A usage error on a stderr that cannot be written has nowhere else to go.
        return ExitCode::from(2);
    }
    match printed {
        Err(w) if w.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("rollsim: error: writing standard output: {w}");
            ExitCode::from(1)
        }
        _ => ExitCode::SUCCESS,
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Game2048(c) => game2048::run(c),
        Command::Bearoff(c) => bearoff::run(c),
        Command::Puzzle(c) => puzzle::run(c),
        Command::Devices(a) => devices::run(a),
        Command::Bench(a) => bench::run(a),
    }
}

/// Prints `value` as one line of JSON on stdout.
fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    outln!("{}", serde_json::to_string(value)?);
    Ok(())
}

/// A progress bar on stderr (hidden when stderr is not a terminal, or when `quiet`).
fn progress_bar(len: u64, unit: &str, quiet: bool) -> indicatif::ProgressBar {
    styled_bar(len, unit, quiet, "")
}

/// [`progress_bar`] followed by its message (`set_message`).
fn progress_bar_with_message(len: u64, unit: &str, quiet: bool) -> indicatif::ProgressBar {
    styled_bar(len, unit, quiet, " {msg}")
}

fn styled_bar(len: u64, unit: &str, quiet: bool, tail: &str) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}}){tail}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}
