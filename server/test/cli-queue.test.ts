import { durationMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, startHarness, tableRows } from "./cli-harness.js";

let h: CliHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

async function config(name: string) {
  const res = await h.queues.getQueue({ name });
  if (!res.queue?.config) throw new Error("no config");
  return res.queue.config;
}

describe("queue create", () => {
  it("sends every config flag", async () => {
    const r = await h.run([
      "queue",
      "create",
      "all_flags",
      "--priorities",
      "5",
      "--claim-timeout",
      "30s",
      "--retry-initial-delay",
      "500ms",
      "--retry-linear-steps",
      "3",
      "--retry-max-delay",
      "1h30m",
      "--default-attempts",
      "4",
      "--max-dequeue-per-second",
      "2.5",
      "--paused",
      "--succeeded-retention",
      "2h",
      "--failed-retention",
      "3d",
      "--partitions",
      "4",
      "--max-body-bytes",
      "2048",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^created queue all_flags\n/);
    expect(r.stdout).toMatch(/^claim-timeout: +30s$/m);
    expect(r.stdout).toMatch(/^retry-max-delay: +1h30m$/m);
    const c = await config("all_flags");
    expect(c.priorities).toBe(5);
    expect(durationMs(c.claimTimeout!)).toBe(30_000);
    expect(durationMs(c.retryPolicy!.initialDelay!)).toBe(500);
    expect(c.retryPolicy!.linearSteps).toBe(3);
    expect(durationMs(c.retryPolicy!.maxDelay!)).toBe(90 * 60_000);
    expect(c.defaultAttemptsAllowed).toBe(4);
    expect(c.maxDequeuePerSecond).toBe(2.5);
    expect(c.paused).toBe(true);
    expect(durationMs(c.succeededRetention!)).toBe(2 * 3_600_000);
    expect(durationMs(c.failedRetention!)).toBe(3 * 86_400_000);
    expect(c.partitions).toBe(4);
    expect(c.maxBodyBytes).toBe(2048);
    expect(c.fifo).toBe(false);
  });

  it("creates a fifo queue and defaults what is not given", async () => {
    const r = await h.run(["queue", "create", "ordered", "--fifo"]);
    expect(r.code).toBe(0);
    const c = await config("ordered");
    expect(c.fifo).toBe(true);
    expect(c.paused).toBe(false);
    expect(c.priorities).toBe(3);
    expect(durationMs(c.claimTimeout!)).toBe(5 * 60_000);
  });

  it("leaves an existing queue alone and says the flags were not applied", async () => {
    await h.run(["queue", "create", "existing", "--priorities", "2"]);
    const r = await h.run(["queue", "create", "existing", "--priorities", "7"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^queue existing already exists; nothing changed\n/);
    expect(r.stderr).toContain("runlater queue update existing");
    expect((await config("existing")).priorities).toBe(2);
  });

  it("prints CreateQueueResponse as proto3 JSON with --json", async () => {
    const r = await h.run(["queue", "create", "as_json", "--claim-timeout", "1.5s", "--json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.created).toBe(true);
    expect(doc.queue.name).toBe("as_json");
    expect(doc.queue.config.claimTimeout).toBe("1.500s");
    expect(doc.queue.config.paused).toBe(false);
  });

  it("reports the server's refusal of a bad name with its code", async () => {
    const r = await h.run(["queue", "create", "bad-name"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^error: invalid_argument: name "bad-name" is not a valid queue name/);
  });

  it("refuses a malformed duration before calling the server", async () => {
    const r = await h.run(["queue", "create", "never_made", "--claim-timeout", "30"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--claim-timeout");
    expect(r.stderr).toContain("is not a duration");
    const list = await h.queues.listQueues({});
    expect(list.queues.map((q) => q.name)).not.toContain("never_made");
  });
});

describe("queue update", () => {
  beforeAll(async () => {
    await h.queues.createQueue({ name: "upd", config: { maxDequeuePerSecond: 7, priorities: 3 } });
  });

  it("--pause pauses and --resume resumes", async () => {
    const paused = await h.run(["queue", "update", "upd", "--pause"]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/^updated queue upd \(paused\)\n/);
    expect(paused.stdout).toMatch(/^paused: +yes$/m);
    expect((await config("upd")).paused).toBe(true);
    const resumed = await h.run(["queue", "update", "upd", "--resume"]);
    expect(resumed.code).toBe(0);
    expect((await config("upd")).paused).toBe(false);
  });

  it("changes only the fields given (the mask names exactly the flags)", async () => {
    await h.run(["queue", "update", "upd", "--retry-initial-delay", "2s"]);
    const r = await h.run(["queue", "update", "upd", "--claim-timeout", "45s", "--retry-max-delay", "20m"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("(claim_timeout, retry_policy.max_delay)");
    const c = await config("upd");
    expect(durationMs(c.claimTimeout!)).toBe(45_000);
    expect(durationMs(c.retryPolicy!.maxDelay!)).toBe(20 * 60_000);
    // Untouched: a whole-retry_policy mask would have reset this to 5 s.
    expect(durationMs(c.retryPolicy!.initialDelay!)).toBe(2000);
    expect(c.maxDequeuePerSecond).toBe(7);
  });

  it("sets the rate to unlimited with 0", async () => {
    const r = await h.run(["queue", "update", "upd", "--max-dequeue-per-second", "0", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).queue.config.maxDequeuePerSecond).toBe(0);
    expect((await config("upd")).maxDequeuePerSecond).toBe(0);
  });

  it("refuses to run with no setting flags (exit 2, nothing sent)", async () => {
    const r = await h.run(["queue", "update", "upd"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: nothing to change");
  });

  it("refuses --pause with --resume", async () => {
    const r = await h.run(["queue", "update", "upd", "--pause", "--resume"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot be used with/);
    expect((await config("upd")).paused).toBe(false);
  });

  it("does not offer create-only flags", async () => {
    const r = await h.run(["queue", "update", "upd", "--fifo"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--fifo'");
  });

  it("grows partitions, and passes on the refusal to shrink them", async () => {
    expect((await h.run(["queue", "update", "upd", "--partitions", "3"])).code).toBe(0);
    expect((await config("upd")).partitions).toBe(3);
    const shrink = await h.run(["queue", "update", "upd", "--partitions", "2"]);
    expect(shrink.code).toBe(1);
    expect(shrink.stderr).toMatch(/partitions can only grow/);
  });

  it("passes on the server's errors", async () => {
    const shrink = await h.run(["queue", "update", "upd", "--priorities", "2"]);
    expect(shrink.code).toBe(1);
    expect(shrink.stderr).toMatch(/^error: invalid_argument: priorities can only grow/);
    const missing = await h.run(["queue", "update", "nope", "--pause"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: queue "nope" does not exist/);
  });
});

describe("queue delete", () => {
  it("deletes, and says so when there was nothing to delete", async () => {
    await h.queues.createQueue({ name: "doomed" });
    const r = await h.run(["queue", "delete", "doomed"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("deleted queue doomed\n");
    expect((await h.queues.listQueues({})).queues.map((q) => q.name)).not.toContain("doomed");
    const again = await h.run(["queue", "delete", "doomed", "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ deleted: false });
  });
});

describe("queue list and show", () => {
  beforeAll(async () => {
    await h.queues.createQueue({ name: "listed", config: { maxDequeuePerSecond: 3 } });
    await h.jobs.enqueue({
      jobs: [
        { queue: "listed", body: new Uint8Array([1]) },
        { queue: "listed", body: new Uint8Array([2]) },
        {
          queue: "listed",
          body: new Uint8Array([3]),
          runAfter: { seconds: BigInt(Math.floor(Date.now() / 1000) + 3600), nanos: 0 },
        },
      ],
    });
    await h.queues.updateQueue({ name: "listed", config: { paused: true }, updateMask: { paths: ["paused"] } });
  });

  it("lists every queue in a table with counts, pause and rate", async () => {
    const r = await h.run(["queue", "list"]);
    expect(r.code).toBe(0);
    const rows = tableRows(r.stdout);
    expect(rows[0]).toEqual([
      "NAME",
      "PENDING",
      "SCHEDULED",
      "RUNNING",
      "SUCCEEDED",
      "FAILED",
      "OLDEST PENDING",
      "PAUSED",
      "RATE",
    ]);
    const listed = rows.find((row) => row[0] === "listed");
    expect(listed).toBeDefined();
    expect(listed!.slice(1, 6)).toEqual(["3", "1", "0", "0", "0"]);
    expect(listed!.slice(7)).toEqual(["yes", "3/s"]);
    const names = rows.slice(1).map((row) => row[0]);
    expect(names).toEqual((await h.queues.listQueues({})).queues.map((q) => q.name));
  });

  it("lists as ListQueuesResponse JSON", async () => {
    const r = await h.run(["queue", "list", "--json"]);
    const doc = JSON.parse(r.stdout);
    const listed = doc.queues.find((q: { name: string }) => q.name === "listed");
    expect(listed.stats.pending).toBe("3");
    expect(listed.stats.scheduled).toBe("1");
  });

  it("shows one queue's config and stats", async () => {
    const r = await h.run(["queue", "show", "listed"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^name: +listed$/m);
    expect(r.stdout).toMatch(/^paused: +yes$/m);
    expect(r.stdout).toMatch(/^max-dequeue-per-second: +3\/s$/m);
    expect(r.stdout).toMatch(/^claim-timeout: +5m$/m);
    expect(r.stdout).toMatch(/^failed-retention: +7d$/m);
    expect(r.stdout).toMatch(/^stats:\n {2}pending: +3\n {2}scheduled: +1\n/m);
  });

  it("fails on a missing queue", async () => {
    const r = await h.run(["queue", "show", "ghost"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: not_found: queue "ghost" does not exist/);
  });
});
