/**
 * The dashboard's logic that needs no browser: throughput from counters, the filtered
 * and paged job scan (against a fake JobService), body views, spans, routes.
 */
import { create } from "@bufbuild/protobuf";
import { type Job, JobSchema, JobState } from "@runlater/sdk/gen/job_pb.js";
import { describe, expect, it } from "vitest";
import type { Api } from "../src/api.js";
import { bodyHex, bodyJson, bodyText, MAX_TEXT_BYTES, span } from "../src/format.js";
import { RateTracker } from "../src/rates.js";
import { match, parsePath } from "../src/router.js";
import { type Filters, MAX_EXAMINED, scanPage } from "../src/scan.js";

describe("RateTracker", () => {
  it("turns successive totals into per-second rates over its window", () => {
    const t = new RateTracker(5_000);
    expect(t.add("q", 0, { enqueued: 0, succeeded: 0, failed: 0, since: 1 })).toBeUndefined();
    expect(t.add("q", 2_000, { enqueued: 20, succeeded: 10, failed: 2, since: 1 })).toEqual({
      enqueued: 10,
      succeeded: 5,
      failed: 1,
    });
    t.add("q", 4_000, { enqueued: 40, succeeded: 10, failed: 2, since: 1 });
    expect(t.add("q", 5_000, { enqueued: 50, succeeded: 10, failed: 2, since: 1 })!.enqueued).toBe(10);
    // The window slides: reads before 9 s − 5 s drop out (the one at 4 s still covers it).
    expect(t.add("q", 9_000, { enqueued: 50, succeeded: 10, failed: 2, since: 1 })!.enqueued).toBe(2);
  });

  it("starts over when the counters are another node's or restarted, instead of showing a negative rate", () => {
    const t = new RateTracker();
    t.add("q", 0, { enqueued: 100, succeeded: 0, failed: 0, since: 1 });
    expect(t.add("q", 1_000, { enqueued: 5, succeeded: 0, failed: 0, since: 1 })).toBeUndefined();
    expect(t.add("q", 2_000, { enqueued: 15, succeeded: 0, failed: 0, since: 7 })).toBeUndefined();
    expect(t.add("q", 3_000, { enqueued: 25, succeeded: 0, failed: 0, since: 7 })!.enqueued).toBe(10);
  });
});

/** A JobService.ScanJobs over `jobs` (already in scan order) with numeric page tokens, counting calls. */
function fakeApi(jobs: Job[]) {
  const calls: Array<{ token: string; limit: number }> = [];
  const api = {
    jobs: {
      scanJobs: async (req: { pageToken: string; limit: number }) => {
        calls.push({ token: req.pageToken, limit: req.limit });
        const from = req.pageToken === "" ? 0 : Number(req.pageToken);
        const page = jobs.slice(from, from + req.limit);
        const next = from + req.limit < jobs.length ? String(from + req.limit) : "";
        return { jobs: page, nextPageToken: next };
      },
    },
  } as unknown as Api;
  return { api, calls };
}

function job(i: number, runAfterMs: number, customStatus = ""): Job {
  return create(JobSchema, {
    jobId: `q.0.${i}`,
    state: JobState.PENDING,
    runAfter: { seconds: BigInt(Math.floor(runAfterMs / 1000)), nanos: 0 },
    customStatus,
  });
}

const none: Filters = { state: JobState.UNSPECIFIED, priority: 0, bodyRegex: "", customStatus: "" };

describe("scanPage", () => {
  it("without filters of its own, is one ScanJobs call per page", async () => {
    const { api, calls } = fakeApi(Array.from({ length: 60 }, (_, i) => job(i, 1e9 - i * 1000)));
    const p1 = await scanPage(api, "q", none, 25, { token: "", skip: 0 });
    expect(p1.jobs.map((j) => j.jobId)[0]).toBe("q.0.0");
    expect(p1.next).toEqual({ token: "25", skip: 0 });
    const p3 = await scanPage(api, "q", none, 25, { token: "50", skip: 0 });
    expect(p3.jobs).toHaveLength(10);
    expect(p3.next).toBeUndefined();
    expect(calls).toEqual([
      { token: "", limit: 25 },
      { token: "50", limit: 25 },
    ]);
  });

  it("filters custom status across server pages and resumes in the middle of one", async () => {
    const jobs = Array.from({ length: 1200 }, (_, i) => job(i, 1e9 - i * 1000, i % 100 === 7 ? "VIP" : "plain"));
    const { api } = fakeApi(jobs);
    const f = { ...none, customStatus: "vip" };
    const p1 = await scanPage(api, "q", f, 5, { token: "", skip: 0 });
    expect(p1.jobs.map((j) => j.jobId)).toEqual(["q.0.7", "q.0.107", "q.0.207", "q.0.307", "q.0.407"]);
    expect(p1.next).toEqual({ token: "", skip: 408 }); // inside the first 500-job server page
    const p2 = await scanPage(api, "q", f, 5, p1.next!);
    expect(p2.jobs.map((j) => j.jobId)).toEqual(["q.0.507", "q.0.607", "q.0.707", "q.0.807", "q.0.907"]);
    const p3 = await scanPage(api, "q", f, 5, p2.next!);
    expect(p3.jobs.map((j) => j.jobId)).toEqual(["q.0.1007", "q.0.1107"]);
    expect(p3.next).toBeUndefined();
  });

  it("stops at the first job older than the time range (scan order is newest run_after first)", async () => {
    const { api, calls } = fakeApi(Array.from({ length: 3000 }, (_, i) => job(i, 1e9 - i * 1000)));
    const page = await scanPage(api, "q", { ...none, from: 1e9 - 20_000, to: 1e9 - 10_000 }, 25, {
      token: "",
      skip: 0,
    });
    expect(page.jobs.map((j) => j.jobId)).toEqual(Array.from({ length: 11 }, (_, i) => `q.0.${10 + i}`));
    expect(page.next).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it("looks at no more than MAX_EXAMINED jobs for one page, and says so", async () => {
    const { api, calls } = fakeApi(Array.from({ length: MAX_EXAMINED + 2000 }, (_, i) => job(i, 1e9)));
    const page = await scanPage(api, "q", { ...none, customStatus: "never" }, 25, { token: "", skip: 0 });
    expect(page.jobs).toEqual([]);
    expect(page.budgetSpent).toBe(true);
    expect(page.examined).toBe(MAX_EXAMINED);
    expect(page.next).toEqual({ token: String(MAX_EXAMINED), skip: 0 });
    expect(calls).toHaveLength(MAX_EXAMINED / 500);
  });
});

describe("body views", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  it("pretty-prints JSON, says why a body is not JSON, and shows bytes as a hex dump", () => {
    expect(bodyJson(bytes('{"a":[1,2]}'))).toEqual({ ok: true, text: '{\n  "a": [\n    1,\n    2\n  ]\n}' });
    expect(bodyJson(bytes("hello")).ok).toBe(false);
    expect(bodyJson(new Uint8Array([0x7b, 0xff, 0x7d])).ok).toBe(false); // not UTF-8
    expect(bodyHex(bytes("hello, world!\n\u0000xyz"))).toBe(
      [
        "00000000  68 65 6c 6c 6f 2c 20 77 6f 72 6c 64 21 0a 00 78  hello, world!..x",
        `00000010  79 7a${" ".repeat(42)}  yz`,
      ].join("\n"),
    );
    expect(bodyText(new Uint8Array(MAX_TEXT_BYTES + 10).fill(0x61))).toHaveLength(MAX_TEXT_BYTES);
  });

  it("writes spans as a person reads them", () => {
    expect([850, 42_000, 185_000, 7_800_000, 3 * 86_400_000 + 4 * 3_600_000].map(span)).toEqual([
      "850 ms",
      "42 s",
      "3 min 5 s",
      "2 h 10 min",
      "3 d 4 h",
    ]);
  });
});

describe("routes", () => {
  it("match hash paths, decoding each segment", () => {
    const routes = [
      { pattern: [], render: () => "overview" },
      { pattern: ["queues", ":name"], render: () => "queue" },
    ];
    expect(match(routes, parsePath("#/"))?.route.render({})).toBe("overview");
    expect(match(routes, parsePath("#/queues/my%20q"))?.params).toEqual({ name: "my q" });
    expect(match(routes, parsePath("#/queues/a/b"))).toBeUndefined();
    expect(parsePath("#/jobs/%E0%A4%A")).toEqual(["jobs", "%E0%A4%A"]); // malformed escapes kept as typed
  });
});
