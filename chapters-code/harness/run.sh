#!/bin/sh
# Runs a chapter's measuring binary for the book's cmdrun markers:
#   sh ../chapters-code/harness/run.sh <chapter> table|plot <name>
# It rebuilds the binary (cargo build --release) only when a file under chapters-code/
# (the chapter, the harness, or any crate it links) or Cargo.lock is newer than the
# binary, so a rebuild of the book with cached results costs milliseconds per marker
# instead of a cargo start-up each, and a marker never runs stale code.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
chapter=$1
shift
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target=$root/$target ;; esac
bin=$target/release/$chapter
newer=""
if [ -x "$bin" ]; then
  newer=$(find "$root/chapters-code" "$root/Cargo.lock" -newer "$bin" -type f -print 2>/dev/null |
    head -n 1)
fi
if [ ! -x "$bin" ] || [ -n "$newer" ]; then
  cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p "$chapter" --bins >&2
  touch "$bin"
fi
exec "$bin" "$@"
