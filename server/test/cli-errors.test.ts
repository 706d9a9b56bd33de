import { createServer } from "node:net";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli/main.js";
import { type CliHarness, runIn, startHarness } from "./cli-harness.js";

let h: CliHarness;
beforeAll(async () => {
  h = await startHarness();
  await h.queues.createQueue({ name: "here" });
});
afterAll(async () => {
  await h.stop();
});

/** A local port nothing listens on: bind one, note it, close it. */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe("reaching the server", () => {
  it("uses RUNLATER_URL when there is no --url", async () => {
    const r = await runIn(["queue", "list"], { RUNLATER_URL: h.server.url });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^here /m);
  });

  it("prefers --url (before or after the command) over RUNLATER_URL", async () => {
    const bogus = `http://127.0.0.1:${await deadPort()}`;
    const before = await runIn(["--url", h.server.url, "queue", "show", "here"], { RUNLATER_URL: bogus });
    expect(before.code).toBe(0);
    const after = await runIn(["queue", "show", "here", "--url", h.server.url], { RUNLATER_URL: bogus });
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/^name: +here$/m);
  });

  it("explains a refused connection without a stack trace (exit 1)", async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    const r = await runIn(["queue", "list"], { RUNLATER_URL: url });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `error: cannot connect to ${url}: connection refused\n` +
        "hint: is the server running? start it with: runlater serve (or point --url / RUNLATER_URL at it)\n",
    );
  });

  it("refuses a URL that is not http(s) (exit 2)", async () => {
    const flag = await runIn(["--url", "ftp://x", "queue", "list"], {});
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("must start with http:// or https://");
    const env = await runIn(["queue", "list"], { RUNLATER_URL: "not a url" });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("RUNLATER_URL");
  });
});

describe("server errors", () => {
  it("print `error: <code>: <message>` and exit 1", async () => {
    const r = await h.run(["jobs", "scan", "missing_queue"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      'error: not_found: queue "missing_queue" does not exist; create it with QueueService.CreateQueue (CLI: runlater queue create missing_queue)\n',
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("usage", () => {
  it("exits 2 on an unknown command, an unknown flag and a bad value", async () => {
    for (const args of [
      ["bogus"],
      ["queue", "list", "--nope"],
      ["jobs", "scan", "here", "--limit", "lots"],
      ["queue"],
    ]) {
      const r = await h.run(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(/error|Usage/);
    }
  });

  it("has --help on every command, listing --json and the global --url on client commands", async () => {
    const walk = (cmd: Command, path: string[]): string[][] =>
      cmd.commands.flatMap((sub) => [[...path, sub.name()], ...walk(sub, [...path, sub.name()])]);
    const paths = walk(buildProgram(), []);
    expect(paths.map((p) => p.join(" "))).toEqual(
      expect.arrayContaining([
        "serve",
        "queue create",
        "queue update",
        "queue delete",
        "queue list",
        "queue show",
        "enqueue",
        "jobs get",
        "jobs scan",
        "jobs count",
        "jobs retry",
        "jobs delete",
        "workflow apply",
        "workflow start",
        "workflow show",
        "workflow list",
        "workflow cancel",
        "schedule create",
        "schedule show",
        "schedule pause",
        "work",
      ]),
    );
    for (const path of paths) {
      const r = await h.run([...path, "--help"]);
      expect(r.code, path.join(" ")).toBe(0);
      expect(r.stdout, path.join(" ")).toContain(`Usage: runlater ${path.join(" ")}`);
      const isGroup = path.length === 1 && ["queue", "jobs", "token", "workflow", "schedule"].includes(path[0]!);
      // They talk to stores, or to nobody, not to a server.
      const serverSide =
        path[0] === "serve" || path[0] === "migrate" || path[0] === "backup" || path.join(" ") === "token generate";
      if (!serverSide && !isGroup) {
        // work prints its commands' output, not a response: it has no --json.
        if (path[0] !== "work") expect(r.stdout, path.join(" ")).toContain("--json");
        expect(r.stdout, path.join(" ")).toContain("--url <url>");
        expect(r.stdout, path.join(" ")).toContain("$ runlater ");
      }
    }
  });
});
