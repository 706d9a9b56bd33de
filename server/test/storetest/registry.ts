import { describe, expect, it } from "vitest";
import { T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseRegistry(open: OpenStore): void {
  describe("broker registry", () => {
    it("lists brokers until their registration expires, refreshed by each heartbeat", async () => {
      const store = await open();
      await store.brokerHeartbeat({ id: "b", url: "http://127.0.0.1:2", ttlMs: 1000, now: T0 });
      await store.brokerHeartbeat({ id: "a", url: "http://127.0.0.1:1", ttlMs: 1000, now: T0 });
      expect(await store.brokerList({ now: T0 + 999 })).toEqual([
        { id: "a", url: "http://127.0.0.1:1", expiresAt: T0 + 1000 },
        { id: "b", url: "http://127.0.0.1:2", expiresAt: T0 + 1000 },
      ]);
      await store.brokerHeartbeat({ id: "a", url: "http://127.0.0.1:11", ttlMs: 1000, now: T0 + 900 });
      // b missed its heartbeat: it is dead at its expiry; a's refresh moved its expiry and URL.
      expect(await store.brokerList({ now: T0 + 1000 })).toEqual([
        { id: "a", url: "http://127.0.0.1:11", expiresAt: T0 + 1900 },
      ]);
    });

    it("forgets a broker that leaves at once", async () => {
      const store = await open();
      await store.brokerHeartbeat({ id: "a", url: "http://a", ttlMs: 1000, now: T0 });
      await store.brokerHeartbeat({ id: "b", url: "http://b", ttlMs: 1000, now: T0 });
      await store.brokerLeave({ id: "a" });
      await store.brokerLeave({ id: "never-registered" });
      expect((await store.brokerList({ now: T0 })).map((b) => b.id)).toEqual(["b"]);
    });

    it("lets a dead broker come back with a new heartbeat", async () => {
      const store = await open();
      await store.brokerHeartbeat({ id: "a", url: "http://a", ttlMs: 1000, now: T0 });
      expect(await store.brokerList({ now: T0 + 5000 })).toEqual([]);
      await store.brokerHeartbeat({ id: "a", url: "http://a", ttlMs: 1000, now: T0 + 5000 });
      expect((await store.brokerList({ now: T0 + 5000 })).map((b) => b.id)).toEqual(["a"]);
    });
  });
}
