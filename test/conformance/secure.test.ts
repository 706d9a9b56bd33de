/**
 * The runner's secure run (conformance/runner/secure.ts, `--secure`): a server with auth
 * and TLS whose test control answers the cluster secret only, a workers' proxy that TLS
 * passes through, and a run whose driver connects with the token and the CA.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createRunlaterClient } from "@runlater/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../conformance/runner/processes.js";
import { BreakableProxy } from "../../conformance/runner/proxy.js";
import { makeSecurity, randomAdminToken, type Security } from "../../conformance/runner/secure.js";
import { parseToken } from "../../server/src/domain/tokens.js";
import { TestControlService } from "../../server/src/gen/runlater/testing/v1/control_pb.js";

const root = join(import.meta.dirname, "../..");

it("makes admin tokens in the server's format, a new one each time", () => {
  const token = randomAdminToken();
  expect(parseToken(token)).toBeDefined();
  expect(randomAdminToken()).not.toBe(token);
});

describe("a server started with the runner's security", () => {
  const dir = mkdtempSync(join(tmpdir(), "conformance-secure-"));
  let security: Security;
  let server: Awaited<ReturnType<typeof startServer>>;
  let proxy: BreakableProxy;
  beforeAll(async () => {
    security = makeSecurity(root, join(dir, "tls"));
    server = await startServer(root, "memory", dir, security);
    proxy = new BreakableProxy(server.url);
    await proxy.start();
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
    await server?.stop();
  });

  it("serves https, and its test control answers the runner (CA and cluster secret)", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(await server.now()).toBeGreaterThan(0);
  });

  it("refuses test control to the admin token: it is a node service", async () => {
    const control = createClient(
      TestControlService,
      createConnectTransport({
        baseUrl: server.url,
        httpVersion: "1.1",
        nodeOptions: { ca: readFileSync(security.caFile) },
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${security.adminToken}`);
            return next(req);
          },
        ],
      }),
    );
    const err = await control.reset({}).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
  });

  it("is reached through the workers' proxy over TLS with the token, and refuses calls without it", async () => {
    expect(proxy.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const tls = { caFile: security.caFile };
    const client = createRunlaterClient(proxy.url, { token: security.adminToken, tls });
    const anonymous = createRunlaterClient(proxy.url, { tls });
    try {
      expect((await client.createQueue("q")).created).toBe(true);
      const err = await anonymous.queues.listQueues({}).catch((e: unknown) => ConnectError.from(e));
      expect((err as ConnectError).code).toBe(Code.Unauthenticated);
    } finally {
      client.close();
      anonymous.close();
    }
  });
});

describe("the runner with --secure", () => {
  it("connects the driver with the token and the CA, workers included, and names its JUnit suites", () => {
    const dir = mkdtempSync(join(tmpdir(), "conformance-secure-run-"));
    const scenarios = join(dir, "scenarios");
    mkdirSync(scenarios);
    mkdirSync(join(dir, "known-failing"));
    writeFileSync(
      join(scenarios, "secure-worker.yaml"),
      `name: secure-worker
description: A producer and a worker (through the proxy) of a server with auth and TLS.
steps:
  - {actor: p, op: create_queue, queue: q}
  - {actor: p, op: enqueue, jobs: [{queue: q, body_json: {return: done}}], expect: {job_ids: [$x]}}
  - {actor: w, op: worker_start, queue: q}
  - {actor: w, op: worker_await, finished: 1, expect: {calls: [{job_id: $x, attempt: 1}]}}
  - {actor: p, op: get_jobs, job_ids: [$x], eventually: true, expect: {jobs: [{state: SUCCEEDED, custom_status: done}]}}
`,
    );
    const report = join(dir, "report.xml");
    const run = spawnSync(
      process.execPath,
      [
        join(root, "node_modules/tsx/dist/cli.mjs"),
        join(root, "conformance/runner/main.ts"),
        ...["--secure", "--sdk", "ts", "--protocol", "connect-binary,grpc-web"],
        ...["--scenarios-dir", scenarios, "--known-failing-dir", join(dir, "known-failing"), "--report", report],
      ],
      { cwd: root, encoding: "utf8", timeout: 60_000 },
    );
    expect(run.stdout).toContain("(auth and TLS on)");
    expect(run.stdout).toMatch(/2 passed, 0 failed\n$/);
    expect(run.status).toBe(0);
    expect(readFileSync(report, "utf8")).toContain('<testsuite name="conformance-secure/ts/memory/grpc-web"');
  }, 60_000);
});
