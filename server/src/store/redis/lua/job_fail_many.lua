--[[
  jobFailMany (one shard): fail per item, each fenced by its claim token.
  KEYS[1]  <prefix>:{shard}:checks
  ARGV     prefix, now, then per item: id, claimToken, customStatus, retryDelayMs or "", noRetry "1"/"0"
  Returns  one per item, joined by spaces: "a:<pendingAt>" (back to pending), "a" (failed), "s" stale, "n" not found;
           a failed job whose ordering key's next job it promoted: "a+<promotedAt>"; "w" for a
           workflow job whose claim holds (nothing written: see job_complete_many.lua, whose
           reply with contexts this shares).
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
local now = tonumber(ARGV[2])
local out, contexts = {}, { "" }
for i = 3, #ARGV, 5 do
  local id = ARGV[i]
  local tag = tagOfId(id)
  local job = tag and loadJob(tag, id)
  local outcome = checkClaim(job, ARGV[i + 1])
  if outcome == "a" and job.wf then
    outcome = "w"
    contexts[#contexts + 1] = job.wf
  elseif outcome == "a" then
    local promoted = apply(tag, job, fail(job, ARGV[i + 2], tonumber(ARGV[i + 3]), ARGV[i + 4] == "1", now))
    if job.st == "p" then outcome = "a:" .. N(job.ra) end
    if promoted then outcome = "a+" .. N(promoted.ra) end
  end
  out[#out + 1] = outcome
end
flushCounts()
if #contexts == 1 then return table.concat(out, " ") end
contexts[1] = table.concat(out, " ")
return contexts
