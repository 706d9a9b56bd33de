--[[
  jobScan / jobCount / jobDeleteMany's walk over one partition: examines at most `budget`
  jobs in scan order (run_after descending, then id descending) strictly after the cursor,
  and returns those matching the state, priority and future filters (the body regex is
  the caller's: JS regexes do not run in Lua). Bounded work per call; the caller resumes
  from the returned position.
  KEYS[1]  <tag>:all
  ARGV     prefix, queue, partition, now, cursorRunAfter or "", cursorId, state ("" p r s f),
           priority (0 any), future ("" "0" "1"), budget, want, mode ("full" "meta" "ids" "count")
  Returns  { done 0/1, lastRunAfter, lastId, matched, record or id, ... }
           (mode "count" returns no items; "ids" returns ids; "meta" records without their
           bodies, read with the job's head only).
]]
--@include keys
--@include job_record
--@include job_filter
local all = KEYS[1]
local tag = tagOf(ARGV[2], ARGV[3])
local now, cursorRa, cursorId = tonumber(ARGV[4]), ARGV[5], ARGV[6]
local state, priority, future = ARGV[7], tonumber(ARGV[8]), ARGV[9]
local budget, want, mode = tonumber(ARGV[10]), tonumber(ARGV[11]), ARGV[12]

-- Byte order, as Redis orders members (Lua's < follows the server's locale).
local function bytesAtLeast(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a >= #b
end

-- Rank (in descending order) of the first entry strictly after (cursorRa, cursorId):
-- entries with a higher score, then a binary search among the ties (members descending).
local start = 0
if cursorRa ~= "" then
  local lo = redis.call("ZCOUNT", all, "(" .. cursorRa, "+inf")
  local hi = lo + redis.call("ZCOUNT", all, cursorRa, cursorRa)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local member = redis.call("ZREVRANGE", all, mid, mid)[1]
    if bytesAtLeast(member, cursorId) then lo = mid + 1 else hi = mid end
  end
  start = lo
end

local entries = redis.call("ZREVRANGE", all, start, start + budget - 1, "WITHSCORES")
local out = { 0, cursorRa, cursorId, 0 }
local matched = 0
local examined = 0
for i = 1, #entries, 2 do
  if matched >= want then break end
  local id = entries[i]
  local job = loadJob(tag, id)
  if job and matches(job, state, priority, future, now) then
    matched = matched + 1
    if mode == "full" then out[#out + 1] = record(tag, id)
    elseif mode == "meta" then out[#out + 1] = recordWithoutBody(job)
    elseif mode == "ids" then out[#out + 1] = id end
  end
  out[2], out[3] = entries[i + 1], id
  examined = examined + 1
end
if examined == #entries / 2 and #entries < budget * 2 then out[1] = 1 end
out[4] = matched
return out
