/**
 * TLS on the one port (docs/security.md#tls): the TypeScript SDK's client over every
 * protocol and its Worker over a DequeueStream, client certificates (mTLS), clients that
 * cannot complete a handshake, and reloading the certificate without a restart.
 * Certificates come from scripts/test-certs.sh, as in the Python and Java tests.
 */
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { createRunlaterClient, type RunlaterClientOptions, Worker } from "@runlater/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { makeCerts } from "./test-certs.js";

const certs = makeCerts("a", "b");
/** Two independent chains: `a` is served first, `b` replaces it in the reload test. */
const { a, b, dir: root } = certs;
afterAll(() => certs.remove());

const protocols: Array<[string, RunlaterClientOptions]> = [
  ["connect over HTTP/1.1", { protocol: "connect" }],
  ["connect over HTTP/2", { protocol: "connect", httpVersion: "2" }],
  ["gRPC", { protocol: "grpc" }],
  ["gRPC-Web", { protocol: "grpc-web" }],
];

describe("a server with --tls-cert and --tls-key", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      store: new MemoryStore(),
      port: 0,
      host: "127.0.0.1",
      tls: { certFile: a.cert, keyFile: a.key },
    });
  });
  afterAll(() => server.stop());

  it("says https in its URL", () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it.each(protocols)("serves %s to a client that trusts its CA", async (_name, options) => {
    const client = createRunlaterClient(server.url, { ...options, tls: { caFile: a.ca } });
    try {
      const queue = `tls_${options.protocol}_${options.httpVersion ?? "default"}`.replace("-", "_");
      await client.createQueue(queue);
      const id = await client.enqueue(queue, "over tls");
      const { jobs } = await client.worker.dequeue({ queue, limit: 1 });
      expect(jobs.map((j) => j.jobId)).toEqual([id]);
    } finally {
      client.close();
    }
  });

  it.each([
    ["gRPC", { protocol: "grpc" }],
    // https:// leaves the client on HTTP/1.1 by default: the Worker opens an HTTP/2 session of its own.
    ["a default client", {}],
  ] as Array<[string, RunlaterClientOptions]>)(
    "runs a Worker over a DequeueStream on HTTP/2 (%s)",
    async (name, options) => {
      const client = createRunlaterClient(server.url, { ...options, tls: { caFile: a.ca } });
      const queue = name === "gRPC" ? "tls_worker" : "tls_worker_default";
      await client.createQueue(queue);
      await client.enqueueMany(["1", "2", "3"].map((body) => ({ queue, body })));
      const seen: string[] = [];
      let worker: Worker | undefined;
      const done = new Promise<void>((resolve) => {
        worker = new Worker({
          client,
          queue,
          dequeueMode: "stream",
          handler: async (job) => {
            seen.push(job.text());
            if (seen.length === 3) resolve();
          },
        });
        worker.start();
      });
      await done;
      await worker?.stop();
      client.close();
      expect(seen.sort()).toEqual(["1", "2", "3"]);
    },
  );

  it("is refused by a client that does not trust its CA, with the reason, and keeps serving", async () => {
    const client = createRunlaterClient(server.url, { tls: {} });
    const err = await client.queues.listQueues({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).message).toMatch(/unable to verify the first certificate/);
    const trusting = createRunlaterClient(server.url, { tls: { caFile: a.ca } });
    await expect(trusting.queues.listQueues({})).resolves.toBeDefined();
  });

  it("closes a plain-HTTP client's connection instead of hanging it", async () => {
    const plain = server.url.replace("https:", "http:");
    const client = createRunlaterClient(plain, { timeoutMs: 5_000 });
    const err = await client.queues.listQueues({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
  });

  it("names an unreadable CA file when the client is made, before any call", () => {
    expect(() => createRunlaterClient(server.url, { tls: { caFile: join(root, "missing.pem") } })).toThrow(
      /cannot read the TLS CA file .*missing\.pem/,
    );
    expect(() => createRunlaterClient(server.url, { tls: { certFile: a.clientCert } })).toThrow(/needs its key/);
    expect(() => createRunlaterClient("http://127.0.0.1:1", { tls: { caFile: a.ca } })).toThrow(/https:\/\//);
  });
});

describe("a server with --tls-client-ca (mTLS)", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      store: new MemoryStore(),
      port: 0,
      host: "127.0.0.1",
      tls: { certFile: a.cert, keyFile: a.key, clientCaFile: a.ca },
    });
  });
  afterAll(() => server.stop());

  it.each(protocols)("serves %s to a client with a certificate from that CA", async (_name, options) => {
    const client = createRunlaterClient(server.url, {
      ...options,
      tls: { caFile: a.ca, certFile: a.clientCert, keyFile: a.clientKey },
    });
    try {
      await expect(client.queues.listQueues({})).resolves.toBeDefined();
    } finally {
      client.close();
    }
  });

  it("refuses a client without a certificate, or with one from another CA", async () => {
    for (const tlsOptions of [{ caFile: a.ca }, { caFile: a.ca, certFile: b.clientCert, keyFile: b.clientKey }]) {
      for (const options of [{ protocol: "connect" }, { protocol: "grpc" }] as const) {
        const client = createRunlaterClient(server.url, { ...options, tls: tlsOptions, timeoutMs: 5_000 });
        const err = await client.queues.listQueues({}).catch((e: unknown) => e);
        expect(err, JSON.stringify([tlsOptions, options])).toBeInstanceOf(ConnectError);
        client.close();
      }
    }
  });
});

describe("reloading the certificate", () => {
  let server: RunningServer;
  const live = { cert: join(root, "live.pem"), key: join(root, "live-key.pem") };
  beforeAll(async () => {
    copyFileSync(a.cert, live.cert);
    copyFileSync(a.key, live.key);
    server = await startServer({
      store: new MemoryStore(),
      port: 0,
      host: "127.0.0.1",
      tls: { certFile: live.cert, keyFile: live.key },
    });
  });
  afterAll(() => server.stop());

  it("serves the new certificate to new connections, and keeps the old one when the new files are bad", async () => {
    const before = createRunlaterClient(server.url, { protocol: "grpc", tls: { caFile: a.ca } });
    await before.queues.listQueues({});

    copyFileSync(b.cert, live.cert);
    copyFileSync(b.key, live.key);
    server.reloadTls();
    // New connections get chain b; the HTTP/2 connection opened before keeps working.
    const after = createRunlaterClient(server.url, { tls: { caFile: b.ca } });
    await expect(after.queues.listQueues({})).resolves.toBeDefined();
    const stale = createRunlaterClient(server.url, { tls: { caFile: a.ca } });
    await expect(stale.queues.listQueues({})).rejects.toThrow(/certificate/i);
    await expect(before.queues.listQueues({})).resolves.toBeDefined();
    before.close();

    // A key that does not match: refused with the file names, and b stays served.
    copyFileSync(a.key, live.key);
    expect(() => server.reloadTls()).toThrow(/do not make a usable certificate and key/);
    writeFileSync(live.cert, "not a certificate");
    expect(() => server.reloadTls()).toThrow(/live\.pem/);
    await expect(after.queues.listQueues({})).resolves.toBeDefined();
    const fresh = createRunlaterClient(server.url, { tls: { caFile: b.ca } });
    await expect(fresh.queues.listQueues({})).resolves.toBeDefined();
  });
});

describe("a server without TLS", () => {
  it("refuses to reload, and a start with unusable files fails naming them", async () => {
    const server = await startServer({ store: new MemoryStore(), port: 0 });
    expect(() => server.reloadTls()).toThrow(/without TLS/);
    await server.stop();
    await expect(
      startServer({ store: new MemoryStore(), port: 0, tls: { certFile: a.cert, keyFile: b.key } }),
    ).rejects.toThrow(/server\.pem, .*server-key\.pem do not make a usable certificate and key/);
  });
});
