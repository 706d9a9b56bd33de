import { timestampMs } from "@bufbuild/protobuf/wkt";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, lines, startHarness, tableRows } from "./cli-harness.js";

let h: CliHarness;
const text = (s: string) => new TextEncoder().encode(s);
const inAnHour = () => ({ seconds: BigInt(Math.floor(Date.now() / 1000) + 3600), nanos: 0 });

/** Ids by name: jq holds pending jobs, jf holds failed ones (and one scheduled). */
const ids: Record<string, string> = {};

async function enqueue(
  name: string,
  queue: string,
  body: Uint8Array,
  extra: { priority?: number; future?: boolean } = {},
) {
  const res = await h.jobs.enqueue({
    jobs: [{ queue, body, priority: extra.priority ?? 0, runAfter: extra.future ? inAnHour() : undefined }],
  });
  ids[name] = res.jobIds[0]!;
}

/** Hands every due job of `queue` to a "worker" that fails it for good. */
async function failAllDue(queue: string, expected: number) {
  const claimed: Array<{ jobId: string; claimToken: string }> = [];
  for (let tries = 0; claimed.length < expected && tries < 20; tries++) {
    const res = await h.workers.dequeue({ queue, limit: 100, wait: { seconds: 1n, nanos: 0 } });
    claimed.push(...res.jobs);
  }
  expect(claimed).toHaveLength(expected);
  await h.workers.ack({
    queue,
    failed: claimed.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken, noRetry: true })),
  });
}

beforeAll(async () => {
  h = await startHarness();
  await h.queues.createQueue({ name: "jq" });
  await h.queues.createQueue({ name: "jf" });
  await enqueue("alpha", "jq", text("alpha text"));
  await enqueue("binary", "jq", new Uint8Array([0, 1, 2, 254, 255]), { priority: 2 });
  await enqueue("later", "jq", text("gamma later"), { future: true });
  await enqueue("f1", "jf", text("fail one"));
  await enqueue("f2", "jf", text("fail two"), { priority: 2 });
  await enqueue("f3", "jf", text("fail three"), { priority: 2 });
  await failAllDue("jf", 3);
  await enqueue("scheduled", "jf", text("not yet"), { future: true });
});
afterAll(async () => {
  await h.stop();
});

describe("jobs get", () => {
  it("shows each job's fields", async () => {
    const r = await h.run(["jobs", "get", ids.alpha!, ids.f1!]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(new RegExp(`^job_id: +${ids.alpha}$`, "m"));
    expect(r.stdout).toMatch(/^state: +PENDING$/m);
    expect(r.stdout).toMatch(/^state: +FAILED$/m);
    expect(r.stdout).toMatch(/^finished_at: +\d{4}-/m);
    expect(r.stdout).not.toContain("body");
  });

  it("prints text bodies as UTF-8 and binary ones as base64, saying which", async () => {
    const r = await h.run(["jobs", "get", ids.alpha!, ids.binary!, "--body"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("body (utf-8, 10 bytes):\nalpha text\n");
    expect(r.stdout).toContain(`body (base64, 5 bytes):\n${Buffer.from([0, 1, 2, 254, 255]).toString("base64")}\n`);
  });

  it("lists unknown ids on stderr and exits 1", async () => {
    const r = await h.run(["jobs", "get", ids.alpha!, "jq.0.nonexistent"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^job_id: /);
    expect(r.stderr).toBe("not found: jq.0.nonexistent\n");
  });

  it("prints GetJobsResponse JSON with base64 bodies", async () => {
    const r = await h.run(["jobs", "get", ids.binary!, "--body", "--json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.jobs[0].jobId).toBe(ids.binary);
    expect(doc.jobs[0].state).toBe("JOB_STATE_PENDING");
    expect(Buffer.from(doc.jobs[0].body, "base64")).toEqual(Buffer.from([0, 1, 2, 254, 255]));
    expect(doc.notFoundJobIds).toEqual([]);
  });

  it("needs at least one id", async () => {
    const r = await h.run(["jobs", "get"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing required argument");
  });
});

describe("jobs scan", () => {
  it("lists a queue's jobs, newest run_after first", async () => {
    const r = await h.run(["jobs", "scan", "jq"]);
    expect(r.code).toBe(0);
    const rows = tableRows(r.stdout);
    expect(rows[0]).toEqual(["JOB ID", "STATE", "PRIORITY", "RUN AFTER", "ATTEMPTS LEFT", "CREATED"]);
    expect(rows.slice(1).map((row) => row[0])).toEqual([ids.later, ids.binary, ids.alpha]);
    expect(rows[2]!.slice(1, 3)).toEqual(["PENDING", "2"]);
    expect(r.stderr).toBe("");
  });

  it("applies --state, --priority, --future, --due and --body-regex", async () => {
    const idsOf = async (args: string[]) => {
      const r = await h.run(["jobs", "scan", ...args]);
      expect(r.code).toBe(0);
      return tableRows(r.stdout)
        .slice(1)
        .map((row) => row[0])
        .sort();
    };
    expect(await idsOf(["jf", "--state", "failed"])).toEqual([ids.f1, ids.f2, ids.f3].sort());
    expect(await idsOf(["jf", "--state", "FAILED", "--priority", "2"])).toEqual([ids.f2, ids.f3].sort());
    expect(await idsOf(["jf", "--future"])).toEqual([ids.scheduled]);
    expect(await idsOf(["jq", "--due"])).toEqual([ids.alpha, ids.binary].sort());
    expect(await idsOf(["jf", "--body-regex", "^fail t"])).toEqual([ids.f2, ids.f3].sort());
  });

  it("shows bodies in a column with --body", async () => {
    const r = await h.run(["jobs", "scan", "jq", "--body"]);
    const rows = tableRows(r.stdout);
    expect(rows[0]!.at(-1)).toBe("BODY");
    expect(rows.find((row) => row[0] === ids.alpha)!.at(-1)).toBe('"alpha text"');
    expect(rows.find((row) => row[0] === ids.binary)!.at(-1)).toBe(
      `base64:${Buffer.from([0, 1, 2, 254, 255]).toString("base64")}`,
    );
  });

  it("pages with --limit and --page-token, and follows pages with --all", async () => {
    const first = await h.run(["jobs", "scan", "jq", "--limit", "2"]);
    expect(tableRows(first.stdout)).toHaveLength(3);
    const token = /--page-token (\S+)/.exec(first.stderr)?.[1];
    expect(token).toBeDefined();
    const second = await h.run(["jobs", "scan", "jq", "--limit", "2", "--page-token", token!]);
    expect(
      tableRows(second.stdout)
        .slice(1)
        .map((row) => row[0]),
    ).toEqual([ids.alpha]);
    expect(second.stderr).toBe("");
    const all = await h.run(["jobs", "scan", "jq", "--limit", "1", "--all"]);
    expect(
      tableRows(all.stdout)
        .slice(1)
        .map((row) => row[0]),
    ).toEqual([ids.later, ids.binary, ids.alpha]);
    expect(all.stderr).toBe("");
  });

  it("prints one ScanJobsResponse JSON document with --all --json", async () => {
    const r = await h.run(["jobs", "scan", "jq", "--limit", "1", "--all", "--json", "--body"]);
    const doc = JSON.parse(r.stdout);
    expect(doc.jobs.map((j: { jobId: string }) => j.jobId)).toEqual([ids.later, ids.binary, ids.alpha]);
    expect(doc.nextPageToken).toBe("");
    expect(Buffer.from(doc.jobs[2].body, "base64").toString()).toBe("alpha text");
  });

  it("says so on stderr when nothing matches", async () => {
    const r = await h.run(["jobs", "scan", "jq", "--state", "running"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("no jobs match\n");
  });

  it("refuses a bad state and --future with --due", async () => {
    const bad = await h.run(["jobs", "scan", "jq", "--state", "done"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("pending, running, succeeded, failed");
    const both = await h.run(["jobs", "scan", "jq", "--future", "--due"]);
    expect(both.code).toBe(2);
  });
});

describe("jobs count", () => {
  it("counts with the same filters", async () => {
    const count = async (args: string[]) => {
      const r = await h.run(["jobs", "count", ...args]);
      expect(r.code).toBe(0);
      return r.stdout;
    };
    expect(await count(["jq"])).toBe("3\n");
    expect(await count(["jq", "--due"])).toBe("2\n");
    expect(await count(["jq", "--future"])).toBe("1\n");
    expect(await count(["jf", "--state", "failed", "--priority", "2"])).toBe("2\n");
    expect(await count(["jf", "--body-regex", "one|three"])).toBe("2\n");
    const json = await h.run(["jobs", "count", "jf", "--state", "pending", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ count: "1" });
  });

  it("passes on a bad regex from the server", async () => {
    const r = await h.run(["jobs", "count", "jq", "--body-regex", "("]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: invalid_argument: /);
  });
});

// Retry and delete change the jobs the tests above read, so they run on their own queue.
describe("jobs retry and delete", () => {
  beforeAll(async () => {
    await h.queues.createQueue({ name: "jr" });
    await enqueue("r1", "jr", text("retry me one"));
    await enqueue("r2", "jr", text("retry me two"), { priority: 2 });
    await enqueue("r3", "jr", text("keep failed"), { priority: 3 });
    await failAllDue("jr", 3);
  });

  it("retries FAILED jobs of one priority with fresh attempts and a run_after", async () => {
    const before = Date.now();
    const r = await h.run(["jobs", "retry", "jr", "--priority", "2", "--attempts", "3", "--run-after", "10m"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("retried 1 job (now PENDING)\n");
    const res = await h.jobs.getJobs({ jobIds: [ids.r2!] });
    const j = res.jobs[0]!;
    expect(j.state).toBe(JobState.PENDING);
    expect(j.attemptsAllowed).toBe(3);
    expect(j.attemptsRemaining).toBe(3);
    expect(timestampMs(j.runAfter!)).toBeGreaterThanOrEqual(before + 600_000);
  });

  it("retries with --limit and prints RetryFailedJobsResponse JSON", async () => {
    const r = await h.run(["jobs", "retry", "jr", "--limit", "1", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ count: "1" });
    expect((await h.jobs.countJobs({ queue: "jr", state: JobState.FAILED })).count).toBe(1n);
  });

  it("needs --state to delete (exit 2, nothing deleted)", async () => {
    const r = await h.run(["jobs", "delete", "jr"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("required option '--state <state>'");
    expect((await h.jobs.countJobs({ queue: "jr" })).count).toBe(3n);
  });

  it("deletes jobs of one state matching the filters", async () => {
    const none = await h.run(["jobs", "delete", "jr", "--state", "pending", "--body-regex", "nothing matches this"]);
    expect(none.stdout).toBe("deleted 0 jobs\n");
    const r = await h.run(["jobs", "delete", "jr", "--state", "pending", "--priority", "2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("deleted 1 job\n");
    expect((await h.jobs.getJobs({ jobIds: [ids.r2!] })).notFoundJobIds).toEqual([ids.r2]);
    const json = await h.run(["jobs", "delete", "jr", "--state", "failed", "--limit", "5", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ count: "1" });
    expect((await h.jobs.countJobs({ queue: "jr" })).count).toBe(1n);
  });

  it("reports a missing queue", async () => {
    const r = await h.run(["jobs", "retry", "nowhere"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: not_found: queue "nowhere" does not exist/);
    expect(lines(r.stdout)).toEqual([]);
  });
});
