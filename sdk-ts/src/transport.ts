/**
 * Picks the @connectrpc/connect-node transport for the protocol a caller asked for.
 * The server speaks all of them on one port, so this is a client-side choice only:
 * Connect (JSON for debugging with curl-like tools, binary for speed), gRPC (HTTP/2
 * only) or gRPC-Web.
 */
import type { Http2Session } from "node:http2";
import { ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { withConnectUnary } from "./connect-unary.js";
import { readTls, type TlsOptions } from "./tls.js";

export type Protocol = "connect" | "grpc" | "grpc-web";
export type HttpVersion = "1.1" | "2";

export interface TransportOptions {
  /** Wire protocol; default "connect". */
  protocol?: Protocol;
  /** Connect only: binary protobuf (default true) or JSON. gRPC and gRPC-Web always use binary. */
  binary?: boolean;
  /**
   * "2" or "1.1". Default "2" for Connect and gRPC over http:// (h2c, prior knowledge: the
   * runlater server speaks it on its one port; calls in flight share one connection: 1.7×
   * the Enqueue calls/s with 32 in flight, docs/benchmarks.md), "1.1" for https:// (not
   * every TLS proxy offers HTTP/2) and for gRPC-Web. Pass "1.1" when a proxy in between
   * speaks only HTTP/1.1. gRPC needs "2".
   */
  httpVersion?: HttpVersion;
  /** Default deadline of every call, in ms (a call may pass its own timeoutMs). */
  timeoutMs?: number;
  /**
   * Interceptors run around every call (auth headers, logging, metrics, test spies). Over
   * binary protobuf, the answers of a Worker's DequeueStream reach them with each job as its
   * encoded bytes: the Worker reads those itself (worker/dequeued-codec.ts).
   */
  interceptors?: Interceptor[];
  /**
   * API token sent on every call as `Authorization: Bearer <token>` (a server running with
   * auth needs one); default: the RUNLATER_TOKEN environment variable.
   */
  token?: string;
  /**
   * For https:// URLs: the CA to trust and a client certificate, as PEM files (default: the
   * RUNLATER_TLS_CA, RUNLATER_TLS_CERT and RUNLATER_TLS_KEY environment variables; without
   * a CA, Node's trusted CAs).
   */
  tls?: TlsOptions;
}

export interface OpenedTransport {
  transport: Transport;
  /** Whether it carries bidirectional streams (DequeueStream): HTTP/2 with Connect or gRPC. */
  streams: boolean;
  /** Closes the HTTP/2 session, if one was opened, so the process can exit. */
  close(): void;
}

/**
 * The largest answer (one message of a stream) the client reads, as the Java and Python
 * SDKs: the server's answers stay far below it (docs/limits.md), so only a broken or
 * hostile server reaches it, and the call fails with resource_exhausted instead of the
 * process holding whatever that server sends.
 */
export const ANSWER_MAX_BYTES = 64 * 1024 * 1024;

export function openTransport(baseUrl: string, o: TransportOptions = {}): OpenedTransport {
  const protocol = o.protocol ?? "connect";
  const secure = baseUrl.startsWith("https:");
  const httpVersion = o.httpVersion ?? (protocol === "grpc" || (protocol === "connect" && !secure) ? "2" : "1.1");
  if (protocol === "grpc" && httpVersion !== "2") {
    throw new Error('gRPC needs HTTP/2: pass httpVersion "2" (or leave it unset) with protocol "grpc"');
  }
  if (o.binary !== undefined && protocol !== "connect" && !o.binary) {
    throw new Error(`binary: false (JSON) is only offered for protocol "connect", not "${protocol}"`);
  }
  const token = o.token ?? (process.env.RUNLATER_TOKEN?.trim() || undefined);
  const common = {
    baseUrl,
    interceptors: [...(token === undefined ? [] : [bearer(token)]), ...(o.interceptors ?? [])],
    defaultTimeoutMs: o.timeoutMs,
    readMaxBytes: ANSWER_MAX_BYTES,
  };
  if (o.tls !== undefined && !secure) throw new Error(`tls options need an https:// URL, not ${baseUrl}`);
  const tls = secure ? readTls(o.tls) : {};
  if (httpVersion === "1.1") {
    const options = { ...common, httpVersion, nodeOptions: tls } as const;
    return {
      transport:
        protocol === "grpc-web"
          ? createGrpcWebTransport(options)
          : createConnectTransport({ ...options, useBinaryFormat: o.binary ?? true }),
      streams: false,
      close() {},
    };
  }
  // We own the HTTP/2 session so close() can end it; otherwise an idle session keeps
  // a short script alive until its idle timeout.
  // maxSessionMemory: Node's default (10 MB) reset calls with ENHANCE_YOUR_CALM once some
  // 10,000 were in flight on the session (a producer's burst of single Enqueue calls).
  const sessionManager = new GuardedSessionManager(baseUrl, undefined, { ...tls, maxSessionMemory: 64 });
  const options = {
    ...common,
    interceptors: [http1Hint(baseUrl), ...common.interceptors] as Interceptor[],
    httpVersion,
    sessionManager,
  } as const;
  let transport: Transport;
  switch (protocol) {
    case "grpc":
      transport = createGrpcTransport(options);
      break;
    case "grpc-web":
      transport = createGrpcWebTransport(options);
      break;
    case "connect": {
      const binary = o.binary ?? true;
      // Unary calls straight on the session (connect-unary.ts); DequeueStream through connect-es.
      transport = withConnectUnary(createConnectTransport({ ...options, useBinaryFormat: binary }), {
        baseUrl,
        sessionManager,
        binary,
        interceptors: options.interceptors,
        defaultTimeoutMs: o.timeoutMs,
        readMaxBytes: ANSWER_MAX_BYTES,
      });
      break;
    }
  }
  return { transport, streams: protocol !== "grpc-web", close: () => sessionManager.abort() };
}

/** Puts the API token on every call. */
function bearer(token: string): Interceptor {
  const value = `Bearer ${token}`;
  return (next) => (req) => {
    req.header.set("authorization", value);
    return next(req);
  };
}

/**
 * Keeps a session's late error from crashing the process. A session that failed (an
 * HTTP/1.1 server answering the HTTP/2 preface) can emit its error only as it closes; a
 * close() in between (connect-node's abort of a session already destroyed) has removed
 * every listener by then, and an 'error' event with no listener is thrown. The error has
 * already reached the call that met it.
 */
class GuardedSessionManager extends Http2SessionManager {
  private readonly guarded = new WeakSet<Http2Session>();

  override async request(...args: Parameters<Http2SessionManager["request"]>) {
    const stream = await super.request(...args);
    const session = stream.session;
    if (session && !this.guarded.has(session)) {
      this.guarded.add(session);
      session.on("error", () => {});
    }
    return stream;
  }
}

/** An HTTP/2 protocol error is what a server or proxy speaking only HTTP/1.1 causes: say so. */
function http1Hint(baseUrl: string): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const cause = err instanceof ConnectError ? (err.cause as { code?: unknown } | undefined) : undefined;
      if (!(err instanceof ConnectError) || cause?.code !== "ERR_HTTP2_ERROR") throw err;
      throw new ConnectError(
        `${err.rawMessage} over HTTP/2 to ${baseUrl}: if a proxy in between speaks only HTTP/1.1, ` +
          'create the client with httpVersion: "1.1"',
        err.code,
        err.metadata,
        undefined, // a protocol error carries no details
        err.cause,
      );
    }
  };
}
