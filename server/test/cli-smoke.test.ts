/**
 * The real executable, as a user runs it: scripts/runlater in a child process. Only a
 * couple of cases, since each start costs about half a second; everything else runs
 * in-process (cli-*.test.ts).
 */
import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, startHarness } from "./cli-harness.js";

const RUNLATER = fileURLToPath(new URL("../../scripts/runlater", import.meta.url));

function runlater(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(RUNLATER, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? "");
  });
}

let h: CliHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

describe("scripts/runlater", () => {
  it("creates a queue and enqueues a piped body, then exits 0", async () => {
    const env = { RUNLATER_URL: h.server.url };
    const created = await runlater(["queue", "create", "smoke"], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^created queue smoke\n/);
    const enqueued = await runlater(["enqueue", "smoke"], env, "piped body");
    expect(enqueued.stderr).toBe("");
    expect(enqueued.code).toBe(0);
    const id = enqueued.stdout.trim();
    const res = await h.jobs.getJobs({ jobIds: [id], includeBody: true });
    expect(new TextDecoder().decode(res.jobs[0]?.body)).toBe("piped body");
  });

  it("exits 1 with the server's error and 2 on a bad flag", async () => {
    const env = { RUNLATER_URL: h.server.url };
    const missing = await runlater(["queue", "show", "nope"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: queue "nope" does not exist/);
    const bad = await runlater(["queue", "list", "--bogus"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--bogus'");
  });

  it("refuses a split role on the in-process memory store, and an unknown role", async () => {
    const broker = await runlater(["serve", "--role", "broker", "--port", "0"], {});
    expect(broker.code).toBe(1);
    expect(broker.stderr).toContain("--role broker needs a shared store (redis:// or mysql://)");
    const bogus = await runlater(["serve", "--role", "leader", "--port", "0"], {});
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("Allowed choices are all, frontend, broker");
  });
});

/** The machine's own Node (older than 22 on these machines), which bin/runlater.js hands over from. */
const SYSTEM_NODE = "/usr/bin/node";
const systemNodeMajor = Number(
  execFileSync(SYSTEM_NODE, ["-p", "process.versions.node.split('.')[0]"]).toString().trim(),
);

describe("bin/runlater.js on a Node older than 22", () => {
  it("has a Node older than 22 to try it with", () => {
    // If this fails the machine changed: the hand-over below no longer happens anywhere.
    expect(systemNodeMajor).toBeLessThan(22);
  });

  it("passes a SIGTERM on to the server it started, which shuts down and takes the wrapper with it", async () => {
    const bin = fileURLToPath(new URL("../bin/runlater.js", import.meta.url));
    const wrapper = spawn(SYSTEM_NODE, [bin, "serve", "--port", "0", "--store", "memory", "--log-level", "warn"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      wrapper.on("exit", (code, signal) => resolve({ code, signal })),
    );
    const url = await new Promise<string>((resolve, reject) => {
      let seen = "";
      wrapper.stdout.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /listening on (\S+)/.exec(seen);
        if (match) resolve(match[1]!);
      });
      void exited.then(() => reject(new Error(`exited before listening: ${seen}`)));
    });
    wrapper.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    // The server itself is gone too, not left running on its own.
    await expect(fetch(`${url}/metrics`)).rejects.toThrow();
  }, 20_000);
});

describe("npx runlater serve", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  // npm does not pass a SIGTERM on: it exits, leaving what it ran re-parented. The server
  // must notice and stop, through the machine's Node 20 (which hands over to Node 24 through
  // a wrapper) and through Node 24 (which runs the server itself).
  const variants = [
    {
      name: "the machine's npx (Node < 22, through the wrapper)",
      npx: "/usr/bin/npx",
      path: `/usr/bin:${process.env.PATH}`,
    },
    { name: "Node 24's npx", npx: "npx", path: process.env.PATH ?? "" },
  ];
  it.each(variants)(
    "stops when a SIGTERM stops npx: $name",
    async ({ npx, path }) => {
      const child = spawn(
        npx,
        ["--no-install", "runlater", "serve", "--port", "0", "--store", "memory", "--log-level", "warn"],
        {
          cwd: root,
          env: { ...process.env, PATH: path },
          stdio: ["ignore", "pipe", "inherit"],
          detached: true, // its own process group: whatever is left can be killed after the test
        },
      );
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let seen = "";
          child.stdout.on("data", (chunk: Buffer) => {
            seen += chunk.toString();
            const match = /listening on (\S+)/.exec(seen);
            if (match) resolve(match[1]!);
          });
          child.on("exit", () => reject(new Error(`npx exited before the server listened: ${seen}`)));
        });
        expect((await fetch(`${url}/metrics`)).status).toBe(200);
        child.kill("SIGTERM");
        // The server notices within its half-second watch and shuts down gracefully.
        const deadline = Date.now() + 8_000;
        let stopped = false;
        while (!stopped && Date.now() < deadline) {
          stopped = await fetch(`${url}/metrics`).then(
            () => false,
            () => true,
          );
          if (!stopped) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(stopped).toBe(true);
      } finally {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // the group is gone already, as it should be
        }
      }
    },
    30_000,
  );
});
