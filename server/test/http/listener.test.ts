/**
 * What a connection can hold on the one port: a connection that sends no request head
 * (nothing, half the HTTP/2 preface, half an HTTP/1.1 head) is closed after the header
 * timeout; one with no call in progress after the idle timeout, while calls in progress
 * keep theirs however long; at the connection cap the longest-idle connection makes room,
 * and a new one is refused only when every open one is busy. A handler the test controls
 * stands for the server's calls, so each step is known to have happened, not waited for.
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type ConnectionEvents, type ConnectionLimits, type Listener, listen } from "../../src/http/listener.js";

/** Requests the handler holds until the test releases them (by path: /hold/…), others answered at once. */
class Calls {
  readonly held: Array<() => void> = [];
  private waiters: Array<() => void> = [];
  handler = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    req.resume();
    const answer = () => (res as http.ServerResponse).end("done");
    if (!req.url?.startsWith("/hold")) return answer();
    this.held.push(answer);
    for (const w of this.waiters.splice(0)) w();
  };
  /** Resolves once `n` requests are being held. */
  async holding(n: number): Promise<void> {
    while (this.held.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }
  releaseAll(): void {
    for (const answer of this.held.splice(0)) answer();
  }
}

let listener: Listener | undefined;
let calls: Calls;
const seen: string[] = [];
afterEach(async () => {
  calls?.releaseAll();
  await listener?.close(100);
  listener = undefined;
  seen.length = 0;
});

async function start(limits: Partial<ConnectionLimits>): Promise<Listener> {
  calls = new Calls();
  const events: ConnectionEvents = {
    refused: () => seen.push("refused"),
    closed: (reason) => seen.push(`closed ${reason}`),
  };
  listener = await listen(calls.handler, "127.0.0.1", 0, { idleTimeoutMs: 60_000, ...limits }, events);
  return listener;
}

/** Resolves once the server has no connection open (the client may see a close first). */
async function noConnectionsLeft(): Promise<void> {
  while (listener!.connections > 0) await new Promise((r) => setTimeout(r, 20));
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => resolve(socket));
    socket.on("error", reject);
  });
}

const closed = (socket: net.Socket) =>
  new Promise<void>((resolve) => {
    if (socket.destroyed) resolve();
    socket.on("close", () => resolve());
    socket.resume(); // read (and drop) what the server sends first, e.g. a 408
  });

/** One HTTP/1.1 request on a keep-alive agent of its own (one connection per agent). */
function h1Get(
  port: number,
  path: string,
  agent = new http.Agent({ keepAlive: true }),
  sockets: net.Socket[] = [],
): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ port, host: "127.0.0.1", path, agent }, (res) => {
        sockets.push(res.socket);
        let text = "";
        res.on("data", (d: Buffer) => {
          text += d.toString();
        });
        res.on("end", () => resolve(text));
      })
      .on("error", reject);
  });
}

function h2Get(session: http2.ClientHttp2Session, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path });
    let text = "";
    stream.on("data", (d: Buffer) => {
      text += d.toString();
    });
    stream.on("end", () => resolve(text));
    stream.on("error", reject);
  });
}

describe("header timeout", () => {
  it("closes connections that send nothing, half the HTTP/2 preface or half an HTTP/1.1 head", async () => {
    const { port } = await start({ headerTimeoutMs: 200 });
    const silent = await connect(port);
    const halfPreface = await connect(port);
    halfPreface.write("PRI * HTTP/2.0\r\n");
    const halfHead = await connect(port);
    halfHead.write("POST /runlater.v1.JobService/Enqueue HTTP/1.1\r\nHost: x\r\n");
    await Promise.all([closed(silent), closed(halfPreface), closed(halfHead)]);
    expect(seen).toEqual(["closed header_timeout", "closed header_timeout", "closed header_timeout"]);
    await noConnectionsLeft();
  });

  it("does not close a connection that sent its request head, however long the call", async () => {
    const { port } = await start({ headerTimeoutMs: 100 });
    const answer = h1Get(port, "/hold/1");
    await calls.holding(1);
    await new Promise((r) => setTimeout(r, 300)); // three header timeouts
    calls.releaseAll();
    expect(await answer).toBe("done");
    expect(seen).toEqual([]);
  });
});

describe("idle timeout", () => {
  it("closes an HTTP/2 connection with no open stream, and an idle HTTP/1.1 keep-alive one", async () => {
    const { port } = await start({ idleTimeoutMs: 200 });
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const sessionClosed = new Promise<void>((r) => session.on("close", () => r()));
    expect(await h2Get(session, "/quick")).toBe("done");
    const agent = new http.Agent({ keepAlive: true });
    expect(await h1Get(port, "/quick", agent)).toBe("done");
    await sessionClosed; // the server's GOAWAY
    await noConnectionsLeft();
    agent.destroy();
  });

  it("keeps connections whose calls outlast it: HTTP/2 streams and HTTP/1.1 requests", async () => {
    const { port } = await start({ idleTimeoutMs: 100 });
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const answers = [h2Get(session, "/hold/a"), h2Get(session, "/hold/b"), h1Get(port, "/hold/c")];
    await calls.holding(3);
    await new Promise((r) => setTimeout(r, 400)); // four idle timeouts with calls in progress
    calls.releaseAll();
    expect(await Promise.all(answers)).toEqual(["done", "done", "done"]);
    session.close();
  });

  it("does not let the keep-alive connections of finished calls pile up", async () => {
    const { port } = await start({ idleTimeoutMs: 300 });
    const sessions = Array.from({ length: 20 }, () => http2.connect(`http://127.0.0.1:${port}`));
    const agents = Array.from({ length: 20 }, () => new http.Agent({ keepAlive: true }));
    const sockets: net.Socket[] = [];
    await Promise.all([
      ...sessions.map((s) => h2Get(s, "/quick")),
      ...agents.map((a) => h1Get(port, "/quick", a, sockets)),
    ]);
    // Every client keeps its connection open: the server is the one that closes them.
    await Promise.all([
      ...sessions.map((s) => new Promise((r) => s.on("close", r))),
      ...sockets.map((socket) => closed(socket)),
    ]);
    await noConnectionsLeft();
  });
});

describe("connection cap", () => {
  it("closes the longest-idle connection to make room for a new one", async () => {
    const { port } = await start({ maxConnections: 3 });
    const agents = Array.from({ length: 3 }, () => new http.Agent({ keepAlive: true }));
    const sockets: net.Socket[] = [];
    for (const agent of agents) expect(await h1Get(port, "/quick", agent, sockets)).toBe("done"); // 3 idle keep-alive connections
    const oldestClosed = closed(sockets[0]!);
    expect(await h1Get(port, "/quick")).toBe("done");
    await oldestClosed;
    expect(seen).toEqual(["closed limit"]);
    for (const a of agents) a.destroy();
  });

  it("refuses a new connection when every open one is busy, and serves again once one is free", async () => {
    const { port } = await start({ maxConnections: 2 });
    const busy = [h1Get(port, "/hold/1"), h1Get(port, "/hold/2")];
    await calls.holding(2);
    await expect(h1Get(port, "/quick")).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(seen).toEqual(["refused"]);
    calls.releaseAll();
    expect(await Promise.all(busy)).toEqual(["done", "done"]);
    expect(await h1Get(port, "/quick")).toBe("done");
  });

  it("counts a connection still sending its request head as idle", async () => {
    const { port } = await start({ maxConnections: 2 });
    const busy = h1Get(port, "/hold/1");
    await calls.holding(1);
    const slow = await connect(port);
    slow.write("POST /x HTTP/1.1\r\n");
    const slowClosed = closed(slow);
    expect(await h1Get(port, "/quick")).toBe("done");
    await slowClosed;
    expect(seen).toEqual(["closed limit"]);
    calls.releaseAll();
    await busy;
  });
});
