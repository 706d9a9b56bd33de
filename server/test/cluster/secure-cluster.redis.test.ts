/**
 * A cluster exposed as docs/security.md says to run one: API tokens, the cluster secret
 * between nodes, and TLS with client certificates (each node presents its own certificate
 * to the others). A frontend forwards Dequeue to the broker that owns the partitions, over
 * mTLS, carrying the secret; a node with the wrong secret, or one that does not trust the
 * others' CA, is refused, and its callers get an error rather than a hang.
 */
import { randomBytes } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { createRunlaterClient, type RunlaterClient } from "@runlater/sdk";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { newToken } from "../../src/domain/tokens.js";
import { type Role, type RunningServer, startServer } from "../../src/server.js";
import { openRedisStore } from "../../src/store/redis/redis-store.js";
import { makeCerts } from "../http/test-certs.js";
import { redisUrl } from "../services.js";

const certs = makeCerts("nodes", "other");
afterAll(() => certs.remove());
const { nodes: chain, other } = certs;
const admin = newToken({ name: "boot", scopes: ["admin"], queues: [], now: 0, expiresAt: 0 }).token;

const running: RunningServer[] = [];
const clients: RunlaterClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function secureCluster() {
  const prefix = `test:${randomBytes(6).toString("hex")}`;
  return async (role: Role, o: { secret?: string; peerCa?: string } = {}) => {
    const store = await openRedisStore({ urls: [redisUrl()], prefix });
    const server = await startServer({
      store,
      role,
      port: 0,
      host: "127.0.0.1",
      leaseTtlMs: 600,
      auth: { bootstrapToken: admin },
      clusterSecret: o.secret ?? "the-cluster-secret",
      tls: { certFile: chain.cert, keyFile: chain.key, clientCaFile: chain.ca, peerCaFile: o.peerCa ?? chain.ca },
    });
    running.push(server);
    const client = createRunlaterClient(server.url, {
      token: admin,
      tls: { caFile: chain.ca, certFile: chain.clientCert, keyFile: chain.clientKey },
      timeoutMs: 10_000,
    });
    clients.push(client);
    return { server, client };
  };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("a frontend and a broker with tokens, the cluster secret and mTLS", () => {
  it("forwards Dequeue to the broker, and a long poll on the frontend wakes for a job enqueued there", async () => {
    const start = secureCluster();
    const broker = await start("broker");
    const frontend = await start("frontend");
    const other = await start("frontend");
    await until(
      () => frontend.server.membership.brokers().length === 1 && other.server.membership.brokers().length === 1,
      "the frontends to see the broker",
    );
    expect(frontend.server.membership.brokers()[0]!.url).toBe(broker.server.url);
    expect(broker.server.url).toMatch(/^https:/);
    await frontend.client.createQueue("secure", { partitions: 2 });
    const polling = frontend.client.worker.dequeue({ queue: "secure", limit: 5, wait: { seconds: 5n, nanos: 0 } });
    await new Promise((r) => setTimeout(r, 100));
    const [id] = await other.client.enqueueMany([{ queue: "secure", body: "over mtls" }]);
    const { jobs } = await polling;
    expect(jobs.map((j) => j.jobId)).toEqual([id]);
    const acked = await frontend.client.worker.ack({
      queue: "secure",
      succeeded: [{ jobId: jobs[0]!.jobId, claimToken: jobs[0]!.claimToken }],
    });
    expect(acked.results.map((r) => r.jobId)).toEqual([id]);
  });

  it("refuses a frontend with the wrong secret or an untrusted peer CA: its Dequeue fails instead of hanging", async () => {
    const start = secureCluster();
    await start("broker");
    const member = await start("frontend");
    await until(() => member.server.membership.brokers().length === 1, "the frontend to see the broker");
    await member.client.createQueue("guarded", { partitions: 1 });
    await member.client.enqueueMany([{ queue: "guarded", body: "stays" }]);
    for (const o of [{ secret: "a-guess" }, { peerCa: other.ca }]) {
      const frontend = await start("frontend", o);
      await until(() => frontend.server.membership.brokers().length === 1, "the frontend to see the broker");
      const err = await frontend.client.worker
        .dequeue({ queue: "guarded", limit: 1, wait: { seconds: 1n, nanos: 0 } })
        .catch((e: unknown) => e);
      expect(err, JSON.stringify(o)).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).message).toMatch(
        o.secret ? /the cluster secret .* does not match/ : /self-signed certificate in certificate chain/,
      );
    }
    // The job is still there for a node that belongs.
    const { jobs } = await member.client.worker.dequeue({
      queue: "guarded",
      limit: 1,
      wait: { seconds: 5n, nanos: 0 },
    });
    expect(jobs).toHaveLength(1);
  });
});
