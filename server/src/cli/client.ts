/**
 * How client commands reach a server: the global --url (or RUNLATER_URL), Connect clients
 * over HTTP/1.1, and the per-command context (clients, io, --json).
 *
 * Deliberately built on @connectrpc/connect directly rather than the SDK's hand-written
 * layer, so the CLI depends only on the generated contract.
 */
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { readTls } from "@runlater/sdk";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { TokenService } from "@runlater/sdk/gen/token_service_pb.js";
import { WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { type Command, InvalidArgumentError } from "commander";
import { usageError } from "./exits.js";
import type { CliIo } from "./io.js";

export const DEFAULT_URL = "http://127.0.0.1:8080";

/** The global --url option, declared once on the program and visible to every command. */
export function addUrlOption(program: Command): Command {
  return program.option("--url <url>", `server to talk to (default: $RUNLATER_URL, else ${DEFAULT_URL})`, checkUrl);
}

function checkUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`"${value}" is not a URL: use e.g. ${DEFAULT_URL}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidArgumentError(`"${value}" must start with http:// or https://`);
  return value;
}

/** --url wins over RUNLATER_URL, which wins over the default. */
export function resolveUrl(flag: string | undefined, env: CliIo["env"]): string {
  if (flag) return flag;
  const fromEnv = env.RUNLATER_URL;
  return fromEnv ? checkUrl(fromEnv) : DEFAULT_URL;
}

export interface Clients {
  jobs: Client<typeof JobService>;
  queues: Client<typeof QueueService>;
  tokens: Client<typeof TokenService>;
  workflows: Client<typeof WorkflowService>;
  schedules: Client<typeof ScheduleService>;
}

/**
 * Clients of the server at `baseUrl`; with `token`, every call carries it (RUNLATER_TOKEN).
 * An https:// URL trusts the CA and presents the client certificate the environment names
 * (RUNLATER_TLS_CA, RUNLATER_TLS_CERT, RUNLATER_TLS_KEY), as every SDK does.
 */
export function createClients(baseUrl: string, token?: string, env: CliIo["env"] = {}): Clients {
  const withToken: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    interceptors: token === undefined ? [] : [withToken],
    nodeOptions: baseUrl.startsWith("https:") ? readTls({}, env) : {},
  });
  return {
    jobs: createClient(JobService, transport),
    queues: createClient(QueueService, transport),
    tokens: createClient(TokenService, transport),
    workflows: createClient(WorkflowService, transport),
    schedules: createClient(ScheduleService, transport),
  };
}

/** What a client command's action needs. */
export interface ClientContext {
  io: CliIo;
  /** The server's URL: --url, else RUNLATER_URL, else the default. */
  url: string;
  clients: Clients;
  /** --json: print proto3 JSON instead of tables. */
  json: boolean;
}

export function clientContext(io: CliIo, cmd: Command): ClientContext {
  const opts = cmd.optsWithGlobals<{ url?: string; json?: boolean }>();
  let url: string;
  try {
    url = resolveUrl(opts.url, io.env);
  } catch (err) {
    // Only RUNLATER_URL can fail here (--url was checked while parsing); say so.
    usageError(cmd, `RUNLATER_URL: ${(err as Error).message}`);
  }
  const token = io.env.RUNLATER_TOKEN?.trim() || undefined;
  return { io, url, clients: createClients(url, token, io.env), json: opts.json === true };
}

/** Every client command takes --json. */
export function addJsonOption(cmd: Command): Command {
  return cmd.option("--json", "print the response as proto3 JSON (for scripts) instead of text");
}
