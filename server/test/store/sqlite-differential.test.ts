/**
 * The SQLite store's SQL against transitions.ts: seeded random sequences of store calls on
 * the memory store and on a SQLite store must agree after every step
 * (storetest/differential.ts), without and with workflow steps. Each sequence gets a new
 * file, because the claim-timeout sweep is global.
 */
import { afterAll, describe, it } from "vitest";
import { runDifferential } from "../storetest/differential.js";
import { SqliteFiles } from "./sqlite-harness.js";

const files = new SqliteFiles();
afterAll(() => files.dispose());

describe("sqlite store against the memory store", () => {
  // RUNLATER_DIFF_SEEDS=500 for a longer soak; a failing seed replays exactly.
  const seeds = Number(process.env.RUNLATER_DIFF_SEEDS ?? 8);
  for (let seed = 1; seed <= seeds; seed++) {
    it(`agrees on every job after each step of random sequence ${seed}`, async () => {
      const store = await files.open();
      try {
        await runDifferential(seed, store);
      } finally {
        await store.close(); // a store is a thread: a soak of hundreds keeps one at a time
      }
    });
    it(`agrees on every job and instance after each step of random sequence ${seed} with workflow steps`, async () => {
      const store = await files.open();
      try {
        await runDifferential(seed, store, { workflows: true });
      } finally {
        await store.close();
      }
    });
  }
});
