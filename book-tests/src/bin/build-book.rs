//! `build-book OUT`: builds the book into `OUT` in this process, with the cmdrun
//! preprocessor in-process, exactly as the book tests need it. The tests run it as a
//! child so that what the markers inherit (`COW_PROFILE`, `COW_RESULTS_DIR`) and the
//! working folder cmdrun needs are this process's own, not the test harness's.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(out) = std::env::args_os().nth(1) else {
        eprintln!("usage: build-book OUT");
        return ExitCode::from(2);
    };
    match book_tests::build_book(std::path::Path::new(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
