/**
 * Assembles a runlater node: store → broker → router → engine → Connect handlers on one
 * port (Connect JSON/binary over HTTP/1.1 and h2c, gRPC, gRPC-Web), plus maintenance.
 *
 * Roles (docs/cluster.md): `all` runs frontend and broker in one process; `frontend`
 * serves enqueues, lookups and admin and forwards Dequeue; `broker` registers itself,
 * owns partitions and runs maintenance.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { registerClusterService } from "./api/cluster-service.js";
import { OpenStreams } from "./api/dequeue-stream.js";
import { errorInterceptor } from "./api/errors.js";
import { createNodeHandler } from "./api/node-handler.js";
import { registerServices } from "./api/services.js";
import { registerTestControl } from "./api/test-control.js";
import { Broker } from "./broker/broker.js";
import { Membership } from "./cluster/membership.js";
import { Peers } from "./cluster/peers.js";
import { Router } from "./cluster/router.js";
import { type Clock, ManualClock, systemClock } from "./domain/clock.js";
import { limits } from "./domain/limits.js";
import { Engine } from "./engine/engine.js";
import { type Listener, listen, type RequestHandler } from "./http/listener.js";
import { type Logger, silentLogger } from "./log.js";
import { Maintenance } from "./maintenance/maintenance.js";
import { Metrics } from "./metrics.js";
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
  /** How long shutdown waits for in-flight calls (default 10 s). */
  shutdownGraceMs?: number;
  /**
   * Serve runlater.testing.v1.TestControlService (tests only): the server then runs on a
   * ManualClock (the one given, or one starting at the real time). Off: the service refuses.
   */
  enableTestControl?: boolean;
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
}

export async function startServer(o: ServerOptions): Promise<RunningServer> {
  if (o.enableTestControl && o.clock && !(o.clock instanceof ManualClock))
    throw new Error("enableTestControl needs a ManualClock");
  const clock = o.clock ?? (o.enableTestControl ? new ManualClock(Date.now()) : systemClock);
  const log = o.log ?? silentLogger;
  const store = o.store;
  const role = o.role ?? "all";
  if (role !== "all" && store.name === "memory") {
    throw new Error(
      `--role ${role} needs a shared store (redis:// or mysql://): the memory store lives inside one process`,
    );
  }
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
          // One process on the memory store hears every announcement; a shared store may have other writers.
          recheckEmptyMs: store.name === "memory" ? undefined : 1000,
        });
  const peers = new Peers();
  const router = new Router({ membership, local: broker, peers, store, clock, log });
  membership.onChange(() => {
    peers.retain(new Set(membership.brokers().map((b) => b.url)));
    broker?.rebalance();
  });
  const metrics = o.metrics === false ? undefined : new Metrics(broker);
  const engine = new Engine({ store, broker: router, clock, counters: metrics });
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
    counters: metrics,
  });
  const shutdown = new AbortController();
  const streams = new OpenStreams();
  const handler = createNodeHandler({
    log,
    routes: (routes) => {
      registerServices(routes, engine, { frontend: role !== "broker", streams });
      if (broker) registerClusterService(routes, router);
      registerTestControl(
        routes,
        o.enableTestControl ? { clock: clock as ManualClock, engine, maintenance } : undefined,
      );
    },
    readMaxBytes: o.maxRequestBytes ?? 64 * 1024 * 1024,
    // The server reads requests and writes answers of its own: no unknown fields to keep
    // or to look for (looking costs a sixth of encoding a Dequeue answer).
    binaryOptions: { readUnknownFields: false, writeUnknownFields: false },
    compressMinBytes: o.compressResponses ? 1024 : Number.MAX_SAFE_INTEGER,
    shutdownSignal: shutdown.signal,
    // The metrics interceptor is outermost: it sees the code errorInterceptor settled on.
    interceptors: [...(metrics ? [metrics.interceptor()] : []), errorInterceptor(log)],
  });
  const host = o.host ?? "127.0.0.1";
  const listener: Listener = await listen(
    metrics ? withMetricsRoute(handler, metrics, log) : handler,
    host,
    o.port ?? 8080,
  );
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${listener.port}`;
  // Register only once listening: other nodes forward to us as soon as they see us.
  await membership.start(o.advertiseUrl ?? advertisedUrl(host, listener.port));
  broker?.start();
  if (broker) maintenance.start();
  log.info({ url, role, store: store.name, broker: broker ? brokerId : undefined, limits }, "listening");

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: listener.port,
    engine,
    maintenance,
    broker,
    membership,
    stop() {
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

function advertisedUrl(host: string, port: number): string {
  const wildcard = host === "0.0.0.0" || host === "::" || host === "";
  const name = wildcard ? hostname() : host;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
}

/** GET /metrics answers with the Prometheus text format; every other request goes to Connect. */
function withMetricsRoute(handler: RequestHandler, metrics: Metrics, log: Logger): RequestHandler {
  return (req, res) => {
    if (req.method !== "GET" || req.url !== "/metrics") return handler(req, res);
    metrics.render().then(
      ({ body, contentType }) => {
        res.statusCode = 200;
        res.setHeader("content-type", contentType);
        res.end(body);
      },
      (err: unknown) => {
        log.warn({ err }, "could not render metrics");
        res.statusCode = 500;
        res.setHeader("content-type", "text/plain");
        res.end("could not render metrics\n");
      },
    );
  };
}
