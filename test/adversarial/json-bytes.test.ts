/**
 * A bytes field in a JSON request (a job body, a checkpoint's new body) is base64,
 * standard or URL-safe, padded or not; anything else is refused with invalid_argument that
 * names the field and shows the base64 of what was sent, and nothing is stored. Before,
 * `"body": "hello world"` was stored as the bytes of "helloworlQ==". API layer: the memory
 * store stands for all.
 */
import { type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type Target } from "./harness.js";

describe("bytes fields in JSON are strict base64", () => {
  let t: Target;
  beforeAll(async () => {
    t = await serve("memory");
    await t.rpc("QueueService/CreateQueue", { name: "q" });
  });
  afterAll(() => t.stop());

  const stored = () => t.calls.get("jobInsertMany") ?? 0;

  it("refuses a raw-text body, says bodies are base64 and shows the encoding, and stores nothing", async () => {
    const before = stored();
    const answer = await t.rpc("JobService/Enqueue", { jobs: [{ queue: "q", body: "hello world" }] });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("invalid_argument");
    expect(answer.body.message).toMatch(
      /^jobs\[0\]\.body is not base64: in JSON, bytes fields such as job bodies are base64/,
    );
    expect(answer.body.message).toContain('the text "hello world" is "aGVsbG8gd29ybGQ="');
    expect(answer.body.details).toMatchObject([{ debug: { field: "jobs[0].body" } }]);
    expect(stored()).toBe(before);
  });

  it.each([
    ["a space inside", "aGVs bG8="],
    ["a newline inside (JSON escape)", "aGVs\nbG8="],
    ["a trailing tab", "aGk=\t"],
    ["padding in the middle", "aGk=aGk="],
    ["partial padding", "aGk=="],
    ["one character too many", "aGVsbG8gd"],
    ["a character outside both alphabets", "aGk*"],
    ["non-ASCII", "\u00e9t\u00e9"],
  ])("refuses %s", async (_what, body) => {
    const before = stored();
    const answer = await t.rpc("JobService/Enqueue", {
      jobs: [
        { queue: "q", body: "aGk=" },
        { queue: "q", body },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/^jobs\[1\]\.body is not base64/);
    expect(stored()).toBe(before);
  });

  it("takes standard and URL-safe base64, padded or not, and stores exactly those bytes", async () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xbe, 0x68, 0x69]);
    const forms = [
      bytes.toString("base64"), // +/8=…
      bytes.toString("base64").replace(/=+$/, ""),
      bytes.toString("base64url"),
      `${bytes.toString("base64url")}=`,
      "",
    ];
    const answer = await t.rpc("JobService/Enqueue", { jobs: forms.map((body) => ({ queue: "q", body })) });
    expect(answer.status).toBe(200);
    const found = await t.rpc("JobService/GetJobs", { jobIds: answer.body.jobIds, includeBody: true });
    const bodies = (found.body.jobs as Array<{ body?: string }>).map((j) => Buffer.from(j.body ?? "", "base64"));
    expect(bodies.map((b) => b.toString("hex"))).toEqual([...Array(4).fill(bytes.toString("hex")), ""]);
  });

  it("checks a checkpoint's new body, under either of its JSON names", async () => {
    await t.rpc("JobService/Enqueue", { jobs: [{ queue: "q", body: "aGk=" }] });
    for (const key of ["newBody", "new_body"]) {
      const answer = await t.rpc("WorkerService/Checkpoint", {
        queue: "q",
        checkpoints: [{ jobId: "q.0.aaaaaaaaaaaa", claimToken: "t", [key]: "not base64!" }],
      });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^checkpoints\[0\]\.new_body is not base64/);
    }
  });

  it("checks every bytes field of every request, found from the schemas", async () => {
    const found: string[] = [];
    const refused: string[] = [];
    for (const service of [JobService, QueueService, WorkerService, WorkflowService]) {
      // Streams take JSON as a framed body, not a plain POST: unary methods here.
      for (const method of service.methods.filter((m) => m.methodKind === "unary")) {
        for (const path of bytesPaths(method.input)) {
          found.push(`${method.name} ${fieldName(path)}`);
          const answer = await t.rpc(`${service.name}/${method.name}`, requestWith(path, "hello world"));
          if (answer.status === 400 && String(answer.body.message).startsWith(`${fieldName(path)} is not base64`))
            refused.push(`${method.name} ${fieldName(path)}`);
        }
      }
    }
    expect(found).toEqual(
      expect.arrayContaining([
        "Enqueue jobs[0].body",
        "Checkpoint checkpoints[0].new_body",
        "Ack succeeded[0].result",
        "ApplyWorkflow workflow.jobs[0].body",
        "PostEvent event.result",
      ]),
    );
    expect(refused).toEqual(found);
  });
});

interface Step {
  name: string;
  list: boolean;
}

/** The paths (proto names) from `desc` to each bytes field, through messages and lists. */
function bytesPaths(desc: DescMessage, depth = 0): Step[][] {
  if (depth > 5) return [];
  return desc.fields.flatMap((f): Step[][] => {
    const list = f.fieldKind === "list";
    const kind = f.fieldKind === "list" ? f.listKind : f.fieldKind;
    if (kind === "scalar" && f.scalar === ScalarType.BYTES) return [[{ name: f.name, list }]];
    if (kind !== "message" || !f.message) return [];
    return bytesPaths(f.message, depth + 1).map((p) => [{ name: f.name, list }, ...p]);
  });
}

/** The field name the server reports for `path`: the first element of each list. */
function fieldName(path: Step[]): string {
  return path.map((s, i) => (s.list && i < path.length - 1 ? `${s.name}[0]` : s.name)).join(".");
}

/** A JSON request (queue "q") with `value` at `path`, each list holding one element. */
function requestWith(path: Step[], value: string): unknown {
  const [head, ...rest] = path;
  const inner = rest.length === 0 ? value : requestWith(rest, value);
  return { queue: "q", [head!.name]: head!.list ? [inner] : inner };
}
