/** Workflow instances as clients see them (wire/workflow.ts). */
import { describe, expect, it } from "vitest";
import { type JobRun, startInstance } from "../../src/domain/workflow-transitions.js";
import { instanceToProto } from "../../src/wire/workflow.js";

describe("instanceToProto", () => {
  it("says which runs lost their triggering events' results to the instance's size bound", () => {
    const def = {
      name: "w",
      version: 1,
      jobs: [
        {
          name: "a",
          queue: "q",
          inputs: [],
          onFailure: "abort" as const,
          body: new Uint8Array(),
          priority: 0,
          attemptsAllowed: 0,
        },
      ],
    };
    const { instance } = startInstance(def, { id: "i1", now: 1, keepOpen: false, external: [] }, () => "q.0.x");
    const run = instance.jobs.a!.runs[0]!;
    const ended: JobRun = { ...run, outcome: "succeeded", endedAt: 2 };
    instance.jobs.a!.runs = [
      { ...ended, run: 1, trimmed: true },
      { ...ended, run: 2 },
    ];
    const [job] = instanceToProto(instance, { withJobs: true }).jobs;
    expect(job!.runs.map((r) => [r.run, r.trimmed])).toEqual([
      [1, true],
      [2, false],
    ]);
  });
});
