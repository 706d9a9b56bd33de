/**
 * One TCP port for HTTP/1.1 and h2c. Node's plaintext http2 server cannot fall back to
 * HTTP/1.1 (allowHTTP1 needs TLS/ALPN), so a net.Server peeks at the first bytes of each
 * connection and hands it to the HTTP/2 server if they are the HTTP/2 preface, else to
 * the HTTP/1.1 server.
 *
 * The front server also bounds what connections can hold (docs/limits.md):
 * - a cap on open connections: at the cap, the connection idle the longest (no call in
 *   progress, or no request head yet) is closed to make room, and a new connection is
 *   refused only when every open one is busy;
 * - a header timeout: a new connection must send its first request head (HTTP/1.1) or the
 *   HTTP/2 preface within it, and each later HTTP/1.1 request head too;
 * - an idle timeout: a connection with no call in progress is closed after it (HTTP/1.1
 *   keep-alive, HTTP/2 sessions with no open stream). Calls in progress (60 s long polls,
 *   DequeueStreams open for hours) keep their connection, however quiet.
 *
 * With TLS (http/tls.ts), each accepted connection goes through a TLS server that never
 * listens itself; ALPN picks HTTP/2 ("h2") or HTTP/1.1, so Connect, gRPC and gRPC-Web
 * all work on the one port. The handshake counts against the header timeout.
 */
import { readFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import * as tls from "node:tls";
import type { TlsMaterial } from "./tls.js";

/**
 * How much memory Node lets one HTTP/2 connection's session use (MB) before it resets new
 * streams with ENHANCE_YOUR_CALM (the client sees `internal`). Node's default, 10, was
 * reached by one client with some 10,000 calls in flight: a producer's burst of single
 * Enqueue calls over the README's client. The bytes those calls carry are bounded on their
 * own (--max-request-bytes-total); this is the session's bookkeeping (docs/limits.md).
 */
const H2_SESSION_MEMORY_MB = 64;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export type RequestHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

export interface ConnectionLimits {
  /** Most connections open at once (default: defaultMaxConnections()). */
  maxConnections: number;
  /** Time to send a request head: the first on a new connection (or the HTTP/2 preface), and each later HTTP/1.1 one (default 10 s). */
  headerTimeoutMs: number;
  /** A connection with no call in progress is closed after this (default 65 s: longer than the 60 s idle timeout of common load balancers, which must close first). */
  idleTimeoutMs: number;
}

/** What the listener reports, for logs and metrics (it imports neither). */
export interface ConnectionEvents {
  /** A new connection was closed at once: the cap was reached and every open connection was busy. */
  refused?(): void;
  /** A connection was closed because it sat idle at the cap (`limit`) or sent no request head in time (`header_timeout`). */
  closed?(reason: "limit" | "header_timeout"): void;
  /** accept() failed (out of file descriptors, most likely). */
  acceptFailed?(err: Error): void;
  /** A TLS handshake failed (a client that does not trust the certificate, a missing or refused client certificate, not TLS at all). */
  tlsFailed?(err: Error): void;
}

export interface Listener {
  readonly port: number;
  /** Connections open now. */
  readonly connections: number;
  /** Stops accepting connections; resolves when every connection has closed. */
  close(graceMs: number): Promise<void>;
  /**
   * New certificate, key and client CA for the connections accepted from now on (open ones
   * keep theirs). Whether client certificates are required is fixed at start. Throws
   * without TLS.
   */
  reloadTls(material: TlsMaterial): void;
}

/**
 * The open-files limit less room for everything else the server opens (store and peer
 * connections, files), at most 10,000; 1000 where the limit cannot be read.
 */
export function defaultMaxConnections(): number {
  let limit: number | undefined;
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (line) limit = line[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(line[1]);
  } catch {
    // not Linux
  }
  if (limit === undefined) return 1000;
  return Math.max(16, Math.min(10_000, limit - 128));
}

/** One accepted connection and what it is doing. */
interface Conn {
  socket: net.Socket;
  /** Calls in progress: HTTP/1.1 requests, HTTP/2 streams. */
  busy: number;
  /** Until the first request head (HTTP/1.1) or the preface (HTTP/2) is in. */
  headerTimer?: NodeJS.Timeout;
  /** HTTP/2 sessions: closes the session when it has had no stream for idleTimeoutMs. */
  idleTimer?: NodeJS.Timeout;
  session?: http2.ServerHttp2Session;
  closing: boolean;
}

export function listen(
  handler: RequestHandler,
  host: string,
  port: number,
  limits: Partial<ConnectionLimits> = {},
  events: ConnectionEvents = {},
  tlsMaterial?: TlsMaterial,
): Promise<Listener> {
  const maxConnections = limits.maxConnections ?? defaultMaxConnections();
  const headerTimeoutMs = limits.headerTimeoutMs ?? 10_000;
  const idleTimeoutMs = limits.idleTimeoutMs ?? 65_000;
  const h1 = http.createServer(
    {
      keepAliveTimeout: idleTimeoutMs,
      headersTimeout: headerTimeoutMs,
      requestTimeout: Math.max(300_000, headerTimeoutMs),
      // How often Node checks those two: a tenth of the header timeout, at most a second.
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headerTimeoutMs / 10))),
    },
    handler as http.RequestListener,
  );
  // Node arms headersTimeout/requestTimeout checks on 'listening'; this server never
  // listens itself (sockets are handed over below), so arm them explicitly.
  h1.emit("listening");
  const h2 = http2.createServer(
    { maxSessionMemory: H2_SESSION_MEMORY_MB },
    handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );

  const conns = new Map<net.Socket, Conn>();
  /** The Conn of a TCP socket, or of the TLS socket over it (what HTTP/1.1 requests name). */
  const connOf = new WeakMap<net.Socket, Conn>();
  /** Connections with no call in progress, the longest idle first (re-added when they become idle). */
  const idle = new Set<Conn>();
  let closingCount = 0;
  let closing = false;

  /** Closes an idle connection: HTTP/2 with a GOAWAY, the others at once (no call is in progress). */
  const closeIdle = (conn: Conn) => {
    if (conn.closing) return;
    conn.closing = true;
    closingCount++;
    idle.delete(conn);
    if (conn.session) conn.session.close();
    else conn.socket.destroy();
  };

  const setBusy = (conn: Conn, delta: number) => {
    conn.busy += delta;
    if (conn.busy > 0) {
      idle.delete(conn);
      clearTimeout(conn.idleTimer);
      conn.idleTimer = undefined;
      return;
    }
    idle.delete(conn);
    idle.add(conn);
    if (conn.session && !closing) {
      conn.idleTimer = setTimeout(() => closeIdle(conn), idleTimeoutMs);
      conn.idleTimer.unref();
    }
  };
  const handshaken = (conn: Conn) => {
    clearTimeout(conn.headerTimer);
    conn.headerTimer = undefined;
  };
  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const conn = connOf.get(req.socket);
    if (!conn) return;
    handshaken(conn);
    setBusy(conn, 1);
    if (closing) res.setHeader("connection", "close");
    res.on("close", () => {
      setBusy(conn, -1);
      if (closing && conn.busy === 0) conn.socket.destroy();
    });
  });
  // h2.emit("connection") below creates the session synchronously: this is its Conn.
  let handingOver: Conn | undefined;
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    const conn = handingOver;
    if (!conn) return;
    conn.session = session;
    session.on("stream", (stream) => {
      setBusy(conn, 1);
      stream.on("close", () => setBusy(conn, -1));
    });
    setBusy(conn, 0); // idle until its first stream
  });

  /** Hands a connection whose first bytes (or ALPN) said HTTP/2 to the HTTP/2 server. */
  const toHttp2 = (conn: Conn, socket: net.Socket) => {
    handshaken(conn);
    handingOver = conn;
    h2.emit("connection", socket);
    handingOver = undefined;
  };

  const secure = tlsMaterial && secureServer(tlsMaterial, headerTimeoutMs);
  /**
   * Connections in their TLS handshake, by their peer's address and port: the TLS server
   * hands back a new socket object, and those two are what it shares with the TCP socket.
   */
  const handshaking = new Map<string, Conn>();
  secure?.on("secureConnection", (tlsSocket: tls.TLSSocket) => {
    const key = peerKey(tlsSocket);
    const conn = handshaking.get(key);
    handshaking.delete(key);
    if (!conn || conn.closing) {
      tlsSocket.destroy();
      return;
    }
    connOf.set(tlsSocket, conn);
    if (tlsSocket.alpnProtocol === "h2") toHttp2(conn, tlsSocket);
    else h1.emit("connection", tlsSocket); // the header timer runs on until the first request head
  });
  secure?.on("tlsClientError", (err, tlsSocket) => {
    events.tlsFailed?.(err);
    tlsSocket.destroy();
  });

  const accept = (socket: net.Socket) => {
    if (conns.size - closingCount >= maxConnections) {
      const longestIdle = idle.values().next().value;
      if (longestIdle) {
        closeIdle(longestIdle);
        events.closed?.("limit");
      } else {
        socket.destroy();
        events.refused?.();
        return;
      }
    }
    const conn: Conn = { socket, busy: 0, closing: false };
    conns.set(socket, conn);
    connOf.set(socket, conn);
    idle.add(conn);
    conn.headerTimer = setTimeout(() => {
      events.closed?.("header_timeout");
      socket.destroy();
    }, headerTimeoutMs);
    conn.headerTimer.unref();
    socket.on("close", () => {
      clearTimeout(conn.headerTimer);
      clearTimeout(conn.idleTimer);
      conns.delete(socket);
      idle.delete(conn);
      if (secure) handshaking.delete(peerKey(socket));
      if (conn.closing) closingCount--;
    });
    socket.on("error", () => socket.destroy());
    if (secure) {
      // The TLS layer reads the socket itself (below JavaScript): nothing may be read first.
      handshaking.set(peerKey(socket), conn);
      secure.emit("connection", socket);
      return;
    }
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isH2 && seen.length < PREFACE.length) return; // need more bytes to be sure
      socket.off("data", onData);
      socket.pause();
      socket.unshift(seen);
      if (isH2) {
        // The HTTP/2 session reads what we put back from the socket's buffer itself;
        // resuming would let those bytes flow to no listener.
        toHttp2(conn, socket);
      } else {
        // The header timer runs on until the first request head is in ('request').
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  };

  // noDelay: replies are small and latency-bound; Nagle would hold them back.
  const front = net.createServer({ noDelay: true }, accept);

  return new Promise((resolve, reject) => {
    front.once("error", reject);
    front.listen(port, host, () => {
      front.off("error", reject);
      // Without a listener, a failed accept (EMFILE) would be thrown: report it instead.
      front.on("error", (err) => events.acceptFailed?.(err));
      const address = front.address() as net.AddressInfo;
      resolve({
        port: address.port,
        get connections() {
          return conns.size;
        },
        close(graceMs) {
          return new Promise((done) => {
            closing = true;
            front.close(() => {
              clearTimeout(force);
              h1.close(); // stops the request-timeout checks armed above
              done();
            });
            for (const conn of conns.values()) {
              clearTimeout(conn.idleTimer);
              if (!conn.session && conn.busy === 0) conn.socket.destroy(); // idle HTTP/1.1 or no request yet
            }
            for (const session of sessions) session.close(); // finishes open streams, refuses new ones
            const force = setTimeout(() => {
              for (const socket of conns.keys()) socket.destroy();
            }, graceMs);
            force.unref();
          });
        },
        reloadTls(material) {
          if (!secure) throw new Error("this listener does not serve TLS");
          secure.setSecureContext(material.context);
        },
      });
    });
  });
}

/** A TLS server that never listens: the front server hands it each accepted TCP socket. */
function secureServer(material: TlsMaterial, handshakeTimeoutMs: number): tls.Server {
  return tls.createServer({
    ...material.context,
    ALPNProtocols: ["h2", "http/1.1"],
    requestCert: material.requireClientCert,
    rejectUnauthorized: material.requireClientCert,
    handshakeTimeout: handshakeTimeoutMs,
  });
}

function peerKey(socket: net.Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
