--[[
  jobDeleteFinished (one shard): retention GC, oldest first per partition: succeeded jobs
  through their list (entries "<finished_at> <id> …" in the order written, see
  listSucceeded in indexes.lua), failed ones through their finished-by-time zset. O(examined),
  never O(queue): at most `limit` listed ids are looked at per call.
  KEYS[1]  <prefix>:{shard}:checks   (routing only)
  ARGV     prefix, queue, succeededBefore, failedBefore, limit, partitions...
  Returns  the number deleted (a listed job deleted or retried before is skipped, not counted).
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
local queue, limit = ARGV[2], tonumber(ARGV[5])
local succeededBefore, failedBefore = tonumber(ARGV[3]), ARGV[4]
local deleted, examined = 0, 0

-- Succeeded: whole entries from the head while they are old enough; one cut by the budget
-- keeps the ids it did not reach.
local function deleteSucceeded(tag)
  local key = tag .. ":done:s"
  while examined < limit do
    local entry = redis.call("LINDEX", key, 0)
    if not entry then return end
    local space = string.find(entry, " ", 1, true)
    local finishedAt = tonumber(string.sub(entry, 1, space - 1))
    if finishedAt >= succeededBefore then return end
    local at = space + 1
    while at <= #entry and examined < limit do
      local id
      id, at = idAt(entry, at)
      examined = examined + 1
      local job = loadJob(tag, id)
      -- Still the job that entry listed: succeeded at that time.
      if job and job.st == "s" and job.fa == finishedAt then
        removeJob(tag, job)
        deleted = deleted + 1
      end
    end
    if at <= #entry then
      redis.call("LSET", key, 0, N(finishedAt) .. " " .. string.sub(entry, at))
    else
      redis.call("LPOP", key)
    end
  end
end

local function deleteFailed(tag)
  if examined >= limit then return end
  local ids = redis.call("ZRANGEBYSCORE", tag .. ":done:f", "-inf", "(" .. failedBefore, "LIMIT", 0, limit - examined)
  for _, id in ipairs(ids) do
    examined = examined + 1
    local job = loadJob(tag, id)
    if job then
      removeJob(tag, job)
      deleted = deleted + 1
    else
      redis.call("ZREM", tag .. ":done:f", id)
    end
  end
end

for i = 6, #ARGV do
  local tag = tagOf(queue, ARGV[i])
  deleteSucceeded(tag)
  deleteFailed(tag)
end
flushCounts()
return deleted
