fn main() -> std::process::ExitCode {
    harness::cli::main(&short_sleeps::CHAPTER)
}
