#!/usr/bin/env node
// The runlater CLI. Runs the JavaScript that scripts/build.mjs compiles into ../dist
// (`npm install` builds it; `npm run build` after changing the sources). On a Node older
// than 22 it hands over to scripts/runlater, which installs a local Node 24 first (see
// node-env.sh).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";

/**
 * npm (`npx runlater serve`, `npm run …`) does not pass a SIGTERM on to the command it
 * runs: it exits and leaves the command behind, re-parented, still holding its port. So
 * under npm, losing the parent counts as being told to stop. (Started any other way, a
 * server outlives its parent as daemons do: nohup, a shell that exits.)
 */
function stopWhenOrphaned(stop) {
  if (!process.env.npm_command) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop();
  }, 500);
  watch.unref();
}

if (Number(process.versions.node.split(".")[0]) < 22) {
  const wrapper = fileURLToPath(new URL("../../scripts/runlater", import.meta.url));
  const child = spawn("bash", [wrapper, ...process.argv.slice(2)], { stdio: "inherit" });
  // A supervisor stops the process it started, this one: pass its SIGTERM on so the server
  // shuts down gracefully and this process exits with it, rather than dying alone and
  // leaving the server running. Ctrl-C already reaches both (one process group): SIGINT is
  // not passed on again, which would make it a second, immediate one.
  process.on("SIGTERM", () => child.kill("SIGTERM"));
  process.on("SIGINT", () => {});
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  stopWhenOrphaned(() => child.kill("SIGTERM"));
} else {
  // A larger young generation: a job server allocates many short-lived objects per call;
  // with V8's default 16 MiB semi-spaces scavenges run often enough to cost ~30% of
  // throughput and add millisecond pauses (measured with npm run bench).
  (await import("node:v8")).setFlagsFromString("--max-semi-space-size=32");
  // Compiled code cached on disk (in the OS temp dir): later starts skip parsing.
  (await import("node:module")).enableCompileCache?.();
  stopWhenOrphaned(() => process.kill(process.pid, "SIGTERM"));
  const entry = new URL("../dist/cli/main.js", import.meta.url);
  if (!existsSync(entry)) {
    process.stderr.write(
      `runlater: ${fileURLToPath(entry)} is missing: build it with \`npm run build\` (npm install runs it)\n`,
    );
    process.exit(1);
  }
  const { main } = await import(entry.href);
  await main(process.argv);
}
