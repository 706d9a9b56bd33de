/**
 * The Lua state machine against transitions.ts: seeded random sequences of store calls
 * on the memory store and on a Redis store must agree after every step
 * (storetest/differential.ts): on 2 shards, and, with workflow steps, on one (a store of
 * several shards keeps no workflows). Each sequence gets a fresh key prefix, so the global
 * claim-timeout sweep sees only its own jobs.
 */
import { afterAll, describe, it } from "vitest";
import { runDifferential } from "../storetest/differential.js";
import { cleanup, openTestStore } from "./redis-helpers.js";

afterAll(cleanup);

describe("redis store against the memory store", () => {
  // RUNLATER_DIFF_SEEDS=300 for a longer soak; a failing seed replays exactly.
  const seeds = Number(process.env.RUNLATER_DIFF_SEEDS ?? 8);
  for (let seed = 1; seed <= seeds; seed++) {
    it(`agrees on every job after each step of random sequence ${seed}`, async () =>
      runDifferential(seed, await openTestStore(2)));
    it(`agrees on every job and instance after each step of random sequence ${seed} with workflow steps`, async () =>
      runDifferential(seed, await openTestStore(1), { workflows: true }));
  }
});
