/** How store failures reach callers: retryable `unavailable`, or `internal` without internals. */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { afterEach, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

let server: RunningServer | undefined;
afterEach(() => server?.stop());

async function enqueueWith(failure: Error): Promise<ConnectError> {
  const store = new MemoryStore();
  store.jobInsertMany = async () => {
    throw failure;
  };
  server = await startServer({ store, port: 0 });
  const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
  await createClient(QueueService, transport).createQueue({ name: "q" });
  return createClient(JobService, transport)
    .enqueue({ jobs: [{ queue: "q" }] })
    .then(
      () => {
        throw new Error("enqueue succeeded");
      },
      (e: unknown) => ConnectError.from(e),
    );
}

it("answers unavailable (retryable) when the store cannot be reached", async () => {
  const err = await enqueueWith(
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }),
  );
  expect(err.code).toBe(Code.Unavailable);
  expect(err.rawMessage).toMatch(/store is unreachable .*ECONNREFUSED.*retry later/);
});

it("answers internal for an unexpected failure, without leaking its message", async () => {
  const err = await enqueueWith(new Error("secret detail of a bug"));
  expect(err.code).toBe(Code.Internal);
  expect(err.rawMessage).not.toMatch(/secret/);
});
