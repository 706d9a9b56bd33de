--[[
  The state machine of server/src/domain/transitions.ts, rule for rule: each function
  takes the job as loaded by loadJob and returns the fields to change. The shared store
  suite pins that both agree; change them together. Included before job_record.lua and
  the includes built on it (apply.lua promotes with promote()), so it uses nothing of theirs.
]]
local STATUS_MAX = {{customStatusMaxLength}}

-- JS measures strings in UTF-16 code units: count them the same way over UTF-8 bytes.
-- Characters (code points) of UTF-8 text: count the bytes that start one.
local function charLength(s)
  local n = 0
  for i = 1, #s do
    local c = string.byte(s, i)
    if c < 0x80 or c >= 0xC0 then n = n + 1 end
  end
  return n
end

-- Custom status grows by lines; past the limit (in characters) the oldest whole
-- characters are cut.
local function appendStatus(existing, addition)
  if addition == "" then return existing end
  local joined = addition
  if existing ~= "" then joined = existing .. "\n" .. addition end
  if #joined <= STATUS_MAX then return joined end -- fewer bytes than the limit: fewer characters too
  local excess = charLength(joined) - STATUS_MAX
  if excess <= 0 then return joined end
  local i = 1
  while excess > 0 and i <= #joined do
    local c = string.byte(joined, i)
    local bytes = 1
    if c >= 0xF0 then bytes = 4 elseif c >= 0xE0 then bytes = 3 elseif c >= 0xC0 then bytes = 2 end
    excess = excess - 1
    i = i + bytes
  end
  return string.sub(joined, i)
end

-- The ACK/checkpoint fence: "a" acknowledged, "s" stale claim, "n" not found.
-- (checkClaimValues: the same for a job's state and claim token, as lean_paths.lua has them.)
local function checkClaimValues(st, ct, token)
  if st ~= "r" or ct ~= token or token == "" then return "s" end
  return "a"
end

local function checkClaim(job, token)
  if not job then return "n" end
  return checkClaimValues(job.st, job.ct, token)
end

-- Succeeded and failed jobs are done: they have left their ordering key's sequence.
local function isTerminal(st)
  return st == "s" or st == "f"
end

-- Enqueue and retryFailed: behind a job of its ordering key that has not ended, a job waits.
local function arrivalState(keyBusy)
  if keyBusy then return "w" end
  return "p"
end

-- The key's earlier jobs all ended: the next one becomes claimable at its own run_after.
local function promote(now)
  return { st = "p", ua = now }
end

local function claimIntoBuffer(epoch)
  return { st = "b", be = epoch }
end

local function unbuffer()
  return { st = "p", be = 0 }
end

-- The hand-out as values (st, be, ce, ua, at, ar, ct, rd), for lean_paths.lua, which
-- builds no patch table per job; handOut() is the same rule as a patch.
local function handOutValues(at, ar, token, expiresAt, retryDelay, now)
  return "r", 0, expiresAt, now, at + 1, math.max(0, ar - 1), token, retryDelay
end

local function handOut(job, token, expiresAt, retryDelay, now)
  local st, be, ce, ua, at, ar, ct, rd = handOutValues(job.at, job.ar, token, expiresAt, retryDelay, now)
  return { st = st, at = at, ar = ar, ct = ct, ce = ce, rd = rd, be = be, ua = ua }
end

-- A succeed as values (st, ce, ua, fa) when it appends no status, for lean_paths.lua;
-- succeed() is the same rule as a patch.
local function succeedValues(now)
  return "s", 0, now, now
end

local function succeed(job, status, now)
  local st, ce, ua, fa = succeedValues(now)
  return { st = st, cs = appendStatus(job.cs, status), ce = ce, fa = fa, ua = ua }
end

-- retryDelay nil: the delay planned at hand-out.
local function fail(job, status, retryDelay, noRetry, now)
  local cs = appendStatus(job.cs, status)
  if noRetry or job.ar <= 0 then
    return { st = "f", cs = cs, ce = 0, fa = now, ua = now }
  end
  return { st = "p", cs = cs, ra = now + (retryDelay or job.rd), ct = "", ce = 0, ua = now }
end

local function expireClaim(job, now)
  return fail(job, "attempt " .. string.format("%.0f", job.at) .. ": claim timed out", nil, false, now)
end

-- c: { expiresAt, body (nil keeps it), moveToPending, runAfter, attemptsAllowed, status }
local function checkpoint(job, c, now)
  local patch = { cs = appendStatus(job.cs, c.status), ua = now }
  if c.body then patch.b = c.body end
  if c.moveToPending then
    -- Released, not failed: the attempt charged at hand-out is given back.
    local allowed = c.attemptsAllowed ~= 0 and c.attemptsAllowed or job.aa
    local remaining = math.min(allowed, job.ar + 1)
    local attempt = math.max(0, job.at - 1)
    if c.attemptsAllowed ~= 0 then remaining, attempt = c.attemptsAllowed, 0 end
    patch.st, patch.ra, patch.aa, patch.ar, patch.at, patch.ct, patch.ce =
      "p", c.runAfter, allowed, remaining, attempt, "", 0
    return patch
  end
  patch.ce = c.expiresAt
  if c.attemptsAllowed ~= 0 then
    -- The running attempt counts as the first of the new allowance.
    patch.aa, patch.ar, patch.at = c.attemptsAllowed, c.attemptsAllowed - 1, 1
  end
  return patch
end

-- keyBusy: the job rejoined its ordering key's sequence behind jobs that have not ended.
local function retryFailed(attemptsAllowed, runAfter, now, keyBusy)
  return {
    st = arrivalState(keyBusy), aa = attemptsAllowed, ar = attemptsAllowed, at = 0, ra = runAfter, ct = "",
    ce = 0, fa = 0, ua = now,
  }
end
