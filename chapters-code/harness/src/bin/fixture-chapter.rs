//! The harness's test chapter (see `harness::fixture`): used by the harness's tests of
//! worker processes, timeouts and crashes. Not part of the book.

fn main() -> std::process::ExitCode {
    harness::cli::main(&harness::fixture::CHAPTER)
}
