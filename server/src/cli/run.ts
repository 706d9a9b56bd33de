/**
 * Runs a parsed program and turns every way it can end into an exit code:
 * 0 success; 1 the call failed (server error, unreachable server, not found);
 * 2 bad usage (commander's parse errors and our own flag checks).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { type Command, CommanderError } from "commander";
import { resolveUrl } from "./client.js";
import { ExitStatus } from "./exits.js";
import type { CliIo } from "./io.js";

/**
 * `from: "user"` takes argv without the node and script entries (tests); "node" takes
 * process.argv as it is.
 */
export async function runCli(
  program: Command,
  argv: string[],
  io: CliIo,
  from: "node" | "user" = "node",
): Promise<number> {
  try {
    await program.parseAsync(argv, { from });
    return 0;
  } catch (err) {
    if (err instanceof ExitStatus) return err.code;
    // commander has already printed its message; help and --version end with exit code 0.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    io.err(`${describeError(err, () => urlOf(program, io))}\n`);
    return 1;
  }
}

function urlOf(program: Command, io: CliIo): string {
  try {
    return resolveUrl(program.opts<{ url?: string }>().url, io.env);
  } catch {
    return "the server";
  }
}

/** One or two lines a person can act on; never a stack trace. */
export function describeError(err: unknown, url: () => string): string {
  if (err instanceof ConnectError) {
    const network = networkCode(err);
    if (network === "ECONNREFUSED") {
      return `error: cannot connect to ${url()}: connection refused\nhint: is the server running? start it with: runlater serve (or point --url / RUNLATER_URL at it)`;
    }
    if (network === "ENOTFOUND" || network === "EAI_AGAIN")
      return `error: cannot resolve the host of ${url()} (${network})`;
    if (network !== undefined) return `error: cannot reach ${url()}: ${err.rawMessage}`;
    return `error: ${codeToString(err.code)}: ${err.rawMessage}${err.code === Code.Unimplemented ? `\nhint: is ${url()} a runlater server?` : ""}`;
  }
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** The Node network error code (ECONNREFUSED, …) somewhere in the error's cause chain. */
function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}
