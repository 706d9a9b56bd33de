/** The README's example is the file in examples/, and the file runs. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningServer } from "../../server/src/server.js";
import { createRunlaterClient } from "../src/client.js";
import { JobState } from "../src/gen/runlater/v1/job_pb.js";
import { startTestServer } from "./helpers.js";

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const examplePath = join(sdkDir, "examples", "hello-worker.ts");

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

it("shows examples/hello-worker.ts verbatim in the README", () => {
  const readme = readFileSync(join(sdkDir, "README.md"), "utf8");
  expect(readme).toContain(readFileSync(examplePath, "utf8").trim());
});

it("runs examples/hello-worker.ts to completion", async () => {
  const tsx = join(sdkDir, "..", "node_modules", ".bin", "tsx");
  const child = spawn(tsx, [examplePath], {
    env: { ...process.env, RUNLATER_URL: server.url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  expect(out).toContain("all jobs done");
  expect(code).toBe(0);
  for (const name of ["Ada", "Grace", "Linus"]) expect(out).toContain(`hello, ${name}!`);
  const client = createRunlaterClient(server.url);
  const { count } = await client.jobs.countJobs({ queue: "hello", state: JobState.SUCCEEDED });
  expect(count).toBe(3n);
}, 30_000);
