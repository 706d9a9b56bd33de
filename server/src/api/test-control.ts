/**
 * runlater.testing.v1.TestControlService: lets a test harness (the conformance suite)
 * move the server's manual clock and wipe its queues (and schedules). Served for real only when the
 * server was started with --enable-test-control; otherwise every method is refused with
 * `unimplemented` and a message saying how to enable it.
 */
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { type ManualClock, settle } from "../domain/clock.js";
import type { Engine } from "../engine/engine.js";
import { TestControlService } from "../gen/runlater/testing/v1/control_pb.js";
import type { Maintenance } from "../maintenance/maintenance.js";
import { durationToMs } from "../wire/time.js";

export interface TestControlDeps {
  clock: ManualClock;
  engine: Engine;
  maintenance: Maintenance;
}

const DISABLED =
  "runlater.testing.v1.TestControlService is disabled on this server: it exists for test harnesses only " +
  "(it moves the clock and deletes every queue). Start the server with `runlater serve --enable-test-control` to use it.";

/** Registers the service: working when `deps` is given, refusing every call otherwise. */
export function registerTestControl(router: ConnectRouter, deps: TestControlDeps | undefined): ConnectRouter {
  if (!deps) {
    const refuse = (): never => {
      throw new ConnectError(DISABLED, Code.Unimplemented);
    };
    return router.service(TestControlService, { advanceClock: refuse, reset: refuse, now: refuse });
  }
  const { clock, engine, maintenance } = deps;
  return router.service(TestControlService, {
    async advanceClock(req) {
      const target = clock.now() + (durationToMs(req.duration, "duration") ?? 0);
      // Step from one claim expiry to the next, running each sweep to completion at the
      // exact expiry time, so that a networked store (whose sweep outlives the manual
      // clock's settle rounds) behaves exactly like the memory store. Timers in between
      // (run_after wake-ups, retention GC, lease renewal) fire inside clock.advance().
      for (let steps = 0, retries = 0; ; steps++) {
        const { nextExpiryAt } = await maintenance.sweepClaims();
        const now = clock.now();
        if (nextExpiryAt !== undefined && nextExpiryAt <= now && retries++ < 500) {
          // A due claim was skipped: the MySQL sweep uses SKIP LOCKED, and a sweep fired
          // by a timer moments ago may still hold a lock on that row. Try again shortly.
          await new Promise((resolve) => setTimeout(resolve, 2));
          continue;
        }
        retries = 0;
        if (now >= target || steps > 100_000) break;
        const next = Math.min(target, nextExpiryAt !== undefined && nextExpiryAt > now ? nextExpiryAt : target);
        await clock.advance(next - now);
      }
      // Likewise schedules and retention: whatever is due by now has fired on return, and
      // whatever has passed its retention is gone.
      await maintenance.fireSchedules();
      await maintenance.collectGarbage();
      await maintenance.maintainWorkflows();
      await settle();
      return { now: timestampFromMs(clock.now()) };
    },
    async reset() {
      // Running workflow instances first (their pending queue jobs go with them): one left
      // running would wait for ever on queues deleted below, and show in the next scenario.
      const cancelled = new Set<string>();
      for (let page = await runningInstances(engine); page.length > 0; page = await runningInstances(engine))
        for (const { id } of page) {
          if (cancelled.has(id)) throw new Error(`workflow instance ${id} is still running after its cancel`);
          cancelled.add(id);
          await engine.workflows.cancel(id);
        }
      const queues = await engine.listQueues();
      for (const q of queues) await engine.deleteQueue(q.queue.name);
      // Schedules too: one left from an earlier scenario would fire into the next.
      if (engine.schedules.kept()) {
        for (let page = await engine.schedules.list({ limit: 1000 }); page.length > 0; ) {
          for (const s of page) await engine.schedules.delete(s.name);
          page = await engine.schedules.list({ limit: 1000 });
        }
      }
      await settle();
      return { deletedQueues: queues.length };
    },
    now() {
      return { now: timestampFromMs(clock.now()) };
    },
  });
}

function runningInstances(engine: Engine) {
  return engine.workflows.listInstances({ state: "running", limit: 1000 });
}
