/** `runlater token …` and `runlater serve`'s safe default, in-process (cli-harness.ts). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newToken } from "../src/domain/tokens.js";
import { type RunningServer, startServer } from "../src/server.js";
import { MemoryStore } from "../src/store/memory/memory-store.js";
import { runIn } from "./cli-harness.js";

const admin = newToken({ name: "boot", scopes: ["admin"], queues: [], now: 0, expiresAt: 0 }).token;
let server: RunningServer;
beforeAll(async () => {
  server = await startServer({
    store: new MemoryStore(),
    port: 0,
    shutdownGraceMs: 200,
    auth: { bootstrapToken: admin },
  });
});
afterAll(() => server.stop());

describe("runlater token", () => {
  const env = () => ({ RUNLATER_URL: server.url, RUNLATER_TOKEN: admin });

  it("creates a token printed once, lists it without its secret, and revokes it", async () => {
    const made = await runIn(
      ["token", "create", "deploys", "--scope", "enqueue", "--queue", "emails*", "--expires-in", "30d"],
      env(),
    );
    expect(made.code).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^rl_[a-z0-9]{12}_/);
    expect(made.stderr).toMatch(/not shown again/);
    const id = token.split("_")[1]!;
    const listed = await runIn(["token", "list"], env());
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain("emails*");
    // The secret is everything after rl_<id>_ (base64url: it may hold "_" itself).
    expect(listed.stdout).not.toContain(token.slice(`rl_${id}_`.length));
    // The new token enqueues where it may, and only there.
    await runIn(["queue", "create", "emails_eu"], env());
    expect(
      (await runIn(["enqueue", "emails_eu", "hi"], { RUNLATER_URL: server.url, RUNLATER_TOKEN: token })).code,
    ).toBe(0);
    const refused = await runIn(["queue", "list"], { RUNLATER_URL: server.url, RUNLATER_TOKEN: token });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/needs the read scope/);
    expect((await runIn(["token", "revoke", id], env())).stdout).toBe(`revoked ${id}\n`);
    expect(
      (await runIn(["enqueue", "emails_eu", "hi"], { RUNLATER_URL: server.url, RUNLATER_TOKEN: token })).code,
    ).toBe(1);
  });

  it("says what is missing when a call carries no token", async () => {
    const res = await runIn(["queue", "list"], { RUNLATER_URL: server.url });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/RUNLATER_TOKEN/);
  });

  it("generates a token string without a server", async () => {
    const res = await runIn(["token", "generate"], {});
    expect(res.stdout.trim()).toMatch(/^rl_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
  });
});

describe("runlater serve, safe by default", () => {
  it("refuses to listen beyond loopback without auth unless told it is insecure", async () => {
    const res = await runIn(["serve", "--host", "0.0.0.0", "--port", "0", "--store", "memory"], {});
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--insecure-no-auth/);
  });
});

describe("health and metrics routes", () => {
  it("answers /healthz and /readyz without a token, and /metrics only to a read token without queue limits", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${server.url}/readyz`)).text()).toBe("ready\n");
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const limited = (
      await runIn(["token", "create", "x", "--scope", "read", "--queue", "a*"], {
        RUNLATER_URL: server.url,
        RUNLATER_TOKEN: admin,
      })
    ).stdout.trim();
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${limited}` } })).status).toBe(
      403,
    );
    const reader = (
      await runIn(["token", "create", "y", "--scope", "read"], { RUNLATER_URL: server.url, RUNLATER_TOKEN: admin })
    ).stdout.trim();
    const ok = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${reader}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/runlater_/);
  });
});
