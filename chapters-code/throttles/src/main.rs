//! `throttles list | run | table NAME | plot NAME` — see `--help`.

fn main() -> std::process::ExitCode {
    harness::cli::main(&throttles::CHAPTER)
}
