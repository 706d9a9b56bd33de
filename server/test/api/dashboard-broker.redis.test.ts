/** A node run as --role broker serves no dashboard: it has no QueueService or JobService for it. */
import { randomBytes } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import { openRedisStore } from "../../src/store/redis/redis-store.js";
import { redisUrl } from "../services.js";
import { fakeBuild } from "./ui-build.js";

let server: RunningServer | undefined;
afterEach(() => server?.stop());

it("a broker alone answers 404 at /ui, where a frontend would serve the dashboard", async () => {
  const store = await openRedisStore({ urls: [redisUrl()], prefix: `test:${randomBytes(6).toString("hex")}` });
  server = await startServer({ store, role: "broker", port: 0, uiDir: fakeBuild() });
  expect((await fetch(`${server.url}/ui/`)).status).toBe(404);
});
