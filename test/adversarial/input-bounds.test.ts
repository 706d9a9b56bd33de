/**
 * Values a client can send that the protocol cannot encode back (a run_after in year
 * 12027, a ten-thousand-year retry delay or claim extension) are refused with
 * invalid_argument naming the field and the bound, so no stored job can poison later
 * listings of its queue. Engine rules: the memory store stands for all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type Target } from "./harness.js";

const FAR = "315576000000s"; // the largest google.protobuf.Duration
/** Encodable in JSON (which stops at year 9999), but far beyond the ten years allowed. */
const YEAR_9000 = "9000-01-01T00:00:00Z";

describe("durations and timestamps on input are bounded", () => {
  let t: Target;
  beforeAll(async () => {
    t = await serve("memory");
    await t.rpc("QueueService/CreateQueue", { name: "q" });
  });
  afterAll(() => t.stop());

  async function runningJob(): Promise<{ jobId: string; claimToken: string }> {
    await t.rpc("JobService/Enqueue", { jobs: [{ queue: "q", body: "aGk=" }] });
    const { body } = await t.rpc("WorkerService/Dequeue", { queue: "q", limit: 1 });
    const [job] = body.jobs as Array<{ jobId: string; claimToken: string }>;
    return job!;
  }

  function expectRefused(
    answer: { status: number; body: Record<string, unknown> },
    field: string,
    bound: RegExp,
  ): void {
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("invalid_argument");
    expect(answer.body.message).toContain(field);
    expect(answer.body.message).toMatch(bound);
  }

  it("refuses a timestamp JSON cannot carry as invalid_argument", async () => {
    const answer = await t.rpc("JobService/Enqueue", { jobs: [{ queue: "q", runAfter: "12027-01-01T00:00:00Z" }] });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("invalid_argument");
  });

  it("refuses a run_after more than ten years ahead on enqueue, and accepts one just inside", async () => {
    expectRefused(
      await t.rpc("JobService/Enqueue", { jobs: [{ queue: "q", runAfter: YEAR_9000 }] }),
      "jobs[0].run_after",
      /3650 days ahead/,
    );
    const inside = new Date(Date.now() + 3649 * 86_400_000).toISOString();
    const ok = await t.rpc("JobService/Enqueue", { jobs: [{ queue: "q", runAfter: inside }] });
    expect(ok.status).toBe(200);
    const listed = await t.rpc("JobService/GetJobs", { jobIds: ok.body.jobIds });
    expect(listed.status).toBe(200);
    expect((listed.body.jobs as Array<{ runAfter: string }>)[0]!.runAfter).toBe(
      inside.replace(/\.\d+Z$/, (ms) => (ms === ".000Z" ? "Z" : ms)),
    );
  });

  it("refuses a failure ACK whose retry_delay is longer than a year, and leaves the job running", async () => {
    const job = await runningJob();
    const answer = await t.rpc("WorkerService/Ack", { queue: "q", failed: [{ ...job, retryDelay: FAR }] });
    expectRefused(answer, "failed[0].retry_delay", /longest allowed is 365 days/);
    const { body } = await t.rpc("JobService/GetJobs", { jobIds: [job.jobId] });
    expect((body.jobs as Array<{ state: string }>)[0]!.state).toBe("JOB_STATE_RUNNING");
  });

  it("refuses a checkpoint extending a claim by more than seven days, or moving a job too far ahead", async () => {
    const job = await runningJob();
    expectRefused(
      await t.rpc("WorkerService/Checkpoint", { queue: "q", checkpoints: [{ ...job, extendClaimBy: FAR }] }),
      "checkpoints[0].extend_claim_by",
      /7 days/,
    );
    expectRefused(
      await t.rpc("WorkerService/Checkpoint", {
        queue: "q",
        checkpoints: [{ ...job, moveToPending: true, runAfter: YEAR_9000 }],
      }),
      "checkpoints[0].run_after",
      /3650 days ahead/,
    );
  });

  it("refuses queue configs with claim timeouts, retry delays or retentions beyond their bounds", async () => {
    expectRefused(
      await t.rpc("QueueService/CreateQueue", { name: "a", config: { claimTimeout: "864000s" } }),
      "claim_timeout",
      /7 days/,
    );
    expectRefused(
      await t.rpc("QueueService/CreateQueue", { name: "b", config: { retryPolicy: { maxDelay: FAR } } }),
      "retry_policy",
      /365 days/,
    );
    expectRefused(
      await t.rpc("QueueService/CreateQueue", { name: "c", config: { failedRetention: FAR } }),
      "failed_retention",
      /3650 days/,
    );
  });

  it("refuses a retry of failed jobs scheduled too far ahead", async () => {
    expectRefused(
      await t.rpc("JobService/RetryFailedJobs", { queue: "q", runAfter: YEAR_9000 }),
      "run_after",
      /3650 days ahead/,
    );
  });

  it("keeps every listing of the queue answering after all of the above", async () => {
    const scan = await t.rpc("JobService/ScanJobs", { queue: "q", limit: 1000 });
    expect(scan.status).toBe(200);
  });
});
