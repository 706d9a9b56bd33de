--[[
  jobPeekMany (one shard): the dry run. For each listed partition, its buffered jobs and
  the best `limit` due pending jobs of each priority, changing nothing; the caller merges
  partitions and keeps the best `limit`.
  KEYS[1]  <prefix>:{shard}:checks   (routing only)
  ARGV     prefix, queue, limit, now, partitions...
  Returns  { record, ... }
]]
--@include keys
--@include job_record
--@include ledgers
local queue, limit, now = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local out = {}
for i = 5, #ARGV do
  local tag = tagOf(queue, ARGV[i])
  for _, job in ipairs(bufferedJobs(tag, true)) do out[#out + 1] = packRecord(job.id, job._stored) end
  local maxPriority = tonumber(redis.call("HGET", tag .. ":n", "maxpr")) or 0
  for priority = 1, maxPriority do
    for _, member in ipairs(redis.call("ZRANGEBYSCORE", tag .. ":p:" .. priority, "-inf", now, "LIMIT", 0, limit)) do
      out[#out + 1] = record(tag, string.sub(member, 17))
    end
  end
end
return out
