# The Cost of Waiting — every target echoes the commands it runs.
#
#   make serve       install the pinned tools if missing, measure what is not measured
#                    yet (quick profile), serve the book at http://localhost:3000
#   make build       the same, but only build the book into book/
#   make regenerate  re-measure everything with the full profile, then build
#                    (SET="brigades.tasks=2000 …" measures and shows other parameters)
#   make test        cargo test --workspace (builds the whole book in-process)
#   make bench       cargo bench --workspace --features bench
#   make publish     build the static site in book/ for publishing, stamped with this machine
#   make test-browser  publish, then check the site in headless Chromium (screenshots in
#                    test-artifacts/browser/)
#   make clean       remove build outputs, results and the built book

# make splits words on spaces and cannot quote them in targets or $(abspath …): a
# checkout or a results folder whose path holds one is refused before anything runs
# (with it, results went to a folder nobody named, and `make setup` failed on a
# misleading cargo error).
ifneq ($(word 2,$(CURDIR)),)
$(error this checkout's path holds a space ("$(CURDIR)"), which make cannot handle; move or clone it to a path without spaces)
endif
ifneq ($(word 2,$(COW_RESULTS_DIR)),)
$(error COW_RESULTS_DIR holds a space ("$(COW_RESULTS_DIR)"), which make cannot handle; choose a folder whose path has none)
endif

# A relative results folder is made absolute here, once: the markers run in src/.
# (`override`: also when given on the command line, `make build COW_RESULTS_DIR=r`.)
ifneq ($(strip $(COW_RESULTS_DIR)),)
override COW_RESULTS_DIR := $(abspath $(COW_RESULTS_DIR))
export COW_RESULTS_DIR
endif

# macOS ships bash 3.2 and GNU make 3.81, which ignores .SHELLFLAGS (make 3.82 and
# later use it): so every recipe here checks its own failures (explicit `exit 1`, the
# last command's status) rather than relying on -e, uses no bash 4 features, and calls
# only tools whose flags BSD and GNU share (grep -r/-l/-q/-s/--include, sed, which -a).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# The pins live in tools/Cargo.toml (and every crate under them in tools/Cargo.lock).
MDBOOK_VERSION := $(shell sed -n 's/^mdbook = "=\(.*\)"$$/\1/p' tools/Cargo.toml)
CMDRUN_VERSION := $(shell sed -n 's/^mdbook-cmdrun = "=\(.*\)"$$/\1/p' tools/Cargo.toml)
ifeq ($(MDBOOK_VERSION)$(CMDRUN_VERSION),)
$(error tools/Cargo.toml names no pinned mdbook or mdbook-cmdrun ("=x.y.z"))
endif
TOOLS := $(CURDIR)/.tools
MDBOOK := $(TOOLS)/bin/mdbook
CMDRUN := $(TOOLS)/bin/mdbook-cmdrun
# The pinned tools come first, so the preprocessor mdbook finds is ours.
export PATH := $(TOOLS)/bin:$(PATH)

# Every target runs its steps one after the other, also under `make -j`: nothing may
# compile while the book measures, and on 2 cores the release build beside the tools'
# build took longer on a fresh clone (`make build` 279 s against 239 s one after the other).
.NOTPARALLEL:

.PHONY: setup tools measure serve build regenerate test test-browser check-browser bench publish clean check-mdbook check-site

# The tools' build folder (about 0.5 GB) is removed once both are installed.
setup: tools check-mdbook
	@rm -rf $(TOOLS)/build

# Built only when missing or not the pinned versions, once: both binaries in one cargo
# build from tools/ (its Cargo.toml says why), so the mdbook library they share compiles
# once. Unoptimised and without debug information: on 2 cores that took under half the
# CPU time of a release build (218 CPU-seconds against 489), while a rebuild of the book
# took about 2 s longer. The tools only turn Markdown into HTML; the measuring code is
# always built for release. $(TOOLS)/bin/versions records what was built.
TOOLS_PINNED := mdbook $(MDBOOK_VERSION), mdbook-cmdrun $(CMDRUN_VERSION)
BUILD_TOOLS := CARGO_PROFILE_DEV_DEBUG=0 cargo build --locked --manifest-path tools/Cargo.toml --target-dir $(TOOLS)/build -p mdbook -p mdbook-cmdrun
tools:
	@if [ ! -x $(MDBOOK) ] || [ ! -x $(CMDRUN) ] || [ "$$(cat $(TOOLS)/bin/versions 2>/dev/null)" != "$(TOOLS_PINNED)" ]; then \
	  echo "$(BUILD_TOOLS)"; \
	  $(BUILD_TOOLS) || exit 1; \
	  mkdir -p $(TOOLS)/bin && rm -f $(MDBOOK) $(CMDRUN) $(TOOLS)/bin/versions; \
	  cp $(TOOLS)/build/debug/mdbook $(TOOLS)/build/debug/mdbook-cmdrun $(TOOLS)/bin/ || exit 1; \
	  echo "$(TOOLS_PINNED)" > $(TOOLS)/bin/versions; \
	  echo "installed $(TOOLS_PINNED) in $(TOOLS)/bin"; \
	else echo "$(TOOLS_PINNED): $(TOOLS)/bin"; fi

# mdbook-cmdrun 0.7.3 cannot read what mdbook 0.5 sends it; say so plainly.
check-mdbook:
	@found="$$(command -v mdbook)"; version="$$(mdbook --version)"; \
	if [ "$$version" != "mdbook v$(MDBOOK_VERSION)" ]; then \
	  echo "error: $$found is $$version, but this book needs mdbook v$(MDBOOK_VERSION) (mdbook-cmdrun $(CMDRUN_VERSION) fails under mdbook 0.5)." >&2; \
	  echo "       run 'make setup', or put $(TOOLS)/bin first on PATH." >&2; exit 1; \
	fi; \
	other="$$(which -a mdbook | grep -v '^$(TOOLS)/' | head -n1 || true)"; \
	if [ -n "$$other" ] && [ "$$($$other --version 2>/dev/null)" != "mdbook v$(MDBOOK_VERSION)" ]; then \
	  echo "note: $$other is $$($$other --version 2>/dev/null); 'make' uses the pinned $(MDBOOK) instead."; \
	fi

# Measures, in one session with a progress bar, only the experiments the book has no
# good result for from the current code (full or quick); with every result current it
# measures nothing. The session interleaves the experiments' rounds (round 1 of each,
# then round 2 of each, …), so each experiment's rounds spread over the whole session.
measure:
	cargo build --release --workspace --exclude book-tests --bins
	target/release/all-results measure --profile quick --missing

serve: setup measure
	mdbook serve --port 3000

build: setup measure
	mdbook build
	@$(MAKE) --no-print-directory check-site SITE=book

# Fails, naming the pages, when a live marker failed: mdbook-cmdrun leaves
# "cmdrun error" in the page and exits 0. (`mdbook serve` keeps showing the error in
# the page, where the reader sees it.)
SITE ?= book
check-site:
	@pages="$$(grep -rl --include='*.html' 'cmdrun error' '$(SITE)' || true)"; \
	if [ -n "$$pages" ]; then \
	  echo "error: a live table or plot failed to render; see these pages:" >&2; \
	  echo "$$pages" | sed 's/^/  /' >&2; \
	  exit 1; \
	fi

# Chosen parameters: SET="brigades.tasks=2000 spinning-vs-sleeping.gap_ms=1" measures
# with them and shows them in the book (COW_SET), beside the default results. A reader's
# own COW_SET (`COW_SET=brigades.tasks=2000 make measure`) is passed through, never
# blanked: it is SET's default.
SET ?= $(COW_SET)
export COW_SET := $(SET)

# Remembers what the book shows now, re-measures everything with the full profile in
# one interleaved session (a progress bar for the book), rebuilds, then says how many
# figures moved beyond their intervals and the practical threshold ("How we measure"
# shows the last such count for this machine).
regenerate: setup
	cargo build --release --workspace --exclude book-tests --bins
	target/release/all-results measure --profile full $(addprefix --set ,$(SET))
	mdbook build
	@$(MAKE) --no-print-directory check-site SITE=book
	target/release/all-results changes

test:
	cargo test --workspace

# criterion is behind each chapter's `bench` feature, so `cargo test` does not build it.
bench:
	cargo bench --workspace --features bench

# The static site for GitHub Pages: the book, its front page stamped with the machine
# that measured it, and the raw results beside it. With COW_SOURCE_URL set (the
# repository's files at the commit built, e.g. https://github.com/OWNER/REPO/blob/COMMIT;
# the GitHub workflow sets it), every listing's caption links to its file.
publish: build
	target/release/all-results stamp book
	target/release/all-results json > book/cost-of-waiting-results.json
	@$(MAKE) --no-print-directory check-site SITE=book
	@echo "The site is in book/; its numbers were measured on this machine."

# The published site in headless Chromium over WebDriver (Debian: apt-get install chromium
# chromium-driver; CHROMIUM=… and CHROMEDRIVER=… pick another browser and its driver).
# A missing browser or driver fails, before anything is built; COW_SKIP_BROWSER=1 skips
# the browser test on purpose and says so as the last line (and in a GitHub job's summary).
CHROMIUM ?= /usr/bin/chromium
CHROMEDRIVER ?= /usr/bin/chromedriver
test-browser: check-browser publish
	@if [ -n "$${COW_SKIP_BROWSER:-}" ]; then \
	  msg="test-browser: SKIPPED on purpose (COW_SKIP_BROWSER=$$COW_SKIP_BROWSER): the site was built, no browser test ran."; \
	  echo "$$msg"; \
	  if [ -n "$${GITHUB_STEP_SUMMARY:-}" ]; then echo "$$msg" >> "$$GITHUB_STEP_SUMMARY"; fi; \
	else \
	  if [ ! -f target/book-tests/hostile-html/index.html ]; then \
	    echo "cargo test -p book-tests --test it hostile::   # the hostile build the browser loads"; \
	    cargo test -p book-tests --test it hostile::; \
	  fi; \
	  echo "CHROMIUM=$(CHROMIUM) CHROMEDRIVER=$(CHROMEDRIVER) cargo test -p book-tests --features browser --test it -- --ignored --test-threads=1 browser::"; \
	  CHROMIUM="$(CHROMIUM)" CHROMEDRIVER="$(CHROMEDRIVER)" cargo test -p book-tests --features browser --test it -- --ignored --test-threads=1 browser::; \
	fi

check-browser:
	@if [ -z "$${COW_SKIP_BROWSER:-}" ]; then \
	  for b in "$(CHROMIUM)" "$(CHROMEDRIVER)"; do \
	    if [ ! -x "$$b" ]; then \
	      echo "error: no browser test without $$b. Install Chromium and its driver (Debian: apt-get install chromium chromium-driver), point CHROMIUM=… and CHROMEDRIVER=… at them, or skip the browser test on purpose with COW_SKIP_BROWSER=1." >&2; \
	      exit 1; \
	    fi; \
	  done; \
	fi

clean:
	cargo clean
	rm -rf book

