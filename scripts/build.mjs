#!/usr/bin/env node
/**
 * Builds the TypeScript packages to JavaScript with the repository's TypeScript compiler:
 *   sdk-ts/dist   JavaScript and declarations of @runlater/sdk (what `npm pack` ships)
 *   server/dist   JavaScript of the server and CLI (what bin/runlater.js runs), with the
 *                 files of server/src that are not TypeScript (Lua scripts, SQL migrations)
 *                 copied beside it
 * `npm install` runs it (the root package's prepare), and so do scripts/test-all.sh,
 * conformance/run.sh and the test suites' global setup. Incremental (tsc -b): with nothing
 * changed it takes about a second.
 *
 *   node scripts/build.mjs           build what changed
 *   node scripts/build.mjs --clean   delete both dist/ first (no output of a deleted source left behind)
 */
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export function build({ clean = false } = {}) {
  if (clean) for (const pkg of ["sdk-ts", "server"]) rmSync(join(root, pkg, "dist"), { recursive: true, force: true });
  // server/tsconfig.build.json references the SDK's, so -b builds the SDK first.
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-b", join(root, "server/tsconfig.build.json")], { stdio: "inherit" });
  copyAssets(join(root, "server/src"), join(root, "server/dist"));
}

/** Copies every file under `from` that the compiler does not handle (not .ts) to the same place under `to`. */
function copyAssets(from, to) {
  for (const entry of readdirSync(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith(".ts")) continue;
    const rel = relative(from, join(entry.parentPath, entry.name));
    cpSync(join(from, rel), join(to, rel));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    build({ clean: process.argv.includes("--clean") });
  } catch {
    // tsc has printed its errors.
    process.exit(1);
  }
}
