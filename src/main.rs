fn main() -> std::process::ExitCode {
    rollsim::cli::main()
}
