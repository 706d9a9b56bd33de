--[[
  The ordering keys' sequences, and joining one (enqueue, retry). Leaving one is
  leaveSequence in apply.lua: it promotes the key's next job, a transition applied with
  apply(), and apply() calls it back.
  Needs keys.lua and job_record.lua included before it.
]]
-- Ordering keys: <tag>:o:<key> holds the key's jobs that have not ended, scored by their
-- position (the partition's seq counter when they joined), so its first member is the
-- head. Only jobs with a key touch these sets, written at once (not batched like the
-- indexes) because the head is read right after.
local function sequenceKey(tag, key)
  return tag .. ":o:" .. key
end

-- Appends a job to its key's sequence at `position` (above every earlier one). Returns
-- whether the key already had a job that has not ended: then this one waits.
local function joinSequence(tag, job, position)
  local key = sequenceKey(tag, job.ok)
  local busy = redis.call("EXISTS", key) == 1
  redis.call("ZADD", key, N(position), job.id)
  return busy
end
