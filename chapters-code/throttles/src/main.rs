fn main() -> std::process::ExitCode {
    throttles::cli::main()
}
