--[[
  jobClaimExpire (one shard): applies expireClaim to up to `limit` running jobs whose
  claim expired, found through the shard's claim checks (ledgers.lua): each due check names
  the jobs of one hand-out; those still running under it (same claim token and expiry)
  have expired, the others left. O(jobs of due checks): a check whose jobs all left is
  gone before it comes due. Touches the partitions of the expired jobs (several slots): a
  shard is one server.
  KEYS[1]  <prefix>:{shard}:checks
  ARGV     prefix, now, limit
  Returns  { nextExpiryAt or "", record, record, ... } (records after the change)
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
local now, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local out = { "" }
local count = 0
while count < limit do
  local due = redis.call("ZRANGEBYSCORE", CHECKS, "-inf", N(now), "LIMIT", 0, 1)
  local name = due[1]
  if not name then break end
  local rest = ledgerWalk(claimChecks, name, function(id)
    if count >= limit then return false end
    local tag = tagOfId(id)
    local job = tag and loadJob(tag, id)
    if job and job.st == "r" and checkName(job) == name then
      apply(tag, job, expireClaim(job, now))
      out[#out + 1] = record(tag, id)
      count = count + 1
    end
    return true
  end)
  flushIndexes() -- the expired jobs leave the check (it may go with them)
  if rest ~= "" and redis.call("ZSCORE", CHECKS, name) then
    redis.call("SET", CHECKS .. ":" .. name, rest) -- cut by the limit: the rest stays due
  else
    ledgerDelete(claimChecks, name) -- every job listed is done with
  end
end
local nextEntry = redis.call("ZRANGE", CHECKS, 0, 0, "WITHSCORES")
if nextEntry[2] then out[1] = nextEntry[2] end
flushCounts()
return out
