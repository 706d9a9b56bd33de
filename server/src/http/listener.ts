/**
 * One TCP port for HTTP/1.1 and h2c. Node's plaintext http2 server cannot fall back to
 * HTTP/1.1 (allowHTTP1 needs TLS/ALPN), so a net.Server peeks at the first bytes of each
 * connection and hands it to the HTTP/2 server if they are the HTTP/2 preface, else to
 * the HTTP/1.1 server.
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export type RequestHandler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

export interface Listener {
  readonly port: number;
  /** Stops accepting connections; resolves when every connection has closed. */
  close(graceMs: number): Promise<void>;
}

export function listen(handler: RequestHandler, host: string, port: number): Promise<Listener> {
  const h1 = http.createServer(handler as http.RequestListener);
  h1.keepAliveTimeout = 65_000;
  const h2 = http2.createServer({}, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isH2 && seen.length < PREFACE.length) return; // need more bytes to be sure
      socket.off("data", onData);
      socket.pause();
      socket.unshift(seen);
      (isH2 ? h2 : h1).emit("connection", socket);
      socket.resume();
    };
    socket.on("data", onData);
  });

  return new Promise((resolve, reject) => {
    front.once("error", reject);
    front.listen(port, host, () => {
      const address = front.address() as net.AddressInfo;
      resolve({
        port: address.port,
        close(graceMs) {
          return new Promise((done) => {
            front.close(() => done());
            h1.closeIdleConnections();
            for (const session of sessions) session.close();
            const force = setTimeout(() => {
              for (const s of sockets) s.destroy();
            }, graceMs);
            force.unref();
            const poll = setInterval(() => {
              h1.closeIdleConnections();
              if (sockets.size === 0) clearInterval(poll);
            }, 50);
            poll.unref();
          });
        },
      });
    });
  });
}
