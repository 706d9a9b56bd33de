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

export type RequestHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

export interface Listener {
  readonly port: number;
  /** Stops accepting connections; resolves when every connection has closed. */
  close(graceMs: number): Promise<void>;
}

export function listen(handler: RequestHandler, host: string, port: number): Promise<Listener> {
  const h1 = http.createServer(handler as http.RequestListener);
  h1.keepAliveTimeout = 65_000;
  // Node arms headersTimeout/requestTimeout checks on 'listening'; this server never
  // listens itself (sockets are handed over below), so arm them explicitly.
  h1.emit("listening");
  const h2 = http2.createServer({}, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
  const sockets = new Set<net.Socket>();
  // The HTTP/1.1 server never listens itself, so its own idle-connection tracking is off:
  // count in-flight requests per socket to close idle keep-alive sockets on shutdown.
  const inFlight = new Map<net.Socket, number>();
  let closing = false;
  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    if (closing) res.setHeader("connection", "close");
    res.on("close", () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (closing && left === 0) socket.destroy();
    });
  });
  const closeIdleH1 = () => {
    for (const [socket, count] of inFlight) if (count === 0) socket.destroy();
  };
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  // noDelay: replies are small and latency-bound; Nagle would hold them back.
  const front = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      inFlight.delete(socket);
    });
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
      // The HTTP/2 session reads what we put back from the socket's buffer itself;
      // resuming would let those bytes flow to no listener. HTTP/1.1 needs the resume.
      (isH2 ? h2 : h1).emit("connection", socket);
      if (!isH2) {
        inFlight.set(socket, 0);
        socket.resume();
      }
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
            closing = true;
            front.close(() => {
              clearTimeout(force);
              h1.close(); // stops the request-timeout checks armed above
              done();
            });
            closeIdleH1();
            for (const session of sessions) session.close(); // finishes open streams, refuses new ones
            const force = setTimeout(() => {
              for (const s of sockets) s.destroy();
            }, graceMs);
            force.unref();
          });
        },
      });
    });
  });
}
