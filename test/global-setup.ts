/**
 * Vitest's global setup: builds sdk-ts/dist and server/dist (scripts/build.mjs,
 * incremental: about a second when nothing changed) before any suite runs. The suites
 * import the sources, but some run what a user runs: the runlater bin (cli-smoke,
 * test/cluster, the shell worker), the SDK example through tsx, the packed SDK. Without
 * this they would run whatever was built last.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../scripts/build.mjs", import.meta.url))], {
    stdio: "inherit",
  });
}
