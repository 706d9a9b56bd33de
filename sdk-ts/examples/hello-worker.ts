/**
 * hello-worker: create a queue, enqueue three jobs, work them off, stop.
 *
 *   npx runlater serve                     # in one terminal (or set RUNLATER_URL)
 *   npx tsx sdk-ts/examples/hello-worker.ts
 */
import { createRunlaterClient, Worker } from "@runlater/sdk";

const client = createRunlaterClient(process.env.RUNLATER_URL ?? "http://127.0.0.1:8080");
await client.createQueue("hello");

const ids = new Set(
  await client.enqueueMany([
    { queue: "hello", body: { name: "Ada" } },
    { queue: "hello", body: { name: "Grace" } },
    { queue: "hello", body: { name: "Linus" } },
  ]),
);

const worker = new Worker({
  client,
  queue: "hello",
  concurrency: 2,
  handler: async (job) => {
    const { name } = job.json<{ name: string }>();
    console.log(`job ${job.id} (attempt ${job.attempt}): hello, ${name}!`);
    ids.delete(job.id);
    // Not awaited: stop() waits for running handlers, this one included.
    if (ids.size === 0) void worker.stop();
    return `greeted ${name}`; // becomes the job's custom status
  },
});

await worker.run(); // resolves once stop() has finished and every ack is delivered
console.log("all jobs done");
