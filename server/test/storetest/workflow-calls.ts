/**
 * A store's many-calls of workflows (instanceApplyMany, instanceInsertMany) where it has
 * them, else the single calls one by one, as the engine calls them: what the suite and the
 * differential check ask of every store alike.
 */
import type { InstanceInsert, InstanceStep, InstanceStepResult, WorkflowStore } from "../../src/store/store.js";

/** instanceApplyMany where the store has it; else instanceApply step by step, as the engine does. */
export function applyMany(ws: WorkflowStore, steps: InstanceStep[]): Promise<Array<InstanceStepResult | Error>> {
  return ws.instanceApplyMany ? ws.instanceApplyMany(steps) : oneByOne(steps, (s) => ws.instanceApply(s));
}

/** instanceInsertMany where the store has it; else instanceInsert one by one. */
export function insertMany(ws: WorkflowStore, inserts: InstanceInsert[]): Promise<Array<boolean | Error>> {
  return ws.instanceInsertMany ? ws.instanceInsertMany(inserts) : oneByOne(inserts, (i) => ws.instanceInsert(i));
}

async function oneByOne<In, Out>(inputs: In[], call: (input: In) => Promise<Out>): Promise<Array<Out | Error>> {
  const answers: Array<Out | Error> = [];
  for (const input of inputs) answers.push(await call(input).catch((err: Error) => err));
  return answers;
}
