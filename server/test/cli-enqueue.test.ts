import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, lines, startHarness, tableRows } from "./cli-harness.js";

let h: CliHarness;
beforeAll(async () => {
  h = await startHarness();
  await h.queues.createQueue({ name: "q", config: { priorities: 3, defaultAttemptsAllowed: 7 } });
});
afterAll(async () => {
  await h.stop();
});

async function job(id: string) {
  const res = await h.jobs.getJobs({ jobIds: [id], includeBody: true });
  const found = res.jobs[0];
  if (!found) throw new Error(`job ${id} not found`);
  return found;
}

/** Runs enqueue and returns the one id it printed. */
async function enqueueOne(args: string[], stdin?: string | Uint8Array): Promise<string> {
  const r = await h.run(["enqueue", ...args], { stdin });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const ids = lines(r.stdout);
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

describe("enqueue", () => {
  it("takes the body from the argument and prints the id", async () => {
    const id = await enqueueOne(["q", "héllo wörld"]);
    const j = await job(id);
    expect(new TextDecoder().decode(j.body)).toBe("héllo wörld");
    expect(j.queue).toBe("q");
    expect(j.priority).toBe(1);
    expect(j.attemptsAllowed).toBe(7);
    expect(j.state).toBe(JobState.PENDING);
  });

  it("reads stdin byte for byte with -", async () => {
    const bytes = new Uint8Array([0, 255, 10, 13, 128, 7]);
    const id = await enqueueOne(["q", "-"], bytes);
    expect((await job(id)).body).toEqual(bytes);
  });

  it("reads piped stdin when no body is given", async () => {
    const id = await enqueueOne(["q"], "from a pipe\n");
    expect(new TextDecoder().decode((await job(id)).body)).toBe("from a pipe\n");
  });

  it("reads --file byte for byte", async () => {
    const path = join(tmpdir(), `runlater-cli-${process.pid}.bin`);
    const bytes = new Uint8Array(300).map((_, i) => (i * 7) % 256);
    await writeFile(path, bytes);
    const id = await enqueueOne(["q", "--file", path]);
    expect((await job(id)).body).toEqual(bytes);
  });

  it("sends --priority, --attempts and --run-after as a delay", async () => {
    const before = Date.now();
    const id = await enqueueOne(["q", "x", "--priority", "3", "--attempts", "2", "--run-after", "1h"]);
    const j = await job(id);
    expect(j.priority).toBe(3);
    expect(j.attemptsAllowed).toBe(2);
    const runAfter = timestampMs(j.runAfter!);
    expect(runAfter).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(runAfter).toBeLessThanOrEqual(Date.now() + 3_600_000);
  });

  it("sends --run-after as an RFC 3339 time", async () => {
    const year = new Date().getUTCFullYear() + 2; // ahead, and within the ten years a run_after may be
    const id = await enqueueOne(["q", "x", "--run-after", `${year}-05-01T12:00:00.250+02:00`]);
    expect(timestampMs((await job(id)).runAfter!)).toBe(Date.parse(`${year}-05-01T10:00:00.250Z`));
  });

  it("returns the first job's id for a repeated --idempotency-key", async () => {
    const first = await enqueueOne(["q", "a", "--idempotency-key", "k1"]);
    const second = await enqueueOne(["q", "b", "--idempotency-key", "k1"]);
    expect(second).toBe(first);
    expect(new TextDecoder().decode((await job(first)).body)).toBe("a");
  });

  it("enqueues --count copies in batches the server accepts (≤ 1000 per call)", async () => {
    await h.queues.createQueue({ name: "bulk" });
    const r = await h.run(["enqueue", "bulk", "same", "--count", "2345"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const ids = lines(r.stdout);
    expect(ids).toHaveLength(2345);
    expect(new Set(ids).size).toBe(2345);
    expect((await h.jobs.countJobs({ queue: "bulk" })).count).toBe(2345n);
  });

  it("prints EnqueueResponse JSON with --json", async () => {
    const r = await h.run(["enqueue", "q", "j", "--count", "3", "--json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.jobIds).toHaveLength(3);
    expect((await h.jobs.getJobs({ jobIds: doc.jobIds })).notFoundJobIds).toEqual([]);
  });
});

describe("ordering keys", () => {
  it("sends --ordering-key; jobs get and scan show it, and only the key's first job is handed out", async () => {
    await h.queues.createQueue({ name: "ordered" });
    const first = await enqueueOne(["ordered", "one", "--ordering-key", "acct-42"]);
    const second = await enqueueOne(["ordered", "two", "--ordering-key", "acct-42"]);
    const free = await enqueueOne(["ordered", "free"]);
    expect((await job(second)).orderingKey).toBe("acct-42");
    expect((await job(second)).state).toBe(JobState.PENDING); // waiting behind `first`, shown as pending
    const got = await h.run(["jobs", "get", second]);
    expect(got.stdout).toMatch(/^ordering_key: +acct-42$/m);
    expect((await h.run(["jobs", "get", free])).stdout).not.toContain("ordering_key");
    const rows = tableRows((await h.run(["jobs", "scan", "ordered"])).stdout);
    expect(rows[0]).toContain("ORDERING KEY");
    const keyColumn = rows[0]!.indexOf("ORDERING KEY");
    const keyOf = new Map(rows.slice(1).map((row) => [row[0], row[keyColumn]]));
    expect(keyOf).toEqual(
      new Map([
        [first, "acct-42"],
        [second, "acct-42"],
        [free, "-"],
      ]),
    );
    const handed = await h.workers.dequeue({ queue: "ordered", limit: 10 });
    expect(handed.jobs.map((j) => j.jobId).sort()).toEqual([first, free].sort());
  });

  it("quotes a key with spaces in the table", async () => {
    await h.queues.createQueue({ name: "ordered_spaces" });
    await enqueueOne(["ordered_spaces", "x", "--ordering-key", "a b"]);
    const r = await h.run(["jobs", "scan", "ordered_spaces"]);
    expect(tableRows(r.stdout)[1]).toContain('"a b"');
  });
});

describe("enqueue errors", () => {
  it("needs a body when stdin is a terminal (exit 2)", async () => {
    const r = await h.run(["enqueue", "q"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: no body");
    expect(r.stdout).toBe("");
  });

  it("refuses a body argument together with --file", async () => {
    const r = await h.run(["enqueue", "q", "x", "--file", "/etc/hostname"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("not both");
  });

  it("refuses --idempotency-key with --count above 1", async () => {
    const r = await h.run(["enqueue", "q", "x", "--count", "2", "--idempotency-key", "k"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--idempotency-key");
  });

  it("refuses a bad --run-after and a bad --count before calling", async () => {
    const bad = await h.run(["enqueue", "q", "x", "--run-after", "tomorrow"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("neither an RFC 3339 time");
    const zero = await h.run(["enqueue", "q", "x", "--count", "0"]);
    expect(zero.code).toBe(2);
  });

  it("fails with exit 1 on a missing --file", async () => {
    const r = await h.run(["enqueue", "q", "--file", "/definitely/not/here"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot read --file: ENOENT/);
  });

  it("passes on the server's validation error", async () => {
    const r = await h.run(["enqueue", "q", "x", "--priority", "9"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: invalid_argument: .*priority/);
    const missing = await h.run(["enqueue", "no_such_queue", "x"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: queue "no_such_queue" does not exist/);
  });
});
