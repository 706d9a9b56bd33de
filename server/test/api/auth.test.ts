/**
 * Every RPC × every scope (docs/security.md), over Connect, gRPC and gRPC-Web: a token
 * with the scope a method needs gets past auth (the call may still fail for its own
 * reasons), any other is refused with permission_denied naming the scope; no token, a
 * wrong one, an expired or a revoked one is unauthenticated; queue patterns limit what a
 * token touches; the services between nodes answer only to the cluster secret.
 */
import { readdirSync } from "node:fs";
import { type DescService, toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ClusterInfoService } from "@runlater/sdk/gen/cluster_info_service_pb.js";
import { ErrorInfoSchema, ErrorReason } from "@runlater/sdk/gen/errors_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { ListTokensResponseSchema, TokenService } from "@runlater/sdk/gen/token_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCESS } from "../../src/auth/access.js";
import { CACHE_MS } from "../../src/auth/verifier.js";
import { ManualClock } from "../../src/domain/clock.js";
import { newToken, SCOPES, type Scope } from "../../src/domain/tokens.js";
import { ClusterService } from "../../src/gen/runlater/cluster/v1/cluster_pb.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { CLUSTER_SECRET_HEADER } from "../../src/wire/forwarding.js";

const bootstrap = newToken({ name: "boot", scopes: ["admin"], queues: [], now: 0, expiresAt: 0 }).token;
const SECRET = "s3cret-of-the-cluster";
const services: DescService[] = [
  JobService,
  WorkerService,
  QueueService,
  WorkflowService,
  ScheduleService,
  TokenService,
  ClusterInfoService,
];

let server: RunningServer;
let second: RunningServer;
let clock: ManualClock;
const store = new MemoryStore();
const tokens = new Map<Scope, string>();

/** Bidirectional streams need HTTP/2: only gRPC here carries them. */
const http2 = new Set(["grpc"]);

const protocols: Record<string, (url: string, token?: string) => Transport> = {
  connect: (url, token) => createConnectTransport({ baseUrl: url, httpVersion: "1.1", interceptors: bearer(token) }),
  grpc: (url, token) => createGrpcTransport({ baseUrl: url, interceptors: bearer(token) }),
  "grpc-web": (url, token) => createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1", interceptors: bearer(token) }),
};

function bearer(token: string | undefined) {
  return token === undefined
    ? []
    : ([
        (next: (r: { header: Headers }) => unknown) => (req: { header: Headers }) => {
          req.header.set("authorization", `Bearer ${token}`);
          return next(req);
        },
      ] as never);
}

/** Calls `procedure` with an empty-ish request; the error it ends with, or undefined. */
async function call(transport: Transport, procedure: string): Promise<ConnectError | undefined> {
  const [serviceName, methodName] = procedure.split("/") as [string, string];
  const service = services.find((s) => s.typeName === serviceName)!;
  const method = service.methods.find((m) => m.name === methodName)!;
  const client = createClient(service, transport) as Record<string, (req: unknown, o?: unknown) => unknown>;
  // A queue no test uses: a call that gets past auth may fail for its own reasons (not_found).
  const request = { queue: "q_matrix", name: "q_matrix", jobs: [{ queue: "q_matrix" }] };
  try {
    if (method.methodKind === "bidi_streaming") {
      async function* one() {
        yield { queue: "q_matrix" };
      }
      const it = (client[method.localName]!(one()) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      await it.next();
    } else {
      await client[method.localName]!(request);
    }
    return undefined;
  } catch (err) {
    return ConnectError.from(err);
  }
}

const authFailure = (err: ConnectError | undefined) =>
  err && (err.code === Code.Unauthenticated || err.code === Code.PermissionDenied) ? err : undefined;

beforeAll(async () => {
  clock = new ManualClock(Date.UTC(2030, 0, 1));
  server = await startServer({ store, port: 0, clock, auth: { bootstrapToken: bootstrap }, clusterSecret: SECRET });
  second = await startServer({ store, port: 0, clock, auth: {}, clusterSecret: SECRET });
  const admin = createClient(TokenService, protocols.connect!(server.url, bootstrap));
  for (const scope of SCOPES)
    tokens.set(scope, (await admin.createToken({ name: `only ${scope}`, scopes: [scope] })).secretToken);
  await createClient(QueueService, protocols.connect!(server.url, bootstrap)).createQueue({ name: "q_a" });
});
afterAll(async () => {
  await second.stop();
  await server.stop();
});

describe("the access table", () => {
  it("names every method of every public service, so none is refused to every token by omission", () => {
    // Every *_service_pb file the SDK generates is in `services`, and each of its methods in ACCESS.
    const generated = readdirSync(new URL("../../../sdk-ts/src/gen/runlater/v1/", import.meta.url))
      .filter((f) => f.endsWith("_service_pb.ts"))
      .map((f) => f.replace("_service_pb.ts", "").replaceAll("_", ""));
    expect(services.map((s) => s.name.replace("Service", "").toLowerCase()).sort()).toEqual(generated.sort());
    const methods = services.flatMap((s) => s.methods.map((m) => `${s.typeName}/${m.name}`));
    expect(methods.filter((m) => !(m in ACCESS))).toEqual([]);
    expect(Object.keys(ACCESS).filter((m) => !methods.includes(m))).toEqual([]);
  });
});

describe.each(Object.keys(protocols))("every RPC × every scope over %s", (protocol) => {
  it("lets each method through with the scope it needs, and refuses the others naming that scope", async () => {
    const wrong: string[] = [];
    for (const [procedure, access] of Object.entries(ACCESS)) {
      if (procedure.endsWith("/DequeueStream") && !http2.has(protocol)) continue;
      for (const scope of SCOPES) {
        const err = authFailure(await call(protocols[protocol]!(server.url, tokens.get(scope)), procedure));
        const needed: readonly string[] =
          access.scope === "authenticated" ? SCOPES : typeof access.scope === "string" ? [access.scope] : access.scope;
        const allowed = needed.includes(scope);
        if (allowed && err) wrong.push(`${procedure} with ${scope}: refused (${err.rawMessage})`);
        if (!allowed) {
          if (err?.code !== Code.PermissionDenied) wrong.push(`${procedure} with ${scope}: not refused`);
          else if (!err.rawMessage.includes(`needs the ${needed.join(" or ")} scope`))
            wrong.push(`${procedure}: says "${err.rawMessage}"`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("refuses a call without a token, or with a made-up one, as unauthenticated", async () => {
    const none = await call(protocols[protocol]!(server.url), "runlater.v1.JobService/Enqueue");
    expect(none?.code).toBe(Code.Unauthenticated);
    expect(none?.findDetails(ErrorInfoSchema)[0]?.reason).toBe(ErrorReason.UNAUTHENTICATED);
    const made = newToken({ name: "x", scopes: ["admin"], queues: [], now: 0, expiresAt: 0 }).token;
    expect((await call(protocols[protocol]!(server.url, made), "runlater.v1.JobService/Enqueue"))?.code).toBe(
      Code.Unauthenticated,
    );
  });
});

describe("tokens", () => {
  it("limits a token to the queues its patterns match, and shows it only those", async () => {
    const admin = createClient(TokenService, protocols.connect!(server.url, bootstrap));
    await createClient(QueueService, protocols.connect!(server.url, bootstrap)).createQueue({ name: "q_b" });
    const { secretToken } = await admin.createToken({ name: "team a", scopes: ["enqueue", "read"], queues: ["q_a*"] });
    const jobs = createClient(JobService, protocols.connect!(server.url, secretToken));
    await expect(jobs.enqueue({ jobs: [{ queue: "q_a" }] })).resolves.toBeDefined();
    const refused = await jobs
      .enqueue({ jobs: [{ queue: "q_a" }, { queue: "q_b" }] })
      .catch((e: unknown) => ConnectError.from(e));
    expect(refused).toMatchObject({ code: Code.PermissionDenied, rawMessage: expect.stringMatching(/queue "q_b"/) });
    const listed = await createClient(QueueService, protocols.connect!(server.url, secretToken)).listQueues({});
    expect(listed.queues.map((q) => q.name)).toEqual(["q_a"]);
  });

  it("stops an expired token, and a revoked one on every node within the cache time", async () => {
    const admin = createClient(TokenService, protocols.connect!(server.url, bootstrap));
    const soon = await admin.createToken({
      name: "short",
      scopes: ["read"],
      expiresAt: { seconds: BigInt(Math.floor(clock.now() / 1000) + 60), nanos: 0 },
    });
    const revoked = await admin.createToken({ name: "gone", scopes: ["read"] });
    const count = (url: string, token: string) =>
      call(protocols.connect!(url, token), "runlater.v1.JobService/CountJobs").then(authFailure);
    expect(await count(second.url, revoked.secretToken)).toBeUndefined(); // the second node caches it
    expect((await admin.revokeToken({ tokenId: revoked.token!.tokenId })).revoked).toBe(true);
    expect((await count(server.url, revoked.secretToken))?.code).toBe(Code.Unauthenticated); // at once where revoked
    await clock.advance(CACHE_MS);
    expect((await count(second.url, revoked.secretToken))?.code).toBe(Code.Unauthenticated); // and elsewhere soon after
    expect(await count(server.url, soon.secretToken)).toBeUndefined();
    await clock.advance(60_000);
    expect((await count(server.url, soon.secretToken))?.rawMessage).toMatch(/has expired/);
  });

  it("tells every valid token about itself (scopes, queue patterns, expiry), never its secret", async () => {
    const admin = createClient(TokenService, protocols.connect!(server.url, bootstrap));
    const expiresAt = { seconds: BigInt(Math.floor(clock.now() / 1000) + 3600), nanos: 0 };
    const made = await admin.createToken({ name: "team b", scopes: ["work"], queues: ["q_b*"], expiresAt });
    const answer = await createClient(TokenService, protocols.connect!(server.url, made.secretToken)).whoAmI({});
    expect(answer.authEnabled).toBe(true);
    expect(answer.token).toMatchObject({
      tokenId: made.token!.tokenId,
      name: "team b",
      scopes: ["work"],
      queues: ["q_b*"],
      expiresAt: { seconds: expiresAt.seconds },
    });
    expect(JSON.stringify(answer, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(
      // The secret is everything after rl_<id>_ (base64url: it may hold "_" itself).
      made.secretToken.slice("rl_".length + 12 + 1),
    );
    const read = await createClient(TokenService, protocols.grpc!(server.url, tokens.get("read"))).whoAmI({});
    expect(read.token?.scopes).toEqual(["read"]);
    const anonymous = await createClient(TokenService, protocols.connect!(server.url))
      .whoAmI({})
      .catch(ConnectError.from);
    expect(anonymous).toMatchObject({ code: Code.Unauthenticated });
  });

  it("never lists secrets", async () => {
    const listed = await createClient(TokenService, protocols.connect!(server.url, bootstrap)).listTokens({});
    expect(toJsonString(ListTokensResponseSchema, listed)).not.toMatch(/rl_[a-z0-9]{12}_/);
    expect(listed.tokens.length).toBeGreaterThanOrEqual(5);
  });
});

describe("without auth", () => {
  it("answers WhoAmI with auth off and no token, so a client knows every call is allowed", async () => {
    const open = await startServer({ store: new MemoryStore(), port: 0 });
    try {
      const answer = await createClient(TokenService, protocols.connect!(open.url)).whoAmI({});
      expect(answer.authEnabled).toBe(false);
      expect(answer.token).toBeUndefined();
    } finally {
      await open.stop();
    }
  });
});

describe("between nodes", () => {
  it("answers ClusterService only with the cluster secret, never with a client token", async () => {
    const withToken = createClient(ClusterService, protocols.grpc!(server.url, bootstrap));
    const refused = await withToken.releaseForwarded({ callIds: [] }).catch((e: unknown) => ConnectError.from(e));
    expect(refused).toMatchObject({ code: Code.PermissionDenied });
    const peer = createClient(ClusterService, createGrpcTransport({ baseUrl: server.url }));
    await expect(
      peer.releaseForwarded({ callIds: [] }, { headers: { [CLUSTER_SECRET_HEADER]: SECRET } }),
    ).resolves.toBeDefined();
    const wrong = await peer
      .releaseForwarded({ callIds: [] }, { headers: { [CLUSTER_SECRET_HEADER]: "guess" } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(wrong).toMatchObject({ code: Code.PermissionDenied });
  });
});
