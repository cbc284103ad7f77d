//! The book's settings in the environment (`COW_PROFILE`, `COW_SET`,
//! `COW_THRESHOLD`), read one way: a variable that is unset and one that is set to
//! nothing (the empty text) mean the same, "not set", as for `COW_RESULTS_DIR`; a
//! value that is not UTF-8 text is an error that names the variable, and the binaries
//! refuse it with exit status 2 rather than ignore it.

/// The text of the variable `name`: `Ok(None)` when it is unset or empty, an error
/// naming it when its value is not UTF-8.
pub fn text(name: &str) -> Result<Option<String>, String> {
    match std::env::var_os(name) {
        None => Ok(None),
        Some(v) => match v.into_string() {
            Ok(s) if s.is_empty() => Ok(None),
            Ok(s) => Ok(Some(s)),
            Err(raw) => Err(format!(
                "{name} is not UTF-8 text ({:?}); set it to plain text or unset it",
                raw
            )),
        },
    }
}
