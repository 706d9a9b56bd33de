/**
 * Assembles a runlater node: store → broker → engine → Connect handlers on one port
 * (Connect JSON/binary over HTTP/1.1 and h2c, gRPC, gRPC-Web), plus maintenance.
 */
import { randomBytes } from "node:crypto";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { errorInterceptor } from "./api/errors.js";
import { registerServices } from "./api/services.js";
import { registerTestControl } from "./api/test-control.js";
import { Broker } from "./broker/broker.js";
import { type Clock, ManualClock, systemClock } from "./engine/clock.js";
import { Engine } from "./engine/engine.js";
import { limits } from "./engine/limits.js";
import { listen, type Listener } from "./http/listener.js";
import { type Logger, silentLogger } from "./log.js";
import { Maintenance } from "./maintenance/maintenance.js";
import type { Store } from "./store/store.js";

export interface ServerOptions {
  store: Store;
  host?: string;
  port?: number;
  clock?: Clock;
  log?: Logger;
  /** Largest request accepted, in bytes (default 64 MiB: a full batch of large bodies). */
  maxRequestBytes?: number;
  /** Jobs prefetched per owned partition (default 1000). */
  bufferSize?: number;
  leaseTtlMs?: number;
  sweepIntervalMs?: number;
  gcIntervalMs?: number;
  /**
   * Gzip responses of 1 KiB or more for clients that accept it (default off: on a LAN the
   * CPU costs more than the bytes save; compressed requests are always accepted).
   */
  compressResponses?: boolean;
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
  readonly broker: Broker;
  /** Graceful stop: refuse new calls, end long polls, finish in-flight calls, release buffered jobs. */
  stop(): Promise<void>;
}

export async function startServer(o: ServerOptions): Promise<RunningServer> {
  if (o.enableTestControl && o.clock && !(o.clock instanceof ManualClock)) throw new Error("enableTestControl needs a ManualClock");
  const clock = o.clock ?? (o.enableTestControl ? new ManualClock(Date.now()) : systemClock);
  const log = o.log ?? silentLogger;
  const store = o.store;
  const broker = new Broker({
    store,
    clock,
    log,
    owner: `broker-${randomBytes(4).toString("hex")}`,
    bufferSize: o.bufferSize ?? 1000,
    leaseTtlMs: o.leaseTtlMs ?? 30_000,
  });
  const engine = new Engine({ store, broker, clock });
  const maintenance = new Maintenance({
    store,
    engine,
    clock,
    log,
    sweepIntervalMs: o.sweepIntervalMs ?? 1000,
    gcIntervalMs: o.gcIntervalMs ?? 60_000,
    chunk: 1000,
  });
  const shutdown = new AbortController();
  const handler = connectNodeAdapter({
    routes: (router) =>
      registerTestControl(registerServices(router, engine), o.enableTestControl ? { clock: clock as ManualClock, engine, maintenance } : undefined),
    readMaxBytes: o.maxRequestBytes ?? 64 * 1024 * 1024,
    compressMinBytes: o.compressResponses ? 1024 : Number.MAX_SAFE_INTEGER,
    shutdownSignal: shutdown.signal,
    interceptors: [errorInterceptor(log)],
  });
  broker.start();
  maintenance.start();
  const host = o.host ?? "127.0.0.1";
  const listener: Listener = await listen(handler, host, o.port ?? 8080);
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${listener.port}`;
  log.info({ url, store: store.name, limits }, "listening");

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: listener.port,
    engine,
    maintenance,
    broker,
    stop() {
      stopping ??= (async () => {
        log.info("shutting down");
        const closed = listener.close(o.shutdownGraceMs ?? 10_000);
        shutdown.abort(); // ends long polls at once (they return empty)
        await broker.stop();
        await closed;
        await maintenance.stop();
        await store.close();
        log.info("stopped");
      })();
      return stopping;
    },
  };
}
