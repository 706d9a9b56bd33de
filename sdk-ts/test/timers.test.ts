/**
 * The claim keeper's timers: they never overflow Node's 2^31 − 1 ms (far deadlines wait,
 * they do not spin), and they run on the monotonic clock, so a wall clock that stands
 * still (a server on a manual clock) still gets a renewal every half lifetime.
 */
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { expect, it } from "vitest";
import type { WorkerService } from "../src/gen/runlater/v1/worker_service_pb.js";
import { Outcome } from "../src/gen/runlater/v1/worker_service_pb.js";
import { ClaimKeeper } from "../src/worker/claim-keeper.js";
import { eventually } from "./helpers.js";

it("does not renew a claim that expires in two months, nor warn, within the first 50 ms", async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on("warning", onWarning);
  let checkpoints = 0;
  const worker = {
    checkpoint: async () => {
      checkpoints++;
      return { results: [] };
    },
  } as unknown as Client<typeof WorkerService>;
  const keeper = new ClaimKeeper({ queue: "q", worker, clock: Date.now, onError: () => {}, onLost: () => {} });
  try {
    keeper.track("q.0.a", "token", Date.now() + 60 * 86_400_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(checkpoints).toBe(0);
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  } finally {
    keeper.close();
    process.off("warning", onWarning);
  }
});

it("renews every half lifetime of real time when the wall clock stands still", async () => {
  const frozen = Date.UTC(2040, 0, 1); // far from the real time: only differences count
  const lifetime = 120;
  const sentAt: number[] = [];
  const worker = {
    // Like a server on a manual clock: every renewal expires at its (frozen) now + lifetime.
    checkpoint: async () => {
      sentAt.push(performance.now());
      return { results: [{ outcome: Outcome.ACKNOWLEDGED, claimExpiresAt: timestampFromMs(frozen + lifetime) }] };
    },
  } as unknown as Client<typeof WorkerService>;
  const keeper = new ClaimKeeper({ queue: "q", worker, clock: () => frozen, onError: () => {}, onLost: () => {} });
  const tracked = performance.now();
  try {
    keeper.track("q.0.a", "token", frozen + lifetime);
    await eventually(() => expect(sentAt.length).toBeGreaterThanOrEqual(3), 5_000, 10);
  } finally {
    keeper.close();
  }
  // Timers fire late, never early: no renewal comes sooner than half a lifetime after the last.
  const gaps = [sentAt[0]! - tracked, ...sentAt.slice(1).map((t, i) => t - sentAt[i]!)];
  for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(lifetime / 2 - 2);
});

it("refuses Worker durations a timer cannot hold (past 2^31 − 1 ms) at construction, and takes the bound itself", async () => {
  const { Worker } = await import("../src/worker.js");
  const { createRunlaterClient } = await import("../src/client.js");
  const client = createRunlaterClient("http://127.0.0.1:1");
  const make = (o: Record<string, number>) => new Worker({ client, queue: "q", handler: async () => {}, ...o });
  for (const name of ["shutdownGraceMs", "pollWaitMs", "ackDelayMs"]) {
    expect(() => make({ [name]: 2 ** 31 })).toThrow(
      `${name} must be a number of milliseconds from 0 to 2147483647 (about 24.8 days), got 2147483648`,
    );
    expect(() => make({ [name]: -1 })).toThrow(RangeError);
    expect(() => make({ [name]: 2 ** 31 - 1 })).not.toThrow();
  }
  client.close();
});
