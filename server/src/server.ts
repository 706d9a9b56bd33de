/**
 * Assembles a runlater node: store → broker → router → engine → Connect handlers on one
 * port (Connect JSON/binary over HTTP/1.1 and h2c, gRPC, gRPC-Web), plus maintenance.
 *
 * Roles (docs/cluster.md): `all` runs frontend and broker in one process; `frontend`
 * serves enqueues, lookups and admin and forwards Dequeue; `broker` registers itself,
 * owns partitions and runs maintenance.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { authInterceptor } from "./api/auth-interceptor.js";
import { clientFaultGate } from "./api/client-faults.js";
import { registerClusterInfo } from "./api/cluster-info.js";
import { registerClusterService } from "./api/cluster-service.js";
import { AHEAD_HOLD_MS_DEFAULT, AHEAD_HOLD_MS_MAX, OpenStreams } from "./api/dequeue-stream.js";
import { errorInterceptor } from "./api/errors.js";
import { StrictBytesRouter } from "./api/json-bytes.js";
import { connectHandler } from "./api/node-adapter.js";
import { ReadBudget } from "./api/read-budget.js";
import { registerServices } from "./api/services.js";
import { registerTestControl } from "./api/test-control.js";
import { registerTokenService } from "./api/token-service.js";
import { ensureBootstrapToken, TokenAdmin } from "./auth/token-admin.js";
import { TokenVerifier } from "./auth/verifier.js";
import { Broker } from "./broker/broker.js";
import { Membership } from "./cluster/membership.js";
import { Peers, type PeerTls } from "./cluster/peers.js";
import { Router } from "./cluster/router.js";
import { type Clock, ManualClock, systemClock } from "./domain/clock.js";
import { limits } from "./domain/limits.js";
import { Engine } from "./engine/engine.js";
import { allCounters, QueueTotals } from "./engine/queue-totals.js";
import {
  type ConnectionEvents,
  type ConnectionLimits,
  defaultMaxConnections,
  type Listener,
  listen,
} from "./http/listener.js";
import { withStaticUi } from "./http/static-ui.js";
import { readTlsFiles, type TlsFiles, type TlsMaterial } from "./http/tls.js";
import { type Logger, silentLogger, throttledLog } from "./log.js";
import { Maintenance } from "./maintenance/maintenance.js";
import { Metrics } from "./metrics.js";
import { withRoutes } from "./routes.js";
import type { Store } from "./store/store.js";

export type Role = "all" | "frontend" | "broker";

export interface ServerOptions {
  store: Store;
  /** Default "all". */
  role?: Role;
  /** How other nodes reach this one; default the listening URL (with this host's name when listening on a wildcard address). */
  advertiseUrl?: string;
  host?: string;
  port?: number;
  clock?: Clock;
  log?: Logger;
  /** Largest request accepted, in bytes (default 64 MiB: a full batch of large bodies). */
  maxRequestBytes?: number;
  /** False: every call through connect-es (api/connect-unary.ts serves the common unary call otherwise); for tests that compare the two. */
  fastUnary?: boolean;
  /** Request bytes held at once over every call; past it, calls wait to read more (default 256 MiB; api/read-budget.ts). */
  maxRequestBytesTotal?: number;
  /**
   * How long jobs started ahead for a worker that comes straight back for more wait for its
   * credits (default 50 ms, at most 1000; 0: nothing is started ahead). api/dequeue-stream.ts.
   */
  handOutAheadMs?: number;
  /** Jobs prefetched per owned partition (default: the store's defaultBufferSize). */
  bufferSize?: number;
  /** Body bytes prefetched per owned partition (default 64 MiB; one larger job is still taken). */
  bufferBytes?: number;
  /** Body bytes prefetched across every partition the broker owns (default 512 MiB; a partition with an empty buffer still takes one job). */
  bufferBytesTotal?: number;
  /** Partition lease and broker registration lifetime (default 5 s): a dead broker's partitions move within about this long (+ a third). */
  leaseTtlMs?: number;
  sweepIntervalMs?: number;
  gcIntervalMs?: number;
  /** How often the maintenance leader looks for due schedules at least (default 1 s; it also wakes at the next due time). */
  fireIntervalMs?: number;
  /** How long ended workflow instances are kept (default 7 days; docs/workflows.md#retention). */
  instanceRetentionMs?: number;
  /**
   * Gzip responses of 1 KiB or more for clients that accept it (default off: on a LAN the
   * CPU costs more than the bytes save; compressed requests are always accepted).
   */
  compressResponses?: boolean;
  /** Serve Prometheus metrics on GET /metrics (default true; docs/metrics.md). */
  metrics?: boolean;
  /**
   * Serve the web dashboard's built files at /ui (default true, except on a broker alone:
   * docs/dashboard.md). It talks to the public services like any client; off, /ui and /
   * go to Connect (404).
   */
  ui?: boolean;
  /** Where the dashboard's build is (default server/ui/dist, written by `npm run build:ui`). */
  uiDir?: string;
  /** Most connections open at once (default: the open-files limit less 128, at most 10,000). */
  maxConnections?: number;
  /** Most queues the store may hold (default limits.queuesMaxDefault; CreateQueue answers resource_exhausted past it). */
  maxQueues?: number;
  /** Time a client has to send a request head: the HTTP/2 preface or an HTTP/1.1 request's headers (default 10 s). */
  headerTimeoutMs?: number;
  /** A connection with no call in progress is closed after this (default 65 s). */
  idleTimeoutMs?: number;
  /** How long shutdown waits for in-flight calls (default 10 s). */
  shutdownGraceMs?: number;
  /**
   * Serve runlater.testing.v1.TestControlService (tests only): the server then runs on a
   * ManualClock (the one given, or one starting at the real time). Off: the service refuses.
   */
  enableTestControl?: boolean;
  /**
   * Calls need an API token (docs/security.md). `bootstrapToken` becomes an admin token if
   * the store lacks it; at least one token must exist.
   */
  auth?: { bootstrapToken?: string };
  /** Sent and checked on every call between the nodes of a cluster (needed with auth and split roles). */
  clusterSecret?: string;
  /**
   * Serve TLS on the port (docs/security.md#tls): HTTP/1.1 and HTTP/2 chosen by ALPN. With
   * `clientCaFile`, clients must present a certificate that chains to it, and this node
   * presents its own certificate to the other nodes.
   */
  tls?: TlsFiles & {
    /** PEM CA that the other nodes' certificates chain to, for calls to them (default: Node's trusted CAs). */
    peerCaFile?: string;
  };
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly engine: Engine;
  readonly maintenance: Maintenance;
  /** Undefined on a frontend. */
  readonly broker: Broker | undefined;
  readonly membership: Membership;
  /** Graceful stop: refuse new calls, end long polls, finish in-flight calls, release buffered jobs. */
  stop(): Promise<void>;
  /**
   * Reads the TLS files again (SIGHUP): connections accepted from now on, and connections to
   * nodes not yet called, use the new certificate. A bad file is refused (throws) and the
   * current certificate stays. Throws without TLS.
   */
  reloadTls(): void;
}

export async function startServer(o: ServerOptions): Promise<RunningServer> {
  if (o.enableTestControl && o.clock && !(o.clock instanceof ManualClock))
    throw new Error("enableTestControl needs a ManualClock");
  const aheadHoldMs = handOutAheadMs(o.handOutAheadMs); // checked before anything is opened
  const clock = o.clock ?? (o.enableTestControl ? new ManualClock(Date.now()) : systemClock);
  const log = o.log ?? silentLogger;
  const store = o.store;
  const role = o.role ?? "all";
  checkRole(role, store.name);
  if (o.auth && role !== "all" && o.clusterSecret === undefined) {
    throw new Error(
      `--role ${role} with auth needs a cluster secret (RUNLATER_CLUSTER_SECRET or --cluster-secret-file): nodes call each other`,
    );
  }
  if (o.auth) await ensureBootstrapToken(store, clock, o.auth.bootstrapToken);
  for (const [flag, value] of [
    ["max connections", o.maxConnections],
    ["header timeout", o.headerTimeoutMs],
    ["idle timeout", o.idleTimeoutMs],
  ] as const) {
    // Node's timers overflow past 2^31 - 1 ms (about 24.8 days).
    if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= 2 ** 31 - 1))
      throw new Error(`${flag} is ${value}; use a whole number from 1 to ${2 ** 31 - 1}`);
  }
  if (
    o.maxQueues !== undefined &&
    !(Number.isInteger(o.maxQueues) && o.maxQueues >= 1 && o.maxQueues <= limits.queuesMaxLimit)
  )
    throw new Error(`max queues is ${o.maxQueues}; use a whole number from 1 to ${limits.queuesMaxLimit}`);
  if (
    o.maxRequestBytesTotal !== undefined &&
    !(Number.isSafeInteger(o.maxRequestBytesTotal) && o.maxRequestBytesTotal >= 1)
  )
    throw new Error(`max request bytes total is ${o.maxRequestBytesTotal}; use a whole number of bytes, at least 1`);
  const leaseTtlMs = o.leaseTtlMs ?? 5_000;
  if (!(leaseTtlMs >= 300))
    throw new Error(`lease TTL is ${leaseTtlMs} ms; use at least 300 (renewals happen every third of it)`);
  const brokerId = `broker-${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  const membership = new Membership({
    store,
    clock,
    log,
    ttlMs: leaseTtlMs,
    selfId: role === "frontend" ? undefined : brokerId,
  });
  const broker =
    role === "frontend"
      ? undefined
      : new Broker({
          store,
          clock,
          log,
          owner: brokerId,
          bufferSize: o.bufferSize ?? store.defaultBufferSize,
          bufferBytes: o.bufferBytes ?? 64 * 1024 * 1024,
          bufferBytesTotal: o.bufferBytesTotal ?? 512 * 1024 * 1024,
          leaseTtlMs,
          ownership: membership,
          // One process on the memory or SQLite store hears every announcement; a shared store may have other writers.
          recheckEmptyMs: isSingleProcess(store.name) ? undefined : 1000,
        });
  let tlsMaterial = o.tls && readTlsFiles(o.tls);
  const peerCa = o.tls?.peerCaFile === undefined ? undefined : readPeerCa(o.tls.peerCaFile);
  const peers = new Peers(o.clusterSecret, () => peerTls(tlsMaterial, peerCa));
  const router = new Router({ membership, local: broker, peers, store, clock, log });
  membership.onChange(() => {
    peers.retain(new Set(membership.brokers().map((b) => b.url)));
    broker?.rebalance();
  });
  const metrics = o.metrics === false ? undefined : new Metrics(broker);
  const totals = new QueueTotals(clock.now());
  const counters = allCounters(metrics, totals);
  const engine = new Engine({ store, broker: router, clock, counters, maxQueues: o.maxQueues });
  router.release = (jobs) => engine.releaseUndelivered(jobs);
  const maintenance = new Maintenance({
    store,
    engine,
    clock,
    log,
    sweepIntervalMs: o.sweepIntervalMs ?? 1000,
    gcIntervalMs: o.gcIntervalMs ?? 60_000,
    fireIntervalMs: o.fireIntervalMs,
    instanceRetentionMs: o.instanceRetentionMs,
    chunk: 1000,
    isLeader: () => membership.leads(),
    counters,
  });
  const shutdown = new AbortController();
  const streams = new OpenStreams(aheadHoldMs);
  const verifier = o.auth ? new TokenVerifier(store, clock) : undefined;
  const tokenAdmin = new TokenAdmin(store, clock, verifier ?? new TokenVerifier(store, clock));
  const readBudget = new ReadBudget(o.maxRequestBytesTotal ?? 256 * 1024 * 1024);
  const waitLog = throttledLog(
    log,
    "info",
    "calls wait to read their requests: --max-request-bytes-total of request bytes are held",
  );
  readBudget.onWait = () => waitLog({ maxRequestBytesTotal: readBudget.maxBytes, waiting: readBudget.waiting + 1 });
  metrics?.watchReadBudget(readBudget);
  const handler = connectHandler({
    log,
    readBudget,
    fastUnary: o.fastUnary,
    routes: (connectRouter) => {
      // Every method on its own, so that JSON bytes fields get strict base64 (json-bytes.ts).
      const routes = new StrictBytesRouter(connectRouter);
      registerServices(routes, engine, { frontend: role !== "broker", streams, totals });
      if (role !== "broker") registerTokenService(routes, tokenAdmin, verifier !== undefined);
      registerClusterInfo(routes, {
        role,
        membership,
        heldLeases: broker && (() => broker.heldLeases()),
        engine,
        clock,
      });
      if (broker) registerClusterService(routes, router);
      registerTestControl(
        routes,
        o.enableTestControl ? { clock: clock as ManualClock, engine, maintenance } : undefined,
      );
    },
    readMaxBytes: o.maxRequestBytes ?? 64 * 1024 * 1024,
    // The server reads no unknown fields (looking for them costs a sixth of reading a
    // Dequeue answer's worth); the only ones it writes are a DequeueStream hand-out's jobs,
    // encoded by hand (api/dequeue-stream.ts handOutMessage).
    binaryOptions: { readUnknownFields: false, writeUnknownFields: true },
    compressMinBytes: o.compressResponses ? 1024 : Number.MAX_SAFE_INTEGER,
    shutdownSignal: shutdown.signal,
    requestGate: clientFaultGate,
    // The metrics interceptor is outermost: it sees the code errorInterceptor settled on,
    // also for calls auth refused.
    interceptors: [
      ...(metrics ? [metrics.interceptor()] : []),
      errorInterceptor(log),
      ...(verifier ? [authInterceptor({ verifier, clusterSecret: o.clusterSecret })] : []),
    ],
  });
  const host = o.host ?? "127.0.0.1";
  let stoppingNow = false;
  const routed = withRoutes(handler, {
    log,
    metrics,
    verifier,
    ready: async () => !stoppingNow && (await store.brokerList({ now: clock.now() })) !== undefined,
  });
  const connectionLimits: ConnectionLimits = {
    maxConnections: o.maxConnections ?? defaultMaxConnections(),
    headerTimeoutMs: o.headerTimeoutMs ?? 10_000,
    idleTimeoutMs: o.idleTimeoutMs ?? 65_000,
  };
  const listener: Listener = await listen(
    // A broker alone serves no QueueService or JobService, which the dashboard needs.
    o.ui === false || role === "broker" ? routed : withStaticUi(routed, o.uiDir),
    host,
    o.port ?? 8080,
    connectionLimits,
    connectionEvents(log, metrics, connectionLimits),
    tlsMaterial,
  );
  metrics?.watchConnections(() => listener.connections);
  const scheme = o.tls ? "https" : "http";
  const url = `${scheme}://${host.includes(":") ? `[${host}]` : host}:${listener.port}`;
  // Register only once listening: other nodes forward to us as soon as they see us.
  await membership.start(o.advertiseUrl ?? advertisedUrl(scheme, host, listener.port));
  broker?.start();
  if (broker) maintenance.start();
  log.info(
    {
      url,
      role,
      store: store.name,
      broker: broker ? brokerId : undefined,
      limits,
      connections: connectionLimits,
      tls: o.tls && { cert: o.tls.certFile, clientCertificates: tlsMaterial?.requireClientCert ?? false },
    },
    "listening",
  );

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: listener.port,
    engine,
    maintenance,
    broker,
    membership,
    reloadTls() {
      if (!o.tls) throw new Error("the server was started without TLS: there is nothing to reload");
      const material = readTlsFiles(o.tls);
      listener.reloadTls(material);
      tlsMaterial = material;
      log.info({ cert: o.tls.certFile }, "TLS certificate reloaded");
    },
    stop() {
      stoppingNow = true;
      stopping ??= (async () => {
        log.info("shutting down");
        const closed = listener.close(o.shutdownGraceMs ?? 10_000);
        shutdown.abort(); // ends long polls at once (they return empty)
        await membership.stop(); // leave the registry first, so the others take over at once
        await broker?.stop();
        await closed;
        // No connection is left: streams hand back the jobs they never wrote, before the store closes.
        streams.abandonAll();
        await engine.handBacksSettled();
        peers.close();
        await maintenance.stop();
        await store.close();
        // The share of claim queries that found nothing: how often a broker looked at an empty partition.
        log.info({ claimQueries: broker?.claimStats.queries, emptyClaimQueries: broker?.claimStats.empty }, "stopped");
      })();
      return stopping;
    },
  };
}

/**
 * Whether a kind of store belongs to one process: the memory store lives in it, a SQLite
 * file is owned by it. Split roles need a store several processes share.
 */
function isSingleProcess(kind: string): boolean {
  return kind === "memory" || kind === "sqlite";
}

/** Refuses a split role on a store of one process (`kind`: a store's name or its --store kind). */
export function checkRole(role: Role, kind: string): void {
  if (role === "all" || !isSingleProcess(kind)) return;
  const why = kind === "memory" ? "the memory store lives inside one process" : "a SQLite file is owned by one process";
  throw new Error(`--role ${role} needs a shared store (redis:// or mysql://): ${why}`);
}

/** Connection events as log lines (each kind at most one line per 10 s, with a count) and metrics. */
function connectionEvents(log: Logger, metrics: Metrics | undefined, bounds: ConnectionLimits): ConnectionEvents {
  const refused = throttledLog(
    log,
    "warn",
    "connection refused: --max-connections are open and every one is busy; raise the limit (and the open-files limit) or add nodes",
  );
  const closedAtLimit = throttledLog(log, "info", "idle connection closed to make room at --max-connections");
  const headerTimeout = throttledLog(log, "info", "connection closed: no request head within --header-timeout");
  const acceptFailed = throttledLog(log, "error", "could not accept a connection");
  const tlsFailed = throttledLog(log, "info", "TLS handshake failed");
  return {
    refused() {
      metrics?.connectionRefused();
      refused({ maxConnections: bounds.maxConnections });
    },
    closed(reason) {
      metrics?.connectionClosed(reason);
      if (reason === "limit") closedAtLimit({ maxConnections: bounds.maxConnections });
      else headerTimeout({ headerTimeoutMs: bounds.headerTimeoutMs });
    },
    acceptFailed(err) {
      acceptFailed({ err: err.message });
    },
    tlsFailed(err) {
      metrics?.connectionClosed("tls_handshake");
      tlsFailed({ err: err.message });
    },
  };
}

function advertisedUrl(scheme: string, host: string, port: number): string {
  const wildcard = host === "0.0.0.0" || host === "::" || host === "";
  const name = wildcard ? hostname() : host;
  return `${scheme}://${name.includes(":") ? `[${name}]` : name}:${port}`;
}

function readPeerCa(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`cannot read the peer CA ${path}: ${(err as Error).message}`);
  }
}

/** How this node calls https:// peers: their CA, and its own certificate where nodes require client certificates. */
function peerTls(material: TlsMaterial | undefined, ca: Buffer | undefined): PeerTls {
  const own = material?.requireClientCert
    ? { cert: material.context.cert as Buffer, key: material.context.key as Buffer }
    : {};
  return { ...(ca === undefined ? {} : { ca }), ...own };
}

/** --hand-out-ahead, checked: a whole number of milliseconds from 0 to AHEAD_HOLD_MS_MAX. */
function handOutAheadMs(ms: number | undefined): number {
  if (ms === undefined) return AHEAD_HOLD_MS_DEFAULT;
  if (!Number.isInteger(ms) || ms < 0 || ms > AHEAD_HOLD_MS_MAX)
    throw new Error(
      `--hand-out-ahead must be a whole number of milliseconds from 0 to ${AHEAD_HOLD_MS_MAX}, not ${ms}`,
    );
  return ms;
}

/** GET /metrics answers with the Prometheus text format; every other request goes to Connect. */
