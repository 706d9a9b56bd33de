#!/usr/bin/env node
// The runlater CLI. Runs the TypeScript sources through tsx's loader, so there is no
// build step between a checkout and a running server. On a Node older than 22 it hands
// over to scripts/runlater, which installs a local Node 24 first (see node-env.sh).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

if (Number(process.versions.node.split(".")[0]) < 22) {
  const wrapper = fileURLToPath(new URL("../../scripts/runlater", import.meta.url));
  const result = spawnSync("bash", [wrapper, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(result.status ?? 1);
}
// A larger young generation: a job server allocates many short-lived objects per call;
// with V8's default 16 MiB semi-spaces scavenges run often enough to cost ~30% of
// throughput and add millisecond pauses (measured with npm run bench).
(await import("node:v8")).setFlagsFromString("--max-semi-space-size=32");
const { register } = await import("tsx/esm/api");
register();
const { main } = await import("../src/cli/main.ts");
await main(process.argv);
