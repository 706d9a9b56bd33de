/**
 * The fuzz test's raw clients: one call on the wire per protocol the server speaks, made
 * byte by byte (no SDK, no Connect client), so a test can send any body and any framing,
 * and read back the code the server answered with exactly as a client would see it.
 */
import * as http from "node:http";
import type * as http2 from "node:http2";

export type Protocol = "connect" | "connect-stream" | "grpc" | "grpc-web";

/** What a call came back with: the HTTP status and the RPC code ("ok", "invalid_argument"…). */
export interface Answer {
  status: number;
  code: string;
  message: string;
}

export interface Call {
  /** "runlater.v1.JobService/Enqueue" */
  path: string;
  protocol: Protocol;
  binary: boolean;
  body: Uint8Array;
  headers?: Record<string, string>;
  /** Over HTTP/1.1 rather than HTTP/2 (Connect unary and gRPC-Web only: the others need HTTP/2). */
  http1?: boolean;
}

/** One message in the enveloped framing of gRPC, gRPC-Web and Connect streaming. */
export function envelope(data: Uint8Array, flags = 0, declaredLength = data.byteLength): Uint8Array {
  const out = new Uint8Array(5 + data.byteLength);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, declaredLength >>> 0);
  out.set(data, 5);
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** gRPC status numbers as Connect spells them. */
const grpcCodes = [
  "ok",
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

function contentType(call: Call): string {
  const format = call.binary ? "proto" : "json";
  switch (call.protocol) {
    case "connect":
      return `application/${format}`;
    case "connect-stream":
      return `application/connect+${format}`;
    case "grpc":
      return `application/grpc+${format}`;
    case "grpc-web":
      return `application/grpc-web+${format}`;
  }
}

/**
 * Makes the call over HTTP/2 (cleartext, prior knowledge) on a session of the caller's:
 * gRPC and Connect streaming need HTTP/2 for client streams; unary Connect and gRPC-Web
 * work on it as well as on HTTP/1.1.
 */
export function call(session: http2.ClientHttp2Session, c: Call): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": `/${c.path}`,
      "content-type": contentType(c),
      ...(c.protocol === "grpc" ? { te: "trailers" } : {}),
      ...c.headers,
    });
    let status = 0;
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h;
    });
    stream.on("trailers", (t) => {
      trailers = t;
    });
    stream.on("data", (d: Buffer) => chunks.push(d));
    // Every call carries a deadline of its own; one that outlives it by far has hung.
    stream.setTimeout(5_000, () => stream.destroy(new Error("no answer within 5 s")));
    stream.on("error", reject);
    stream.on("close", () => {
      try {
        resolve(readAnswer(c.protocol, status, headers, trailers, Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    stream.end(c.body);
  });
}

/** Makes the call over a new HTTP/1.1 connection to `port`. */
export function callHttp1(port: number, c: Call): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: "127.0.0.1",
        method: "POST",
        path: `/${c.path}`,
        headers: { "content-type": contentType(c), "content-length": c.body.byteLength, ...c.headers },
        agent: false,
        timeout: 5_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => {
          try {
            resolve(readAnswer(c.protocol, res.statusCode ?? 0, res.headers, {}, Buffer.concat(chunks)));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("no answer within 5 s")));
    req.on("error", reject);
    req.end(c.body);
  });
}

function readAnswer(
  protocol: Protocol,
  status: number,
  headers: http.IncomingHttpHeaders,
  trailers: http.IncomingHttpHeaders,
  body: Buffer,
): Answer {
  const text = (v: unknown) => (typeof v === "string" ? decodeURIComponent(v) : "");
  if (status !== 200 && protocol !== "connect") {
    // Not the protocol's answer at all (415, 505 …): HTTP alone says what happened.
    return { status, code: `http_${status}`, message: body.toString() };
  }
  switch (protocol) {
    case "connect": {
      if (status === 200) return { status, code: "ok", message: "" };
      const parsed = tryJson(body.toString()) as { code?: string; message?: string } | undefined;
      return { status, code: parsed?.code ?? `http_${status}`, message: parsed?.message ?? "" };
    }
    case "grpc": {
      const s = trailers["grpc-status"] ?? headers["grpc-status"];
      const code = grpcCodes[Number(s)] ?? `grpc_${String(s)}`;
      return { status, code, message: text(trailers["grpc-message"] ?? headers["grpc-message"]) };
    }
    case "grpc-web": {
      if (headers["grpc-status"] !== undefined)
        return {
          status,
          code: grpcCodes[Number(headers["grpc-status"])] ?? "?",
          message: text(headers["grpc-message"]),
        };
      const trailer = lastEnvelope(body, 0x80);
      const fields = new Map(
        (trailer?.toString() ?? "")
          .split("\r\n")
          .filter((l) => l.includes(":"))
          .map((l) => [l.slice(0, l.indexOf(":")).trim().toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
      );
      return {
        status,
        code: grpcCodes[Number(fields.get("grpc-status"))] ?? "no_trailer",
        message: text(fields.get("grpc-message")),
      };
    }
    case "connect-stream": {
      const end = lastEnvelope(body, 0x02);
      const parsed = tryJson(end?.toString() ?? "") as { error?: { code?: string; message?: string } } | undefined;
      if (!parsed) return { status, code: "no_end_stream", message: "" };
      return { status, code: parsed.error?.code ?? "ok", message: parsed.error?.message ?? "" };
    }
  }
}

/** The data of the last envelope in `body` whose flags include `flag`. */
function lastEnvelope(body: Buffer, flag: number): Buffer | undefined {
  let found: Buffer | undefined;
  for (let at = 0; at + 5 <= body.length; ) {
    const length = body.readUInt32BE(at + 1);
    if ((body[at]! & flag) === flag) found = body.subarray(at + 5, at + 5 + length);
    at += 5 + length;
  }
  return found;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
