--[[
  Jobs as hashes, and the indexes that follow their state. Field names are short because
  every job pays for them:
    st state (p pending, b buffered, r running, s succeeded, f failed)
    pr priority   ra run_after   aa attempts_allowed   ar attempts_remaining   at attempt
    cs custom_status   ca created_at   ua updated_at   fa finished_at   ct claim_token
    ce claim_expires_at   rd retry_delay_ms   be buffer_epoch   ik idempotency_key
    sq seq   b body
  Absent fields read as 0 or "" (insert writes only what is set).
]]
local FIELDS = { "st", "pr", "ra", "aa", "ar", "at", "cs", "ca", "ua", "fa", "ct", "ce", "rd", "be", "ik", "sq" }
local TEXT = { st = true, cs = true, ct = true, ik = true }

-- Integers as Redis arguments: never Lua's %.14g exponent form.
local function N(x)
  return string.format("%.0f", x)
end

local function loadJob(tag, id)
  local values = redis.call("HMGET", jobKey(tag, id), unpack(FIELDS))
  if not values[1] then return nil end
  local job = { id = id }
  for i, f in ipairs(FIELDS) do
    local v = values[i]
    if TEXT[f] then job[f] = v or "" else job[f] = tonumber(v) or 0 end
  end
  return job
end

-- The job as the store's reply: { id, field, value, ... } including the body.
local function record(tag, id)
  local out = redis.call("HGETALL", jobKey(tag, id))
  table.insert(out, 1, id)
  return out
end

-- Pending members sort by seq inside one run_after score: the (run_after, seq) order.
local function pendingMember(job)
  return string.format("%016.0f", job.sq) .. job.id
end

local function unindex(tag, job)
  local st = job.st
  if st == "p" then redis.call("ZREM", tag .. ":p:" .. job.pr, pendingMember(job))
  elseif st == "b" then redis.call("ZREM", tag .. ":buf", job.id)
  elseif st == "r" then redis.call("ZREM", RUNNING, job.id)
  else redis.call("ZREM", tag .. ":done:" .. st, job.id) end
end

local function index(tag, job)
  local st = job.st
  if st == "p" then redis.call("ZADD", tag .. ":p:" .. job.pr, N(job.ra), pendingMember(job))
  elseif st == "b" then redis.call("ZADD", tag .. ":buf", N(job.be), job.id)
  elseif st == "r" then redis.call("ZADD", RUNNING, N(job.ce), job.id)
  else redis.call("ZADD", tag .. ":done:" .. st, N(job.fa), job.id) end
end

-- Per-state job counters (<tag>:n) change with every job but are written once per script:
-- count() collects the deltas and flushCounts(), which every writing script calls before
-- it returns, applies them (two calls fewer per job on every batch).
local counts = {}

local function count(tag, st, delta)
  local c = counts[tag]
  if not c then
    c = {}
    counts[tag] = c
  end
  c[st] = (c[st] or 0) + delta
end

local function flushCounts()
  for tag, c in pairs(counts) do
    for st, delta in pairs(c) do
      if delta ~= 0 then redis.call("HINCRBY", tag .. ":n", st, delta) end
    end
  end
  counts = {}
end

-- Applies a transition's patch (see transitions.lua) and moves the job between indexes.
local function apply(tag, job, patch)
  local before, beforeRa = job.st, job.ra
  unindex(tag, job)
  local args = {}
  for f, v in pairs(patch) do
    job[f] = v
    args[#args + 1] = f
    args[#args + 1] = type(v) == "number" and N(v) or v
  end
  redis.call("HSET", jobKey(tag, job.id), unpack(args))
  index(tag, job)
  if job.ra ~= beforeRa then redis.call("ZADD", tag .. ":all", N(job.ra), job.id) end
  if job.st ~= before then
    count(tag, before, -1)
    count(tag, job.st, 1)
  end
end

-- Deletes a job and every index entry that names it.
local function removeJob(tag, job)
  unindex(tag, job)
  redis.call("ZREM", tag .. ":all", job.id)
  count(tag, job.st, -1)
  if job.ik ~= "" and redis.call("HGET", tag .. ":idem", job.ik) == job.id then
    redis.call("HDEL", tag .. ":idem", job.ik)
  end
  redis.call("DEL", jobKey(tag, job.id))
end

-- Users see buffered jobs as pending; filters name the visible state.
local function visible(st)
  if st == "b" then return "p" end
  return st
end

-- Filter by visible state ("" any), priority (0 any), future ("" any, "1" run_after > now, "0" due).
local function matches(job, state, priority, future, now)
  if state ~= "" and visible(job.st) ~= state then return false end
  if priority ~= 0 and job.pr ~= priority then return false end
  if future == "1" and not (job.ra > now) then return false end
  if future == "0" and job.ra > now then return false end
  return true
end
