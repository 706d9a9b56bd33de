--[[
  jobClaimExpire (one shard): applies expireClaim to up to `limit` running jobs whose
  claim expired, found through the shard's running index: O(expired), never O(queue).
  Touches the partitions of the expired jobs (several slots): a shard is one server.
  KEYS[1]  <prefix>:{shard}:running
  ARGV     prefix, now, limit
  Returns  { nextExpiryAt or "", record, record, ... } (records after the change)
]]
--@include keys
--@include transitions
--@include job
local now, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local out = { "" }
local count = 0
while count < limit do
  local ids = redis.call("ZRANGEBYSCORE", RUNNING, "-inf", N(now), "LIMIT", 0, limit - count)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    local tag = tagOfId(id)
    local job = tag and loadJob(tag, id)
    if job and job.st == "r" then
      apply(tag, job, expireClaim(job, now))
      out[#out + 1] = record(tag, id)
      count = count + 1
    else
      redis.call("ZREM", RUNNING, id) -- left by a deleted queue: drop it
    end
  end
  flushIndexes() -- the next read of the running index must not see these again
end
local nextEntry = redis.call("ZRANGE", RUNNING, 0, 0, "WITHSCORES")
if nextEntry[2] then out[1] = nextEntry[2] end
flushCounts()
return out
