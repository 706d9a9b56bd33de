/**
 * The SDK as a user gets it: `npm pack` of sdk-ts installed into an empty project (its
 * dependencies from the registry), a worker run there with plain `node`, and a TypeScript
 * file compiled against the shipped declarations.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningServer } from "../../server/src/server.js";
import { startTestServer } from "./helpers.js";

const run = promisify(execFile);
const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const root = join(sdkDir, "..");

let server: RunningServer;
let project: string;
let packed: Array<{ path: string }>;

beforeAll(async () => {
  server = await startTestServer();
  project = mkdtempSync(join(tmpdir(), "runlater-sdk-user-"));
  // --ignore-scripts: prepack would rebuild dist/ from clean while other suites run the
  // bin on it; vitest's global setup has just built it (scripts/build.mjs).
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", project], {
    cwd: sdkDir,
  });
  const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = info!.files;
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-app", private: true, type: "module" }));
  await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline", join(project, info!.filename)],
    { cwd: project },
  );
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

it("ships the built JavaScript and declarations only", () => {
  const paths = packed.map((f) => f.path).sort();
  expect(paths).toContain("dist/index.js");
  expect(paths).toContain("dist/index.d.ts");
  expect(paths).toContain("dist/gen/runlater/v1/job_pb.js");
  const other = paths.filter((p) => !/^dist\/.+\.(js|d\.ts)$/.test(p));
  expect(other).toEqual(["README.md", "package.json"]);
});

it("runs a worker with plain node in a project that only installed the tarball", async () => {
  writeFileSync(
    join(project, "worker.mjs"),
    `import { createRunlaterClient, Worker } from "@runlater/sdk";
import { JobState } from "@runlater/sdk/gen/job_pb.js";

const client = createRunlaterClient(process.env.RUNLATER_URL);
await client.createQueue("packed");
const id = await client.enqueue("packed", { to: "ada@example.com" });
const worker = new Worker({
  client,
  queue: "packed",
  handler: async (job) => {
    void worker.stop();
    return \`sent to \${job.json().to}\`;
  },
});
await worker.run();
const { jobs } = await client.jobs.getJobs({ jobIds: [id] });
console.log(JSON.stringify({ state: JobState[jobs[0].state], status: jobs[0].customStatus }));
`,
  );
  // process.execPath: this suite's Node (24); the package needs ≥ 22 and no loader.
  const { stdout } = await run(process.execPath, ["worker.mjs"], {
    cwd: project,
    env: { ...process.env, RUNLATER_URL: server.url, NODE_OPTIONS: "" },
  });
  expect(JSON.parse(stdout)).toEqual({ state: "SUCCEEDED", status: "sent to ada@example.com" });
}, 30_000);

it("refuses imports of files that are not exported", async () => {
  const probe = `import("@runlater/sdk/dist/worker.js").then(() => console.log("imported"), (e) => console.log(e.code))`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", probe], { cwd: project });
  expect(stdout.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
});

it("types a TypeScript user's code through the shipped declarations", async () => {
  writeFileSync(
    join(project, "app.ts"),
    `import { createRunlaterClient, RetryAfter, Worker, type WorkerJob } from "@runlater/sdk";
import { JobState } from "@runlater/sdk/gen/job_pb.js";

const client = createRunlaterClient("http://127.0.0.1:8080");
const handler = async (job: WorkerJob): Promise<string> => {
  if (job.attempt < 2) throw new RetryAfter(1000);
  return job.json<{ to: string }>().to;
};
export const worker = new Worker({ client, queue: "emails", handler });
export const done: JobState = JobState.SUCCEEDED;
// Real types, not any: a wrong option is an error.
// @ts-expect-error queue is a string
export const wrong = new Worker({ client, queue: 1, handler });
`,
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023",
        lib: ["es2023"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      files: ["app.ts"],
    }),
  );
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const result = await run(process.execPath, [tsc, "-p", project], { cwd: project }).catch(
    (err: { stdout: string }) => err,
  );
  expect(result.stdout).toBe("");
  // The resolution went to the installed package's declarations, not to this repository.
  const { stdout: trace } = await run(process.execPath, [tsc, "-p", project, "--traceResolution"], { cwd: project });
  expect(trace).toMatch(
    /'@runlater\/sdk' was successfully resolved to '[^']*\/node_modules\/@runlater\/sdk\/dist\/index\.d\.ts'/,
  );
}, 60_000);
