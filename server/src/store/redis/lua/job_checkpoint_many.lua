--[[
  jobCheckpointMany (one shard): checkpoint per item (extend, new body, attempts, back to
  pending), each fenced by its claim token.
  KEYS[1]  <prefix>:{shard}:checks
  ARGV     prefix, now, then per item: id, claimToken, claimExpiresAt, hasBody "1"/"0", body,
           moveToPending "1"/"0", runAfter, attemptsAllowed, customStatus
  Returns  one per item, joined by spaces: "a:<pendingAt>" (moved to pending), "a", "s" stale, "n" not found.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
local now = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 9 do
  local id = ARGV[i]
  local tag = tagOfId(id)
  local job = tag and loadJob(tag, id)
  local outcome = checkClaim(job, ARGV[i + 1])
  if outcome == "a" then
    apply(tag, job, checkpoint(job, {
      expiresAt = tonumber(ARGV[i + 2]),
      body = ARGV[i + 3] == "1" and ARGV[i + 4] or nil,
      moveToPending = ARGV[i + 5] == "1",
      runAfter = tonumber(ARGV[i + 6]),
      attemptsAllowed = tonumber(ARGV[i + 7]),
      status = ARGV[i + 8],
    }, now))
    if job.st == "p" then outcome = "a:" .. N(job.ra) end
  end
  out[#out + 1] = outcome
end
flushCounts()
return table.concat(out, " ")
