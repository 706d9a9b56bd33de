--[[
  Changing a job's state outside the lean paths: apply() writes a transition's patch
  (transitions.lua) and moves the job between indexes; removeJob() deletes it with its
  index entries. A job with an ordering key that ends, or is deleted before it ended,
  leaves its key's sequence here (leaveSequence), promoting the next job with apply():
  the two call each other, so they live together.
  Needs keys.lua, transitions.lua, job_record.lua, ledgers.lua, indexes.lua and
  sequences.lua included before it.
]]
local apply -- promotion applies a transition too

-- Takes a job that ended (or is deleted) out of its key's sequence, and promotes the
-- key's new head if it was waiting. Returns the promoted job, if any.
local function leaveSequence(tag, job, now)
  local key = sequenceKey(tag, job.ok)
  redis.call("ZREM", key, job.id)
  local head = redis.call("ZRANGE", key, 0, 0)[1]
  local promoted = head and loadJob(tag, head)
  if not promoted or promoted.st ~= "w" then return nil end
  apply(tag, promoted, promote(now))
  return promoted
end

-- Applies a transition's patch (see transitions.lua) and moves the job between indexes.
-- A job with an ordering key that ends leaves its sequence: the key's next job is
-- promoted and returned (every patch sets ua, the transition's time).
apply = function(tag, job, patch)
  local before, beforeRa = job.st, job.ra
  unindex(tag, job)
  local body = patch.b
  patch.b = nil
  for f, v in pairs(patch) do job[f] = v end
  storeJob(tag, job, body)
  index(tag, job)
  if job.ra ~= beforeRa then zaddLater(tag .. ":all", N(job.ra), job.id) end
  if job.st ~= before then
    count(tag, before, -1)
    count(tag, job.st, 1)
    if job.ok ~= "" and isTerminal(job.st) and not isTerminal(before) then return leaveSequence(tag, job, job.ua) end
  end
  return nil
end

-- Deletes a job and every index entry that names it. One that had not ended leaves its
-- ordering key's sequence, promoting the next job at `now`; nil `now` (the partition is
-- being purged) only removes it.
local function removeJob(tag, job, now)
  -- This script may have promoted the job (its index entry is only queued): flush first,
  -- or the queued add would land after our removal and leave a dangling entry.
  if job.ok ~= "" then flushIndexes() end
  unindex(tag, job)
  zremLater(tag .. ":all", job.id)
  count(tag, job.st, -1)
  if job.ik ~= "" and redis.call("HGET", tag .. ":idem", job.ik) == job.id then
    redis.call("HDEL", tag .. ":idem", job.ik)
  end
  redis.call("DEL", jobKey(tag, job.id))
  if job.ok ~= "" and not isTerminal(job.st) then
    if now then leaveSequence(tag, job, now) else redis.call("ZREM", sequenceKey(tag, job.ok), job.id) end
  end
end
