--[[
  instanceApply (the instance's shard, docs/workflows.md): one step of an instance, all or nothing.
  The checks come first and write nothing when they fail: the ACK's job must hold its claim
  token and be a workflow job's run; the stored instance must be at the revision the step
  was decided on. Then, in memory's order (memory/workflows.ts): the new queue jobs are
  inserted, the ACK's transition applied (transitions.lua, with apply(): a job that ends
  leaves its ordering key's sequence), the instance written, and the jobs to cancel deleted
  if they are pending, waiting or buffered (cancel.lua).
  KEYS[1]  <prefix>:{shard}:checks
  ARGV     prefix, now, instance id, rev (the stored revision expected; 0: no instance),
           the new instance: rev ("" for none: with rev 0, the ACK alone), state, workflow,
           created_at, ended_at, data;
           the ACK: kind ("" none, "c" complete, "f" fail), job id, claim token, custom
           status, retry delay ("" for the planned one), no retry ("1"/"0");
           the ids to cancel, joined by spaces;
           then per job to insert: id, stored prefix, body (insert.lua)
  Returns  "<applied>" or "<applied> <ack>": applied "1" or "0"; the ACK's outcome as
           job_fail_many.lua answers it ("a", "a:<pendingAt>", "a+<promotedAt>", "s", "n":
           "n" also for a job that is no workflow job's run); no ACK outcome for a
           conflict of revisions.
  Errors   "QUEUE_NOT_FOUND <queue>" when a new job's partition is missing (nothing written).
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
local now, id, rev = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local kind, ackId, token = ARGV[11], ARGV[12], ARGV[13]
local JOBS_FROM = 18
local ackTag, ackJob
if kind ~= "" then
  ackTag = tagOfId(ackId)
  ackJob = ackTag and loadJob(ackTag, ackId)
  local outcome = checkClaim(ackJob, token)
  if outcome == "a" and not ackJob.wf then outcome = "n" end
  if outcome ~= "a" then return "0 " .. outcome end
end
if instanceRev(id) ~= rev then return "0" end
local parts, tags = planInsert(JOBS_FROM)
if not parts then return redis.error_reply("QUEUE_NOT_FOUND " .. tags) end
insertPlanned(JOBS_FROM, parts, tags)
-- The ACK may promote a job just inserted behind it (one ordering key): its queued index
-- writes must land before the promotion's.
flushIndexes()
local ack = ""
if kind ~= "" then
  local patch
  if kind == "c" then
    patch = succeed(ackJob, ARGV[14], now)
  else
    patch = fail(ackJob, ARGV[14], tonumber(ARGV[15]), ARGV[16] == "1", now)
  end
  local promoted = apply(ackTag, ackJob, patch)
  ack = " a"
  if ackJob.st == "p" then ack = " a:" .. N(ackJob.ra) end
  if promoted then ack = " a+" .. N(promoted.ra) end
end
if ARGV[5] ~= "" then writeInstance(id, ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]) end
-- A job to cancel may be one the ACK just sent back to pending (or promoted): its queued
-- index writes must land before the removal's, or its new entry would outlive it.
flushIndexes()
cancelJobs(ARGV[17], now)
flushCounts()
return "1" .. ack
