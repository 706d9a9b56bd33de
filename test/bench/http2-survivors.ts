/**
 * What a bare node:http2 server keeps through young-generation collections (docs/benchmarks.md,
 * "The young generation's survivors"): no runlater code, one POST of 220 bytes answered
 * with 40, `--calls` of them from one client with `--in-flight` in flight, the server
 * under `--trace-gc-nvp`. Prints the bytes promoted per scavenge for each way of treating
 * a stream once it has closed:
 *   none      nothing (Node as it is);
 *   unlisten  its listeners removed;
 *   strip     its listeners removed, then every own property overwritten (2 ms later: Node's
 *             own code still reads them until then). An experiment, not a fix;
 *   http1     for comparison, the same calls over HTTP/1.1 keep-alive (node:http), one
 *             connection per call in flight.
 *
 *   npx tsx test/bench/http2-survivors.ts [--calls 40000] [--in-flight 4] [--modes none,unlisten,strip,http1]
 *
 * Node and its flags are this process's (`process.execPath`); never run in CI.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { scavenges } from "./gc-trace.js";

const { values: args } = parseArgs({
  options: {
    calls: { type: "string", default: "40000" },
    "in-flight": { type: "string", default: "4" },
    modes: { type: "string", default: "none,unlisten,strip,http1" },
    serve: { type: "string" },
  },
});

if (args.serve !== undefined) serve(args.serve);
else await measure();

/** The server side, in a process of its own (so that its collections are its own). */
function serve(mode: string): void {
  if (mode === "http1") {
    const server1 = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200);
        res.end(Buffer.alloc(40));
      });
    });
    server1.listen(0, "127.0.0.1", () => console.log(`port ${(server1.address() as AddressInfo).port}`));
    process.on("SIGTERM", () => process.exit(0));
    return;
  }
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("data", () => {});
    stream.on("end", () => {
      stream.respond({ ":status": 200 });
      stream.end(Buffer.alloc(40));
    });
    if (mode === "none") return;
    stream.on("close", () =>
      setImmediate(() => {
        stream.removeAllListeners();
        if (mode !== "strip") return;
        const own = stream as unknown as Record<PropertyKey, unknown>;
        setTimeout(() => {
          for (const key of Reflect.ownKeys(own)) own[key] = undefined;
        }, 2);
      }),
    );
  });
  server.listen(0, "127.0.0.1", () => console.log(`port ${(server.address() as AddressInfo).port}`));
  process.on("SIGTERM", () => process.exit(0));
}

async function measure(): Promise<void> {
  const calls = Number(args.calls);
  const inFlight = Number(args["in-flight"]);
  console.log(`node ${process.version}: ${calls} calls, ${inFlight} in flight`);
  for (const mode of args.modes!.split(",")) {
    const child = spawn(
      process.execPath,
      ["--trace-gc-nvp", ...process.execArgv, fileURLToPath(import.meta.url), "--serve", mode],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const port = await new Promise<string>((resolve) => {
      const look = () => {
        const found = /^port (\d+)$/m.exec(out);
        if (found) resolve(found[1]!);
        else setTimeout(look, 20);
      };
      look();
    });
    const started = performance.now();
    await (mode === "http1" ? callHttp1 : call)(`http://127.0.0.1:${port}`, calls, inFlight);
    const seconds = (performance.now() - started) / 1000;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
    const promoted = scavenges(out).map((s) => s.promoted);
    const sum = promoted.reduce((a, b) => a + b, 0);
    console.log(
      `${mode.padEnd(8)} ${Math.round(calls / seconds)} calls/s; ${promoted.length} scavenges, ` +
        `${Math.round(sum / Math.max(promoted.length, 1) / 1024)} KB promoted per scavenge, ${Math.round(sum / calls)} bytes per call`,
    );
  }
}

/** `calls` POSTs, `inFlight` at a time, on one HTTP/2 session. */
async function call(url: string, calls: number, inFlight: number): Promise<void> {
  const session = http2.connect(url);
  await inTurn(
    calls,
    inFlight,
    () =>
      new Promise<void>((resolve, reject) => {
        const req = session.request({ ":method": "POST", ":path": "/" });
        req.on("data", () => {});
        req.on("end", resolve);
        req.on("error", reject);
        req.end(Buffer.alloc(220));
      }),
  );
  session.close();
}

/** The same over HTTP/1.1 keep-alive: `inFlight` connections. */
async function callHttp1(url: string, calls: number, inFlight: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  await inTurn(
    calls,
    inFlight,
    () =>
      new Promise<void>((resolve, reject) => {
        const req = http.request(url, { method: "POST", agent }, (res) => {
          res.resume();
          res.on("end", resolve);
        });
        req.on("error", reject);
        req.end(Buffer.alloc(220));
      }),
  );
  agent.destroy();
}

/** `one()` `calls` times, `inFlight` at a time. */
async function inTurn(calls: number, inFlight: number, one: () => Promise<void>): Promise<void> {
  let left = calls;
  const loop = async () => {
    while (left-- > 0) await one();
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
}
