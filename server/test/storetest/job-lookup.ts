import { describe, expect, it } from "vitest";
import type { ScanCursor } from "../../src/domain/job-filter.js";
import type { JobRecord } from "../../src/domain/job-record.js";
import { createQueue, handOut, insert, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

const text = (s: string) => new TextEncoder().encode(s);

export function exerciseJobLookup(open: OpenStore): void {
  describe("jobGetMany / jobScan / jobCount", () => {
    it("looks up absent ids as undefined, in request order", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [id] = await insert(store, q, [{}]);
      const found = await store.jobGetMany({ ids: [`${q}.0.zzzzzzzzzzzz`, id!] });
      expect(found[0]).toBeUndefined();
      expect(found[1]!.id).toBe(id);
    });

    it("looks jobs up without their bodies when asked: same attributes, empty bodies with their sizes", async () => {
      const store = await open();
      const q = await createQueue(store);
      // Bodies big and small, none, and attributes longer than a Redis transition's first read.
      const ids = await insert(store, q, [
        { body: text("b".repeat(5000)), customStatus: "kept" },
        { body: text("tiny") },
        { body: new Uint8Array() },
        { body: text("c".repeat(300)), customStatus: "s".repeat(1000) },
      ]);
      const whole = await store.jobGetMany({ ids });
      const [absent, ...bare] = await store.jobGetMany({ ids: [`${q}.0.zzzzzzzzzzzz`, ...ids], bodies: false });
      expect(whole.map((j) => j!.body.length)).toEqual([5000, 4, 0, 300]);
      expect(bare.map((j) => ({ ...j!, body: undefined, bodySize: undefined }))).toEqual(
        whole.map((j) => ({ ...j!, body: undefined })),
      );
      // Each body's size, so a caller can bound what reading them would cost.
      expect(bare.map((j) => [j!.body.length, j!.bodySize])).toEqual([
        [0, 5000],
        [0, 4],
        [0, 0],
        [0, 300],
      ]);
      expect(absent).toBeUndefined();
    });

    it("scans newest run_after first and pages through every job exactly once", async () => {
      const store = await open();
      const q = await createQueue(store);
      const ids = await insert(
        store,
        q,
        Array.from({ length: 7 }, (_, i) => ({ runAfter: T0 - 1000 + (i % 3) * 100 })),
      );
      const seen: JobRecord[] = [];
      let cursor: ScanCursor | undefined;
      for (let page = 0; page < 10; page++) {
        const jobs = await store.jobScan({ queue: q, filter: {}, limit: 3, cursor, now: T0 });
        seen.push(...jobs);
        if (jobs.length < 3) break;
        const last = jobs[jobs.length - 1]!;
        cursor = { runAfter: last.runAfter, id: last.id };
      }
      expect(seen.map((j) => j.id).sort()).toEqual([...ids].sort());
      const order = seen.map((j) => j.runAfter);
      expect(order).toEqual([...order].sort((a, b) => b - a));
    });

    it("scans without bodies when asked: the same jobs and attributes, empty bodies with their sizes, a body regex still applied", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b] = await insert(store, q, [
        { body: text("user=1 ".repeat(200)), customStatus: "x" },
        { priority: 2, body: text("other") },
      ]);
      const whole = await store.jobScan({ queue: q, filter: {}, limit: 10, now: T0 });
      const bare = await store.jobScan({ queue: q, filter: {}, limit: 10, bodies: false, now: T0 });
      expect(bare.map((j) => ({ ...j, body: undefined, bodySize: undefined }))).toEqual(
        whole.map((j) => ({ ...j, body: undefined })),
      );
      expect(bare.map((j) => j.body.length)).toEqual([0, 0]);
      expect(whole.find((j) => j.id === a)!.body.length).toBe(1400);
      expect(Object.fromEntries(bare.map((j) => [j.id, j.bodySize]))).toEqual({ [a!]: 1400, [b!]: 5 });
      const matched = await store.jobScan({
        queue: q,
        filter: { bodyRegex: /other/ },
        limit: 10,
        bodies: false,
        now: T0,
      });
      expect(matched.map((j) => [j.id, j.body.length, j.bodySize])).toEqual([[b, 0, 5]]);
    });

    it("filters by state, priority, due or future, and body regex, in scan and count alike", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [, p2, future, match] = await insert(store, q, [
        { body: text("alpha") },
        { priority: 2, body: text("beta") },
        { runAfter: T0 + 5000, body: text("gamma") },
        { body: text("user=42") },
      ]);
      const [running] = await handOut(store, q, { limit: 1 });
      const cases: Array<[Parameters<typeof store.jobCount>[0]["filter"], string[]]> = [
        [{ state: "running" }, [running!.id]],
        [{ priority: 2 }, [p2!]],
        [{ future: true }, [future!]],
        [{ bodyRegex: /user=\d+/ }, [match!]],
        [{ state: "pending", future: false, priority: 1 }, [match!]],
      ];
      for (const [filter, expected] of cases) {
        const scanned = await store.jobScan({ queue: q, filter, limit: 100, now: T0 });
        expect(scanned.map((j) => j.id).sort()).toEqual([...expected].sort());
        expect(await store.jobCount({ queue: q, filter, now: T0 })).toBe(expected.length);
      }
      expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(4);
    });
  });
}
