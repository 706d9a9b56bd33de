/**
 * Workflow state as stores keep it (domain/workflow-codec.ts): byte arrays survive the
 * JSON text at any depth, and nothing else is taken for one.
 */
import { describe, expect, it } from "vitest";
import { decodeInstance, decodeJobContext, encodeInstance, encodeJobContext } from "../../src/domain/workflow-codec.js";
import type { WorkflowInstance } from "../../src/domain/workflow-transitions.js";

const event = (id: string, result: Uint8Array) => ({ id, postedAt: 5, customStatus: "$b64 is a key name", result });

describe("the workflow codec", () => {
  it("gives back an instance with byte arrays where it had them, at every depth", () => {
    const instance = {
      id: "wf_1",
      workflow: "w",
      version: 1,
      state: "running",
      keepOpen: false,
      rev: 3,
      createdAt: 1,
      endedAt: 0,
      failedRuns: 0,
      eventSeq: 2,
      jobs: {
        b: {
          state: "queued",
          inputs: { "job:a": [event("wf_1:2", new Uint8Array([0, 255, 7]))] },
          runs: [
            {
              run: 1,
              queueJobId: "q.0.x",
              triggeredBy: [{ input: "job:a", event: event("wf_1:1", new Uint8Array()) }],
              outcome: "succeeded",
              customStatus: "",
              result: new Uint8Array([42]),
              queuedAt: 1,
              endedAt: 2,
            },
          ],
          runCount: 1,
          droppedEvents: 0,
        },
      },
    } satisfies WorkflowInstance;
    const back = decodeInstance(encodeInstance(instance));
    expect(back).toEqual(instance);
    expect(back.jobs.b!.inputs["job:a"]![0]!.result).toBeInstanceOf(Uint8Array);
    expect(back.jobs.b!.runs[0]!.triggeredBy[0]!.event.result).toBeInstanceOf(Uint8Array);
    expect(back.jobs.b!.runs[0]!.result).toEqual(new Uint8Array([42]));
  });

  it("leaves strings that mention the byte marker alone, and text without byte arrays as parsed", () => {
    const ctx = { workflow: "$b64", version: 1, instanceId: "i", job: "j", run: 1, triggeredBy: [] };
    expect(decodeJobContext(encodeJobContext(ctx))).toEqual(ctx);
    const withBytes = {
      ...ctx,
      triggeredBy: [{ input: "external:x", event: event("i:1", new Uint8Array([1, 2])) }],
    };
    expect(decodeJobContext(encodeJobContext(withBytes))).toEqual(withBytes);
  });
});
