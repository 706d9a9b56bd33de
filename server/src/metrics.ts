/**
 * Prometheus metrics, served as text on GET /metrics on the server's own port (docs/metrics.md).
 * Counters the engine and maintenance bump as jobs move (JobCounters), the duration of
 * every RPC by method and code (a Connect interceptor), the broker's buffers read at
 * scrape time, and Node's process metrics. One registry per server: tests run several
 * servers in one process.
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { onCallEnd } from "./api/call-end.js";
import type { AckResult, JobCounters } from "./engine/counters.js";

export interface BufferGauges {
  bufferedJobs(): number;
  bufferedBytes(): number;
}

export class Metrics implements JobCounters {
  readonly registry = new Registry();
  private readonly enqueuedTotal = this.counter(
    "runlater_jobs_enqueued_total",
    "Jobs accepted by Enqueue, by queue (an idempotent repeat counts again).",
    ["queue"],
  );
  private readonly handedOutTotal = this.counter(
    "runlater_jobs_handed_out_total",
    "Jobs handed out by Dequeue to the callers of this node, by queue.",
    ["queue"],
  );
  private readonly ackedTotal = this.counter(
    "runlater_jobs_acked_total",
    "Acks by queue and result: succeeded, failed (retried later or failed for good), stale_claim (the claim was no longer the caller's), not_found.",
    ["queue", "result"],
  );
  private readonly expiredTotal = this.counter(
    "runlater_claims_expired_total",
    "Claims that ran out (the worker neither acked nor extended in time), by queue.",
    ["queue"],
  );
  private readonly retentionTotal = this.counter(
    "runlater_jobs_retention_deleted_total",
    "Finished jobs deleted by retention GC, by queue.",
    ["queue"],
  );
  private readonly rpcSeconds = new Histogram({
    name: "runlater_rpc_duration_seconds",
    help: "Time to answer each RPC, by method and code (a Dequeue's long poll included; a DequeueStream counts when it ends).",
    labelNames: ["method", "code"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  private readonly connectionsRefused = this.counter(
    "runlater_connections_refused_total",
    "New connections closed at once: --max-connections were open and every one was busy.",
    [],
  );
  private readonly connectionsClosed = this.counter(
    "runlater_connections_closed_total",
    "Connections the server closed, by reason: limit (idle, closed to make room at --max-connections), header_timeout (no request head within --header-timeout), tls_handshake (a failed TLS handshake).",
    ["reason"],
  );

  constructor(buffers?: BufferGauges) {
    collectDefaultMetrics({ register: this.registry, prefix: "runlater_" });
    if (buffers) {
      this.gauge("runlater_broker_buffered_jobs", "Jobs in this broker's prefetch buffers.", () =>
        buffers.bufferedJobs(),
      );
      this.gauge(
        "runlater_broker_buffered_bytes",
        "Body bytes in this broker's prefetch buffers (bounded by --buffer-bytes-total).",
        () => buffers.bufferedBytes(),
      );
    }
  }

  enqueued(queue: string, jobs: number): void {
    this.enqueuedTotal.inc({ queue }, jobs);
  }

  handedOut(queue: string, jobs: number): void {
    this.handedOutTotal.inc({ queue }, jobs);
  }

  acked(queue: string, result: AckResult, jobs: number): void {
    this.ackedTotal.inc({ queue, result }, jobs);
  }

  claimsExpired(queue: string, jobs: number): void {
    this.expiredTotal.inc({ queue }, jobs);
  }

  retentionDeleted(queue: string, jobs: number): void {
    this.retentionTotal.inc({ queue }, jobs);
  }

  connectionRefused(): void {
    this.connectionsRefused.inc();
  }

  connectionClosed(reason: string): void {
    this.connectionsClosed.inc({ reason });
  }

  /** The open connections gauge, read from the listener at scrape time. */
  watchConnections(open: () => number): void {
    this.gauge("runlater_connections_open", "Connections open now (bounded by --max-connections).", open);
  }

  /** The read budget's gauges (api/read-budget.ts), read at scrape time. */
  watchReadBudget(budget: { held: number; waiting: number }): void {
    this.gauge(
      "runlater_request_bytes_held",
      "Request bytes held now over every call (bounded by --max-request-bytes-total, plus one request).",
      () => budget.held,
    );
    this.gauge(
      "runlater_request_reads_waiting",
      "Calls waiting to read more of their request because --max-request-bytes-total is reached.",
      () => budget.waiting,
    );
  }

  /** Times every call; the code is "ok" or the Connect code's name (e.g. "not_found"). */
  interceptor(): Interceptor {
    return (next) => (req) => {
      const end = this.rpcSeconds.startTimer({ method: req.method.name });
      return onCallEnd(next(req), (err) => {
        end({ code: err === undefined ? "ok" : codeName(ConnectError.from(err).code) });
        return undefined;
      });
    };
  }

  /** The text exposition format, and its content type. */
  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  private counter(name: string, help: string, labelNames: string[]): Counter {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }
}

/** Code.NotFound → "not_found", as Connect spells codes on the wire. */
function codeName(code: Code): string {
  return (Code[code] ?? "unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}
