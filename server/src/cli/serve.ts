import { type Command, InvalidArgumentError, Option } from "commander";
import { limits } from "../domain/limits.js";
import { createLogger } from "../log.js";
import { type Role, startServer } from "../server.js";
import { openStore } from "../store/open-store.js";
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
  bufferSize?: number;
  bufferBytes: number;
  bufferBytesTotal: number;
  shutdownGrace: number;
  compress?: boolean;
  metrics: boolean;
  enableTestControl?: boolean;
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
    .option("--compress", "gzip responses of 1 KiB or more for clients that accept it (costs CPU; off by default)")
    .option("--no-metrics", "do not serve Prometheus metrics on GET /metrics (docs/metrics.md)")
    .option("--shutdown-grace <ms>", "how long shutdown waits for in-flight calls", intOption, 10_000)
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
        bufferSize: opts.bufferSize,
        bufferBytes: opts.bufferBytes,
        bufferBytesTotal: opts.bufferBytesTotal,
        shutdownGraceMs: opts.shutdownGrace,
        compressResponses: opts.compress ?? false,
        metrics: opts.metrics,
        enableTestControl: opts.enableTestControl ?? false,
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
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
      // Only now say so: whoever waits for this line may stop us at once (a SIGTERM before
      // the handlers above are in place would kill the process without shutting down).
      process.stdout.write(`runlater listening on ${server.url}\n`);
    });
}
