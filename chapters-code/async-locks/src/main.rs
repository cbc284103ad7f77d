fn main() -> std::process::ExitCode {
    harness::cli::main(&async_locks::CHAPTER)
}
