//! `spinning-vs-sleeping list | run | table NAME | plot NAME` — see `--help`.

fn main() -> std::process::ExitCode {
    harness::cli::main(&spinning_vs_sleeping::CHAPTER)
}
