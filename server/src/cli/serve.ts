import { type Command, Option } from "commander";
import { createLogger } from "../log.js";
import { type Role, startServer } from "../server.js";
import { openStore } from "../store/open-store.js";
import { intOption } from "./options.js";

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
  bufferBytes: number;
  bufferBytesTotal: number;
  shutdownGrace: number;
  maxConnections?: number;
  headerTimeout: number;
  idleTimeout: number;
  compress?: boolean;
  metrics: boolean;
  enableTestControl?: boolean;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("run a runlater server (frontend and broker) on one port: Connect, gRPC and gRPC-Web")
    .addOption(
      new Option(
        "--role <role>",
        "all: frontend and broker in one process; frontend: enqueues, lookups, admin, forwards Dequeue; broker: owns partitions (needs a redis:// or mysql:// store)",
      )
        .choices(["all", "frontend", "broker"])
        .default("all"),
    )
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on; 0 picks a free one (printed on stdout)", intOption, 8080)
    .option(
      "--store <url>",
      "store URL: memory (default); repeat for several shards",
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
    .option("--shutdown-grace <ms>", "how long shutdown waits for in-flight calls", intOption, 10_000)
    .option(
      "--enable-test-control",
      "TESTS ONLY: run on a manual clock and serve runlater.testing.v1.TestControlService (AdvanceClock, Reset deletes every queue)",
    )
    .action(async (opts: ServeFlags) => {
      const log = createLogger(opts.logLevel);
      let lastReport = 0;
      const store = await openStore(opts.store, {
        // Reconnection errors repeat every few hundred ms while a store is down: log one a second.
        onConnectionError: (err, shard) => {
          if (Date.now() - lastReport < 1000) return;
          lastReport = Date.now();
          log.warn({ err: err.message, shard }, "store connection error; reconnecting");
        },
      });
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
        bufferBytes: opts.bufferBytes,
        bufferBytesTotal: opts.bufferBytesTotal,
        shutdownGraceMs: opts.shutdownGrace,
        maxConnections: opts.maxConnections,
        headerTimeoutMs: opts.headerTimeout,
        idleTimeoutMs: opts.idleTimeout,
        compressResponses: opts.compress ?? false,
        metrics: opts.metrics,
        enableTestControl: opts.enableTestControl ?? false,
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
      process.stdout.write(`runlater listening on ${server.url}\n`);
    });
}
