#!/bin/sh
# Runs a measuring binary for the book's cmdrun markers:
#   sh ../chapters-code/harness/run.sh <package>[/<binary>] table|plot <name>
# The binary is first asked whether it was built from the sources on disk
# (COW_CHECK_FRESH=1: it compares the key of the code it was compiled from with the
# sources, and exits 75 when they differ). Only then is cargo run to rebuild it, so a
# rebuild of the book with cached results costs no cargo start-up per marker, a marker
# never runs stale code, and cargo alone decides what to recompile.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
package=${1%%/*}
binary=${1#*/}
shift
# cmdrun runs markers in src/: a relative target folder is relative to the book's root.
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target=$root/$target ;; esac
export CARGO_TARGET_DIR="$target"
# The same for the results folder: `COW_RESULTS_DIR=results mdbook build` means
# <book>/results, not src/results (where mdbook serve would see it change).
if [ -n "${COW_RESULTS_DIR:-}" ]; then
  case "$COW_RESULTS_DIR" in /*) ;; *) COW_RESULTS_DIR=$root/$COW_RESULTS_DIR ;; esac
  export COW_RESULTS_DIR
fi
bin=$target/release/$binary
build() {
  cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p "$package" --bin "$binary" >&2
}
[ -x "$bin" ] || build
status=0
COW_CHECK_FRESH=1 "$bin" "$@" || status=$?
if [ "$status" -eq 75 ]; then
  build
  exec "$bin" "$@"
fi
exit "$status"
