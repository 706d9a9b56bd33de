/** The job filter flags ScanJobs, CountJobs and DeleteJobs share, and their request fields. */
import type { JobState } from "@runlater/sdk/gen/job_pb.js";
import { type Command, Option } from "commander";
import { parseState, positiveInt, stateNames } from "./parse.js";

export interface FilterFlags {
  state?: JobState;
  priority?: number;
  future?: boolean;
  due?: boolean;
  bodyRegex?: string;
}

export function addStateFlag(cmd: Command, required = false): Command {
  const description = `only jobs in this state: ${stateNames.join(", ")}`;
  return required
    ? cmd.requiredOption("--state <state>", `${description} (required)`, parseState)
    : cmd.option("--state <state>", `${description} (default: every state)`, parseState);
}

export function addPriorityFlag(cmd: Command): Command {
  return cmd.option("--priority <n>", "only jobs of this priority (default: every priority)", positiveInt);
}

export function addBodyRegexFlag(cmd: Command): Command {
  return cmd.option(
    "--body-regex <regex>",
    "only jobs whose body, read as UTF-8, matches this JavaScript regular expression",
  );
}

/** --future and --due split jobs by whether run_after has come. */
export function addTimingFlags(cmd: Command): Command {
  return cmd
    .addOption(new Option("--future", "only jobs whose run_after is still in the future").conflicts("due"))
    .addOption(new Option("--due", "only jobs whose run_after has come"));
}

/** Every filter flag, for scan and count. */
export function addFilterFlags(cmd: Command): Command {
  return addBodyRegexFlag(addTimingFlags(addPriorityFlag(addStateFlag(cmd))));
}

/** The filter fields of ScanJobsRequest / CountJobsRequest. */
export function filterFields(f: FilterFlags): {
  state?: JobState;
  priority: number;
  future?: boolean;
  bodyRegex: string;
} {
  return {
    state: f.state,
    priority: f.priority ?? 0,
    future: f.future ? true : f.due ? false : undefined,
    bodyRegex: f.bodyRegex ?? "",
  };
}
