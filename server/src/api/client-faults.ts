/**
 * Requests connect-es refuses by itself, before any handler or interceptor runs, with the
 * wrong code: a body that is not a protobuf message of the method's input type ("parse
 * binary: illegal tag …"), an envelope flagged compressed without a declared encoding, a
 * compressed body that does not decompress, all `internal`; a gRPC unary call with no
 * message or with two, `unimplemented`. Each is the client's mistake: `invalid_argument`,
 * with a message saying what was wrong.
 *
 * Where: connect-es parses unary requests before the interceptors, so errorInterceptor never
 * sees these. What every protocol's handler does see (Connect unary and streaming, gRPC,
 * gRPC-Web) is the call's context: it aborts the context with the error, then writes that
 * same error out. A request gate (which runs first, on every call) listens on that signal
 * and corrects the error before it is written. test/adversarial/fuzz.test.ts and
 * server/test/api/client-faults.test.ts check each protocol, so a connect-es upgrade that
 * moves this is caught.
 */
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";

interface Fault {
  code: Code;
  /** What connect-es says (rawMessage), as it says it. */
  match: RegExp;
  explain(context: Pick<HandlerContext, "method">, raw: string): string;
}

const faults: Fault[] = [
  {
    code: Code.Internal,
    match: /^parse binary: /,
    explain: (c, raw) =>
      `the request is not a ${c.method.input.typeName} in the protobuf binary format ` +
      `(${raw.replace(/^parse binary: /, "")}); the body of a call with content type application/proto, ` +
      "application/grpc or application/grpc-web must be one, encoded by a protobuf library",
  },
  {
    code: Code.Internal,
    match: /^received compressed envelope, but do not know how to decompress$/,
    explain: () =>
      "a message is flagged compressed but the call declares no encoding: send grpc-encoding " +
      "(gRPC) or connect-content-encoding (Connect streaming) with it, or clear the flag",
  },
  {
    code: Code.Internal,
    match: /^decompression failed$/,
    explain: () => "the request body does not decompress with the encoding the call declares (gzip or br)",
  },
  {
    code: Code.Unimplemented,
    match: /^protocol error: (missing input message|received extra input message) for unary method$/,
    explain: (c, raw) =>
      `${raw.includes("missing") ? "the call carries no message" : "the call carries more than one message"}: ` +
      `${c.method.name} takes exactly one ${c.method.input.typeName}`,
  },
];

/** The error a client should get instead of `err`, or undefined when `err` is right as it is. */
export function asClientFault(err: ConnectError, context: Pick<HandlerContext, "method">): ConnectError | undefined {
  const fault = faults.find((f) => f.code === err.code && f.match.test(err.rawMessage));
  if (!fault) return undefined;
  return new ConnectError(fault.explain(context, err.rawMessage), Code.InvalidArgument, undefined, undefined, err);
}

/**
 * An error message as gRPC can carry it: gRPC and gRPC-Web percent-encode it into a trailer
 * with encodeURIComponent, which throws on a lone surrogate (half of an emoji a message
 * quoted from a request and cut short), and the call then never ends. U+FFFD instead.
 */
export function wellFormed(message: string): string {
  return message.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

/**
 * Request gate: when the call ends with an error, correct that error object in place (the
 * handler writes out the very object it aborted with, not a copy): the code of the faults
 * above, and a message gRPC can encode.
 */
export function clientFaultGate(context: HandlerContext): void {
  context.signal.addEventListener(
    "abort",
    () => {
      const err: unknown = context.signal.reason;
      if (!(err instanceof ConnectError)) return;
      const fixed = asClientFault(err, context) ?? err;
      const rawMessage = wellFormed(fixed.rawMessage);
      if (fixed === err && rawMessage === err.rawMessage) return;
      const writable = err as { code: Code; rawMessage: string; message: string };
      writable.code = fixed.code;
      writable.rawMessage = rawMessage;
      writable.message = new ConnectError(rawMessage, fixed.code).message;
    },
    { once: true },
  );
}
