/** API tokens: kept by id, only the secret's hash, once per id, revoked by delete. */
import { describe, expect, it } from "vitest";
import { newToken } from "../../src/domain/tokens.js";
import { T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseTokens(open: OpenStore): void {
  describe("tokenInsert / tokenGet / tokenList / tokenDelete", () => {
    it("keeps a token by id once, lists it, and forgets it when revoked", async () => {
      const store = await open();
      const { record } = newToken({
        name: "ci deploys",
        scopes: ["enqueue", "read"],
        queues: ["emails*"],
        now: T0,
        expiresAt: T0 + 1000,
      });
      expect(await store.tokenInsert({ token: record })).toBe(true);
      expect(await store.tokenInsert({ token: { ...record, name: "other" } })).toBe(false);
      expect(await store.tokenGet({ id: record.id })).toEqual(record);
      expect((await store.tokenList()).filter((t) => t.id === record.id)).toEqual([record]);
      expect(await store.tokenDelete({ id: record.id })).toBe(true);
      expect(await store.tokenDelete({ id: record.id })).toBe(false);
      expect(await store.tokenGet({ id: record.id })).toBeUndefined();
    });
  });
}
