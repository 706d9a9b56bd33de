import { readFile } from "node:fs/promises";
import { type Command, InvalidArgumentError, Option } from "commander";
import { AHEAD_HOLD_MS_DEFAULT, AHEAD_HOLD_MS_MAX } from "../api/dequeue-stream.js";
import { limits } from "../domain/limits.js";
import type { Logger } from "../log.js";
import type { Role } from "../server.js";
import type { SqliteStore } from "../store/sqlite/sqlite-store.js";
import { DEFAULT_SQLITE_URL } from "../store/sqlite/sqlite-url.js";
import type { Store } from "../store/store.js";
import { usageError } from "./exits.js";
import { intOption } from "./options.js";
import { formatMs } from "./output.js";
import { parseDurationMs } from "./parse.js";

interface ServeFlags {
  role: Role;
  host: string;
  port: number;
  store: string[];
  advertiseUrl?: string;
  leaseTtl: number;
  logLevel: string;
  maxRequestBytes: number;
  maxRequestBytesTotal: number;
  bufferSize?: number;
  handOutAhead: number;
  bufferBytes: number;
  bufferBytesTotal: number;
  shutdownGrace: number;
  maxConnections?: number;
  maxQueues: number;
  headerTimeout: number;
  idleTimeout: number;
  compress?: boolean;
  metrics: boolean;
  ui: boolean;
  enableTestControl?: boolean;
  auth?: boolean;
  adminTokenFile?: string;
  clusterSecretFile?: string;
  insecureNoAuth?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
  tlsPeerCa?: string;
  instanceRetention: number;
}

/** A retention: a duration from 1s to limits.retentionMaxMs. */
function retention(value: string): number {
  const ms = parseDurationMs(value);
  if (ms < 1000 || ms > limits.retentionMaxMs)
    throw new InvalidArgumentError(`"${value}" must be from 1s to ${formatMs(limits.retentionMaxMs)}`);
  return ms;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("run a runlater server (frontend and broker) on one port: Connect, gRPC and gRPC-Web")
    .addOption(
      new Option(
        "--role <role>",
        "all: frontend and broker in one process; frontend: enqueues, lookups, admin, forwards Dequeue; broker: owns partitions (frontend and broker need a redis:// or mysql:// store)",
      )
        .choices(["all", "frontend", "broker"])
        .default("all"),
    )
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on; 0 picks a free one (printed on stdout)", intOption, 8080)
    .option(
      "--store <url>",
      `store URL: sqlite:PATH (default ${DEFAULT_SQLITE_URL}, created on first start), memory (throwaway), redis://…, redis+cluster://host:port[,host:port…], mysql://…; repeat redis:// or mysql:// for several shards`,
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option("--log-level <level>", "trace, debug, info, warn, error or silent", "info")
    .option("--max-request-bytes <n>", "largest request body accepted", intOption, 64 * 1024 * 1024)
    .option(
      "--max-request-bytes-total <n>",
      "request bytes held at once over every call (a unary call's until it ends, a stream's message until handled); past it, calls wait to read more. The oldest call still reading may always go on, so one request larger than this is still served",
      intOption,
      256 * 1024 * 1024,
    )
    .option(
      "--advertise-url <url>",
      "how other nodes reach this one (default: the listening URL; this host's name when listening on 0.0.0.0)",
    )
    .option(
      "--lease-ttl <ms>",
      "partition lease and broker registration lifetime: a dead broker's partitions move to the others within about this long (+ a third)",
      intOption,
      5_000,
    )
    .option(
      "--buffer-size <n>",
      "jobs prefetched per owned partition (default 1000; 4000 on MySQL, whose claims cost less per job in bigger batches)",
      intOption,
    )
    .option(
      "--hand-out-ahead <ms>",
      `a worker that takes its next jobs within this long after its last ones gets them started ahead, held for it at most this long (0: off; at most ${AHEAD_HOLD_MS_MAX})`,
      intOption,
      AHEAD_HOLD_MS_DEFAULT,
    )
    .option(
      "--buffer-bytes <n>",
      "body bytes prefetched per owned partition (a single larger job is still taken)",
      intOption,
      64 * 1024 * 1024,
    )
    .option(
      "--buffer-bytes-total <n>",
      "body bytes prefetched across every owned partition: the broker's memory bound (a partition with an empty buffer still takes one job)",
      intOption,
      512 * 1024 * 1024,
    )
    .option(
      "--max-connections <n>",
      "most connections open at once; at the limit the longest-idle one is closed to make room, and a new one is refused only when all are busy (default: the open-files limit less 128, at most 10000)",
      intOption,
    )
    .option(
      "--max-queues <n>",
      `most queues the store may hold; CreateQueue answers resource_exhausted past it (at most ${limits.queuesMaxLimit})`,
      intOption,
      limits.queuesMaxDefault,
    )
    .option(
      "--header-timeout <ms>",
      "time a client has to send a request head (HTTP/1.1 headers, or the HTTP/2 preface on a new connection) before the connection is closed",
      intOption,
      10_000,
    )
    .option(
      "--idle-timeout <ms>",
      "a connection with no call in progress (HTTP/1.1 keep-alive, HTTP/2 with no open stream) is closed after this; calls in progress keep theirs",
      intOption,
      65_000,
    )
    .option("--compress", "gzip responses of 1 KiB or more for clients that accept it (costs CPU; off by default)")
    .option("--no-metrics", "do not serve Prometheus metrics on GET /metrics (docs/metrics.md)")
    .option("--no-ui", "do not serve the web dashboard at /ui (docs/dashboard.md)")
    .option("--shutdown-grace <ms>", "how long shutdown waits for in-flight calls", intOption, 10_000)
    .option("--auth", "require an API token on every call (docs/security.md); on whenever a bootstrap token is given")
    .option(
      "--admin-token-file <path>",
      "file holding the bootstrap admin token (or RUNLATER_ADMIN_TOKEN; make one with `runlater token generate`); turns auth on",
    )
    .option(
      "--cluster-secret-file <path>",
      "file holding the secret the nodes of a cluster send each other (or RUNLATER_CLUSTER_SECRET); needed with auth and split roles",
    )
    .option(
      "--insecure-no-auth",
      "allow listening on a non-loopback address without auth: anyone who reaches the port can do anything",
    )
    .option(
      "--tls-cert <path>",
      "PEM certificate chain to serve TLS with (with --tls-key): HTTP/1.1 and HTTP/2 by ALPN; SIGHUP reloads it",
    )
    .option("--tls-key <path>", "PEM private key of --tls-cert")
    .option(
      "--tls-client-ca <path>",
      "PEM CA: every client must present a certificate that chains to it (mTLS); nodes then present their --tls-cert to each other",
    )
    .option(
      "--tls-peer-ca <path>",
      "PEM CA the other nodes' certificates chain to, for calls between nodes (default: the system's CAs)",
    )
    .option(
      "--instance-retention <duration>",
      "how long ended workflow instances are kept before they are deleted (docs/workflows.md#retention)",
      retention,
      limits.instanceRetentionDefaultMs,
    )
    .option(
      "--enable-test-control",
      "TESTS ONLY: run on a manual clock and serve runlater.testing.v1.TestControlService (AdvanceClock, Reset deletes every queue)",
    )
    .action(async (opts: ServeFlags, cmd: Command) => {
      const bootstrapToken = await secret(opts.adminTokenFile, "RUNLATER_ADMIN_TOKEN");
      const clusterSecret = await secret(opts.clusterSecretFile, "RUNLATER_CLUSTER_SECRET");
      const auth = opts.auth === true || bootstrapToken !== undefined;
      if (!auth && !isLoopback(opts.host) && opts.insecureNoAuth !== true) {
        usageError(
          cmd,
          `--host ${opts.host} without auth would let anyone who reaches the port do anything: give an admin token (RUNLATER_ADMIN_TOKEN or --admin-token-file, docs/security.md), or say --insecure-no-auth`,
        );
      }
      if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined))
        usageError(cmd, "--tls-cert and --tls-key go together: give both to serve TLS");
      if (opts.tlsCert === undefined && (opts.tlsClientCa !== undefined || opts.tlsPeerCa !== undefined))
        usageError(cmd, "--tls-client-ca and --tls-peer-ca need TLS: give --tls-cert and --tls-key too");
      // Loaded here, not at the top: the rest of the CLI (and --help) starts without the
      // server's modules and the store drivers (docs/cli.md, start-up time).
      const [{ createLogger }, { checkRole, startServer }, { openStore, storeKind }] = await Promise.all([
        import("../log.js"),
        import("../server.js"),
        import("../store/open-store.js"),
      ]);
      const log = createLogger(opts.logLevel);
      checkRole(opts.role, storeKind(opts.store)); // before the default SQLite file is created
      if (auth && opts.tlsCert === undefined && !isLoopback(opts.host))
        log.warn(
          { host: opts.host },
          "auth without TLS on a non-loopback address: tokens cross the network in clear text; give --tls-cert and --tls-key, or terminate TLS in front of the server",
        );
      let lastReport = 0;
      const store = await openStore(opts.store, {
        // Reconnection errors repeat every few hundred ms while a store is down: log one a second.
        onConnectionError: (err, shard) => {
          if (Date.now() - lastReport < 1000) return;
          lastReport = Date.now();
          log.warn({ err: err.message, shard }, "store connection error; reconnecting");
        },
      });
      logStore(log, store);
      // A server that cannot start (bad flag, port in use) must not leave the store's
      // connections holding the process open.
      const server = await startServer({
        store,
        role: opts.role,
        advertiseUrl: opts.advertiseUrl,
        leaseTtlMs: opts.leaseTtl,
        host: opts.host,
        port: opts.port,
        log,
        maxRequestBytes: opts.maxRequestBytes,
        maxRequestBytesTotal: opts.maxRequestBytesTotal,
        bufferSize: opts.bufferSize,
        handOutAheadMs: opts.handOutAhead,
        bufferBytes: opts.bufferBytes,
        bufferBytesTotal: opts.bufferBytesTotal,
        shutdownGraceMs: opts.shutdownGrace,
        maxConnections: opts.maxConnections,
        maxQueues: opts.maxQueues,
        headerTimeoutMs: opts.headerTimeout,
        idleTimeoutMs: opts.idleTimeout,
        compressResponses: opts.compress ?? false,
        metrics: opts.metrics,
        ui: opts.ui,
        enableTestControl: opts.enableTestControl ?? false,
        auth: auth ? { bootstrapToken } : undefined,
        clusterSecret,
        tls:
          opts.tlsCert === undefined || opts.tlsKey === undefined
            ? undefined
            : {
                certFile: opts.tlsCert,
                keyFile: opts.tlsKey,
                clientCaFile: opts.tlsClientCa,
                peerCaFile: opts.tlsPeerCa,
              },
        instanceRetentionMs: opts.instanceRetention,
      }).catch(async (err: unknown) => {
        await store.close().catch(() => {});
        throw err;
      });
      if (opts.enableTestControl)
        log.warn(
          "test control enabled: the clock is manual and Reset deletes every queue; never do this in production",
        );
      const stop = (signal: string) => {
        log.info({ signal }, "signal received");
        server.stop().then(
          () => process.exit(0),
          (err) => {
            log.error({ err }, "shutdown failed");
            process.exit(1);
          },
        );
      };
      // Before saying we listen: whoever reads that line may signal at once, and until a
      // listener exists a SIGTERM kills the process outright (no graceful stop).
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
      // SIGHUP reloads the TLS files (a renewed certificate); without TLS it is ignored, not fatal.
      process.on("SIGHUP", () => {
        if (opts.tlsCert === undefined) return log.info("SIGHUP ignored: the server serves no TLS");
        try {
          server.reloadTls();
        } catch (err) {
          log.error({ err: (err as Error).message }, "TLS reload failed; the current certificate stays");
        }
      });
      process.stdout.write(`runlater listening on ${server.url}\n`);
    });
}

/** What the store keeps: the SQLite file (path, durability), or a warning that the memory store keeps nothing. */
function logStore(log: Logger, store: Store): void {
  if (isSqlite(store)) {
    const created = store.migration.applied.includes("0001_init");
    log.info(
      { store: "sqlite", path: store.path, synchronous: store.synchronous, schemaVersion: store.migration.version },
      created ? "store: new SQLite file created" : "store: SQLite file",
    );
  } else if (store.name === "memory") {
    log.warn(
      { store: "memory" },
      "store: memory, throwaway: every queue and job is lost when this process exits (for tests; the default store is a SQLite file)",
    );
  }
}

/** A secret from a file (trimmed) or else an environment variable; undefined when neither is given. */
async function secret(file: string | undefined, variable: string): Promise<string | undefined> {
  if (file !== undefined) {
    const text = (await readFile(file, "utf8")).trim();
    if (text === "") throw new InvalidArgumentError(`${file} is empty`);
    return text;
  }
  const value = process.env[variable]?.trim();
  return value === "" ? undefined : value;
}

/** Whether `host` is reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

function isSqlite(store: Store): store is SqliteStore {
  return store.name === "sqlite";
}
