--[[
  instanceApply and instanceApplyMany (the instances' shard, docs/workflows.md): steps of
  instances, in order, each all or nothing on its own, exactly as one call per step would
  apply them (a step that fails its checks writes nothing and the next goes on). Per step
  the checks come first: the ACK's job must hold its claim token and be a workflow job's
  run; the stored instance must be at the revision the step was decided on; every new
  job's partition must exist. Then, in memory's order (memory/workflows.ts): the new queue
  jobs are inserted, the ACK's transition applied (transitions.lua, with apply(): a job
  that ends leaves its ordering key's sequence), the instance written, and the jobs to
  cancel deleted if they are pending, waiting or buffered (cancel.lua).
  KEYS[1]  <prefix>:{shard}:checks
  ARGV     prefix, then per step (STEP_FIELDS, then its jobs):
           now, instance id, rev (the stored revision expected; 0: no instance),
           the new instance: rev ("" for none: with rev 0, the ACK alone), state, workflow,
           created_at, ended_at, data;
           the ACK: kind ("" none, "c" complete, "f" fail), job id, claim token, custom
           status, retry delay ("" for the planned one), no retry ("1"/"0");
           the ids to cancel, joined by spaces; how many jobs to insert;
           then per job to insert: id, stored prefix, body (insert.lua)
  Returns  one reply per step, in order: "<applied>" or "<applied> <ack>": applied "1" or
           "0"; the ACK's outcome as job_fail_many.lua answers it ("a", "a:<pendingAt>",
           "a+<promotedAt>", "s", "n": "n" also for a job that is no workflow job's run); no
           ACK outcome for a conflict of revisions; "E <queue>" when a new job's partition
           is missing (that step wrote nothing).
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
--@include insert
--@include cancel
--@include workflows
local STEP_FIELDS = 17

-- The step whose fields start at ARGV[at] and whose jobs are ARGV[from..to].
local function applyStep(at, from, to)
  -- What earlier steps left to write lands first: this step reads what they wrote.
  flushIndexes()
  local now, id, rev = tonumber(ARGV[at]), ARGV[at + 1], tonumber(ARGV[at + 2])
  local kind, ackId, token = ARGV[at + 9], ARGV[at + 10], ARGV[at + 11]
  local ackTag, ackJob
  if kind ~= "" then
    ackTag = tagOfId(ackId)
    ackJob = ackTag and loadJob(ackTag, ackId)
    local outcome = checkClaim(ackJob, token)
    if outcome == "a" and not ackJob.wf then outcome = "n" end
    if outcome ~= "a" then return "0 " .. outcome end
  end
  if instanceRev(id) ~= rev then return "0" end
  local parts, tags = planInsert(from, to)
  if not parts then return "E " .. tags end
  insertPlanned(from, parts, tags, to)
  -- The ACK may promote a job just inserted behind it (one ordering key): its queued index
  -- writes must land before the promotion's.
  flushIndexes()
  local ack = ""
  if kind ~= "" then
    local patch
    if kind == "c" then
      patch = succeed(ackJob, ARGV[at + 12], now)
    else
      patch = fail(ackJob, ARGV[at + 12], tonumber(ARGV[at + 13]), ARGV[at + 14] == "1", now)
    end
    local promoted = apply(ackTag, ackJob, patch)
    ack = " a"
    if ackJob.st == "p" then ack = " a:" .. N(ackJob.ra) end
    if promoted then ack = " a+" .. N(promoted.ra) end
  end
  if ARGV[at + 3] ~= "" then
    writeInstance(id, ARGV[at + 3], ARGV[at + 4], ARGV[at + 5], ARGV[at + 6], ARGV[at + 7], ARGV[at + 8])
  end
  -- A job to cancel may be one the ACK just sent back to pending (or promoted): its queued
  -- index writes must land before the removal's, or its new entry would outlive it.
  flushIndexes()
  cancelJobs(ARGV[at + 15], now)
  return "1" .. ack
end

local replies = {}
local at = 2
while at <= #ARGV do
  local from = at + STEP_FIELDS
  local to = from + 3 * tonumber(ARGV[at + 16]) - 1
  replies[#replies + 1] = applyStep(at, from, to)
  at = to + 1
end
flushCounts()
return replies
