/** Worker timers never overflow Node's 2^31 − 1 ms: far deadlines wait, they do not spin. */
import type { Client } from "@connectrpc/connect";
import { expect, it } from "vitest";
import type { WorkerService } from "../src/gen/runlater/v1/worker_service_pb.js";
import { ClaimKeeper } from "../src/worker/claim-keeper.js";

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
  const keeper = new ClaimKeeper({ queue: "q", worker, onError: () => {}, onLost: () => {} });
  try {
    keeper.track("q.0.a", "token", Date.now() + 60 * 86_400_000, Date.now());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(checkpoints).toBe(0);
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  } finally {
    keeper.close();
    process.off("warning", onWarning);
  }
});
