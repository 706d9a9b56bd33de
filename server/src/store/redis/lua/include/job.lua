--[[
  Jobs, and the indexes that follow their state. A job is one string: its attributes
  packed into a binary prefix (META below), then its body. A transition reads the string,
  changes the prefix and writes it back (in place with SETRANGE when its length did not
  change; the claim token's fixed slot keeps claim, hand-out and ACK at one length): no
  per-job hash to create, look fields up in or free. Against one hash field per attribute
  that cut a hand-out's and an ACK's cost inside Redis by about a third at a few hundred
  thousand jobs (where every lookup is a cache miss), and a pending job's memory by 40 %
  (docs/redis.md).
  The job's attributes, as loadJob returns them (short names, used across the scripts):
    st state (p pending, w waiting, b buffered, r running, s succeeded, f failed)
    be buffer_epoch   bn buffer batch (the claim's number: see the ledgers below; this store's own)
    ce claim_expires_at   ua updated_at   fa finished_at
    ct claim_token (a 1-byte length, then a TOKEN_WIDTH slot)
    at attempt   ar attempts_remaining   rd retry_delay_ms
    pr priority   ra run_after   aa attempts_allowed   ca created_at   sq seq
    ok ordering_key   ik idempotency_key   cs custom_status (a 4-byte length, then the bytes)
  (numbers: little-endian doubles, but bn a 4-byte integer). The order serves the hot
  path: a claim, a hand-out and an ACK change only fields of the fixed-width HEAD (st …
  rd), so they read and rewrite that alone (the lean paths below: the Lua work of
  unpacking and packing every field was most of a transition's cost inside Redis); the
  claim's three fields lead it.
  codec.ts decodes the same layout; change the two together (and JOB_LAYOUT in shard-check.ts).
  Needs transitions.lua included before it (apply() promotes with promote()).
]]
-- The claim token has a fixed width (a length, then TOKEN_WIDTH bytes, zero-padded), so a
-- hand-out, which sets it, keeps the prefix's length and writes in place.
local TOKEN_WIDTH = {{claimTokenMaxBytes}}
-- The buffer batch is a 4-byte counter (claims wrap around after 2^32: batches live for
-- seconds, so names stay unique among live ones) and the token's length one byte: the
-- prefix stays as long as before the batch was added, so a job with a 200-byte body still
-- fits the allocator's 384-byte class (one more byte: 448).
local HEAD = "<c1dI4dddBc" .. TOKEN_WIDTH .. "ddd"
local HEAD_SIZE = 1 + 8 + 4 + 3 * 8 + 1 + TOKEN_WIDTH + 3 * 8
local META = HEAD .. "dddddI4c0I4c0I4c0"
-- Where the ordering key's length sits (1-based): after the head and five doubles (pr, ra,
-- aa, ca, sq).
local KEY_LENGTH_AT = HEAD_SIZE + 5 * 8 + 1
local PRIORITY_AT = HEAD_SIZE + 1 -- pr, then ra
local SEQ_AT = HEAD_SIZE + 4 * 8 + 1
local TOKEN_PAD = string.rep("\0", TOKEN_WIDTH)

-- Offsets for GETRANGE and SETRANGE, as strings: a number passed to redis.call is
-- formatted with printf at every call, and the hot paths make several calls per job (that
-- formatting was a seventh of a hand-out's and an ACK's instructions in Redis).
local OFFSET_0 = "0"
local function offset(n)
  return string.format("%d", n)
end
local HEAD_LAST = offset(HEAD_SIZE - 1)
local KEY_LENGTH_LAST = offset(KEY_LENGTH_AT + 2)

-- Integers as Redis arguments: never Lua's %.14g exponent form. A batch repeats the same
-- few values (now, an expiry, an epoch) many times, and formatting goes through printf:
-- remember them for the call.
local formatted = {}
local function N(x)
  local s = formatted[x]
  if not s then
    s = string.format("%.0f", x)
    formatted[x] = s
  end
  return s
end

-- parent[key], a table made on first use (the per-script collections below are keyed by
-- index key, partition or time).
local function tableIn(parent, key)
  local t = parent[key]
  if not t then
    t = {}
    parent[key] = t
  end
  return t
end

-- The job table of a stored job string. `job._size` is the packed prefix's length and
-- `job._stored` the string as read (whole, or its head: see loadJob), so storeJob can
-- write back only what changed.
local function unpackJob(id, stored)
  local st, be, bn, ce, ua, fa, tokenLength, ct, at, ar, rd, pr, ra, aa, ca, sq, ok, ik, cs, next = struct.unpack(META, stored)
  -- One constructor: a table filled field by field would be rehashed as it grows.
  return {
    id = id, _stored = stored, _size = next - 1, st = st, be = be, bn = bn, ce = ce, ua = ua, fa = fa,
    ct = string.sub(ct, 1, tokenLength), at = at, ar = ar, rd = rd, pr = pr, ra = ra, aa = aa, ca = ca, sq = sq,
    ok = ok, ik = ik, cs = cs,
  }
end

local function padToken(ct)
  if ct == "" then return TOKEN_PAD end -- (every new job's)
  if #ct > TOKEN_WIDTH then error("claim token longer than " .. TOKEN_WIDTH .. " bytes") end
  return ct .. string.sub(TOKEN_PAD, #ct + 1)
end

-- A new job's stored string: the prefix codec.ts packed (pending, seq 0) with the job's
-- state and seq written over, then the body.
local function newJobString(prefix, st, seq, body)
  return st .. string.sub(prefix, 2, SEQ_AT - 1) .. struct.pack("<d", seq) .. string.sub(prefix, SEQ_AT + 8) .. body
end

-- The packed attributes (the string's prefix) of a job table.
local function packJob(job)
  local ct, ok, ik, cs = job.ct, job.ok, job.ik, job.cs
  return struct.pack(META, job.st, job.be, job.bn, job.ce, job.ua, job.fa, #ct, padToken(ct), job.at, job.ar, job.rd,
    job.pr, job.ra, job.aa, job.ca, job.sq, #ok, ok, #ik, ik, #cs, cs)
end

-- The packed prefix's length of a stored job string: where its body starts, minus one.
local function prefixSize(stored)
  local _, _, _, next = struct.unpack("<I4c0I4c0I4c0", stored, KEY_LENGTH_AT)
  return next - 1
end

-- Transitions read the job's first HEAD_READ bytes, not the whole string: the packed
-- attributes are usually ~200 bytes, and a big body should not be copied into Lua at
-- every step. A prefix longer than that (a long custom status) takes a second, whole read.
local HEAD_READ = 1024
local HEAD_READ_LAST = offset(HEAD_READ - 1)

-- The job (attributes, not its body), or nil if it does not exist. `job._stored` may be
-- only the head of the stored string (`job._whole` false); storeJob reads the rest when
-- it needs the body.
local function loadJob(tag, id)
  local key = jobKey(tag, id)
  local head = redis.call("GETRANGE", key, OFFSET_0, HEAD_READ_LAST)
  if head == "" then return nil end -- GETRANGE of a missing key
  local ok, job = pcall(unpackJob, id, head)
  if not ok then
    job = unpackJob(id, redis.call("GET", key))
    job._whole = true
  else
    job._whole = #head < HEAD_READ
  end
  job._key = key
  return job
end

-- Writes a loaded job back: the new prefix over the old one when it has the same length,
-- else prefix and body (the new `body`, or the stored one) as a new string.
local function storeJob(tag, job, body)
  local meta = packJob(job)
  local key = jobKey(tag, job.id)
  job._meta = meta
  if not body and #meta == job._size then
    redis.call("SETRANGE", key, OFFSET_0, meta)
    return
  end
  if not body and not job._whole then job._stored = redis.call("GET", key) end
  job._stored = meta .. (body or string.sub(job._stored, job._size + 1))
  job._size = #meta
  job._whole = true
  redis.call("SET", key, job._stored)
end

-- The job as the store's reply: ONE string per job (every reply element costs the client
-- a decoded object): "<id> " followed by the stored string. codec.ts decodes it.
local function packRecord(id, stored)
  return id .. " " .. stored
end

-- The reply for a job read whole and then written by apply(): its new prefix, then the body.
local function recordAsWritten(job)
  return packRecord(job.id, job._meta .. string.sub(job._stored, job._size + 1))
end

-- The reply for a loaded job without its body (read with its head only: see loadJob): its
-- packed attributes, then the body's length as a little-endian double (codec.ts reads it
-- as bodySize), so a caller can bound what reading the bodies would cost.
local function recordWithoutBody(job)
  local stored = job._whole and #job._stored or redis.call("STRLEN", job._key)
  return packRecord(job.id, string.sub(job._stored, 1, job._size) .. struct.pack("<d", stored - job._size))
end

-- nil for a job that does not exist.
local function record(tag, id)
  local stored = redis.call("GET", jobKey(tag, id))
  if not stored then return nil end
  return packRecord(id, stored)
end

-- Pending members sort by seq inside one run_after score: the (run_after, seq) order.
-- The seq is written as 16 zero-padded digits: printf for all but the last three, and only
-- when those change (an insert's seqs are consecutive; printf per job was a twentieth of
-- an insert's instructions).
local seqHigh, seqHighText
local function seqText(seq)
  local high = math.floor(seq / 1000)
  if high ~= seqHigh then seqHigh, seqHighText = high, string.format("%013.0f", high) end
  local low = seq - high * 1000
  return seqHighText .. string.char(48 + math.floor(low / 100), 48 + math.floor(low / 10) % 10, 48 + low % 10)
end

local function pendingMember(job)
  return seqText(job.sq) .. job.id
end

-- <tag>:p:<priority>, made once per partition and priority in a call.
local pendingKeys = {}
local function pendingKey(tag, priority)
  local keys = tableIn(pendingKeys, tag)
  local key = keys[priority]
  if not key then
    key = tag .. ":p:" .. priority
    keys[priority] = key
  end
  return key
end

-- Index writes are collected and sent as one ZREM and one ZADD per key when the script
-- flushes (flushIndexes, called by flushCounts): a batch of n jobs costs a handful of
-- index calls instead of 2n. Removals go first, so a member removed and re-added ends up
-- present. A script that reads an index after changing it must flushIndexes() first.
local zrems, zadds = {}, {}

local function zremLater(key, member)
  local t = tableIn(zrems, key)
  t[#t + 1] = member
end

local function zaddLater(key, score, member)
  local t = tableIn(zadds, key)
  t[#t + 1] = score
  t[#t + 1] = member
end

-- Ledgers: where a sorted-set entry per job cost too much for what it served, a batch of
-- jobs that entered a state together is recorded once: its ids under a name (a string of
-- "<id> " items at <key>:<name>), a score for the batch in the zset <key>, and a count of
-- the jobs still in it (hash <counts>). A job leaving the state only lowers its batch's
-- count, once per batch and script; the batch goes when its count reaches 0. Whoever reads
-- a batch's ids checks each job's own string (the truth): a listed job may have left.
--   Claim checks (per shard): a hand-out's running jobs, named <claim token>@<expiry>,
--     scored by the expiry; the claim sweep reads due ones (job_claim_expire.lua). A sorted-
--     set entry per job written at hand-out and removed at ACK was a tenth of Redis's work
--     per job; most checks now go (all their jobs ACKed) before they come due.
--   Buffer batches (per partition): a claim's buffered jobs, named <epoch>.<claim number>,
--     scored by the epoch; a new owner releases older epochs' batches, peek and stats list them.
local function newLedger(key, counts)
  return { key = key, counts = counts, joins = {}, deltas = {} }
end

local function ledgerJoin(ledger, name, score, id)
  local ids = ledger.joins[name]
  if not ids then
    ids = { score = score }
    ledger.joins[name] = ids
  end
  ids[#ids + 1] = id
  ledger.deltas[name] = (ledger.deltas[name] or 0) + 1
end

local function ledgerLeave(ledger, name)
  ledger.deltas[name] = (ledger.deltas[name] or 0) - 1
end

local function ledgerDelete(ledger, name)
  redis.call("DEL", ledger.key .. ":" .. name)
  redis.call("HDEL", ledger.counts, name)
  redis.call("ZREM", ledger.key, name)
end

-- Joins before counts: a job that left and rejoined one batch in this script (apply()
-- unindexes and indexes) must not see it deleted in between.
local function ledgerFlush(ledger)
  for name, ids in pairs(ledger.joins) do
    redis.call("APPEND", ledger.key .. ":" .. name, table.concat(ids, " ") .. " ")
    redis.call("ZADD", ledger.key, N(ids.score), name)
  end
  for name, delta in pairs(ledger.deltas) do
    -- A count below 1 (also one that was never there): no job is left in the batch.
    if delta ~= 0 and redis.call("HINCRBY", ledger.counts, name, delta) <= 0 then ledgerDelete(ledger, name) end
  end
  ledger.joins, ledger.deltas = {}, {}
end

-- Calls visit(id) for each id a batch lists, in order, while it returns true; returns the
-- unvisited rest of the list ("" when all were visited).
local function ledgerWalk(ledger, name, visit)
  local listed = redis.call("GET", ledger.key .. ":" .. name) or ""
  local at = 1
  while at <= #listed do
    local id, nextAt = idAt(listed, at)
    if not visit(id) then return string.sub(listed, at) end
    at = nextAt
  end
  return ""
end

local claimChecks = newLedger(CHECKS, CHECK_COUNTS)

-- A batch's jobs mostly share one claim and one buffer batch: a ledger name is made again
-- only when its two parts differ from the last call's.
local function lastNamer(make)
  local lastA, lastB, lastName
  return function(a, b)
    if a ~= lastA or b ~= lastB then lastA, lastB, lastName = a, b, make(a, b) end
    return lastName
  end
end

local checkNameOf = lastNamer(function(token, expiresAt) return token .. "@" .. N(expiresAt) end)

local function checkName(job)
  return checkNameOf(job.ct, job.ce)
end

local buffers = {}

local function bufferLedger(tag)
  local ledger = buffers[tag]
  if not ledger then
    ledger = newLedger(tag .. ":buf", tag .. ":buf-n")
    buffers[tag] = ledger
  end
  return ledger
end

local batchNameOf = lastNamer(function(epoch, batch) return N(epoch) .. "." .. N(batch) end)

local function batchName(job)
  return batchNameOf(job.be, job.bn)
end

local function flushLedgers()
  ledgerFlush(claimChecks)
  for _, ledger in pairs(buffers) do ledgerFlush(ledger) end
end

-- The jobs a partition's buffer batches list that are still buffered under them: each
-- once (a job released and claimed again may be listed by two live batches). With
-- `whole`, each is read whole (`job._stored` is the stored string, body included).
local function bufferedJobs(tag, whole)
  local ledger, jobs = bufferLedger(tag), {}
  for _, name in ipairs(redis.call("ZRANGE", ledger.key, 0, -1)) do
    ledgerWalk(ledger, name, function(id)
      local job
      if whole then
        local stored = redis.call("GET", jobKey(tag, id))
        job = stored and unpackJob(id, stored)
      else
        job = loadJob(tag, id)
      end
      if job and job.st == "b" and batchName(job) == name then jobs[#jobs + 1] = job end
      return true
    end)
  end
  return jobs
end

-- Succeeded jobs are listed for retention in arrival order, not indexed by time: each
-- script appends one entry per partition and finishing time to <tag>:done:s, "<finished_at>
-- <id> <id> …" (a sorted-set entry per job was the largest single cost of an ACK inside
-- Redis, and ~100 bytes per retained job). Nothing removes a job from it: retention
-- (job_delete_finished.lua) deletes a listed job only if it is still succeeded at that
-- time, so one deleted early is skipped. ACK times of one server only grow; across servers
-- a clock skew can put an entry after a later one, which retention then reaches that much late.
local succeeded = {}

local function listSucceededAt(tag, finishedAt, id)
  local ids = tableIn(tableIn(succeeded, tag), finishedAt)
  ids[#ids + 1] = id
end

local function listSucceeded(tag, job)
  listSucceededAt(tag, job.fa, job.id)
end

local function flushSucceeded()
  for tag, byTime in pairs(succeeded) do
    for fa, ids in pairs(byTime) do redis.call("RPUSH", tag .. ":done:s", N(fa) .. " " .. table.concat(ids, " ")) end
  end
  succeeded = {}
end

-- unpack() is bounded by Lua's C stack (LUAI_MAXCSTACK, 8000 slots in Redis): send long
-- argument lists in chunks well below it (a ZADD chunk is twice as many values).
local CHUNK = 1000

local function flushIndexes()
  for key, members in pairs(zrems) do
    for i = 1, #members, CHUNK do redis.call("ZREM", key, unpack(members, i, math.min(i + CHUNK - 1, #members))) end
  end
  for key, args in pairs(zadds) do
    for i = 1, #args, 2 * CHUNK do redis.call("ZADD", key, unpack(args, i, math.min(i + 2 * CHUNK - 1, #args))) end
  end
  zrems, zadds = {}, {}
  flushLedgers()
  flushSucceeded()
end

local function unindex(tag, job)
  local st = job.st
  if st == "p" then zremLater(pendingKey(tag, job.pr), pendingMember(job))
  elseif st == "w" then zremLater(tag .. ":w", job.id)
  elseif st == "b" then ledgerLeave(bufferLedger(tag), batchName(job))
  elseif st == "r" then ledgerLeave(claimChecks, checkName(job))
  elseif st == "f" then zremLater(tag .. ":done:f", job.id) end -- (succeeded: see listSucceeded)
end

local function index(tag, job)
  local st = job.st
  if st == "p" then zaddLater(pendingKey(tag, job.pr), N(job.ra), pendingMember(job))
  elseif st == "w" then zaddLater(tag .. ":w", N(job.ra), job.id)
  elseif st == "b" then ledgerJoin(bufferLedger(tag), batchName(job), job.be, job.id)
  elseif st == "r" then ledgerJoin(claimChecks, checkName(job), job.ce, job.id)
  elseif st == "s" then listSucceeded(tag, job)
  else zaddLater(tag .. ":done:f", N(job.fa), job.id) end
end

-- Per-state job counters (<tag>:n) change with every job but are written once per script:
-- count() collects the deltas and flushCounts(), which every writing script calls before
-- it returns, applies them (two calls fewer per job on every batch).
local counts = {}

local function count(tag, st, delta)
  local c = tableIn(counts, tag)
  c[st] = (c[st] or 0) + delta
end

local function flushCounts()
  flushIndexes()
  for tag, c in pairs(counts) do
    for st, delta in pairs(c) do
      if delta ~= 0 then redis.call("HINCRBY", tag .. ":n", st, delta) end
    end
  end
  counts = {}
end

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

-- HEAD in parts, for the lean paths: its fields up to the token (st, be, bn, ce, ua, fa:
-- what an ACK rewrites), where the token starts, and where at and ar follow it.
local HEAD_START = "<c1dI4ddd"
local TOKEN_AT = 1 + 1 + 8 + 4 + 3 * 8 -- (1-based) its length byte, then its slot
local ATTEMPT_AT = TOKEN_AT + 1 + TOKEN_WIDTH

-- The lean paths (claim, hand-out, ACK) read and write a job's HEAD only, and the hand-out
-- and ACK build no job or patch table per job: what apply() does for them, unrolled (at
-- batches of 100 the tables and the generic loop were a third of those scripts' time in
-- Redis). The rules stay in transitions.lua (handOutValues, succeedValues, checkClaimValues).
-- Hand-out: a job buffered under `epoch` becomes running per handOutValues and moves from
-- its buffer batch to the hand-out's claim check, as unindex()/index() do for "b" and "r".
-- `paddedToken` is padToken(token), made once per call. The caller counts the state
-- change. Returns whether the job started.
local function startBuffered(tag, id, epoch, token, paddedToken, expiresAt, retryDelay, now)
  local key = jobKey(tag, id)
  local head = redis.call("GETRANGE", key, OFFSET_0, HEAD_LAST)
  if head == "" then return false end
  local st, be, bn, _, _, fa = struct.unpack(HEAD_START, head)
  if st ~= "b" or be ~= epoch then return false end
  local at, ar = struct.unpack("<dd", head, ATTEMPT_AT) -- (not the token between: no string for it)
  local nst, nbe, nce, nua, nat, nar, nct, nrd = handOutValues(at, ar, token, expiresAt, retryDelay, now)
  local padded = nct == token and paddedToken or padToken(nct)
  redis.call("SETRANGE", key, OFFSET_0, struct.pack(HEAD, nst, nbe, bn, nce, nua, fa, #nct, padded, nat, nar, nrd))
  ledgerLeave(bufferLedger(tag), batchNameOf(be, bn))
  ledgerJoin(claimChecks, checkNameOf(nct, nce), nce, id)
  return true
end

-- ACK: a running job whose succeed appends no status and ends no ordering key's turn.
-- Checks the claim (checkClaimValues), rewrites the head's first fields (state …
-- finished_at) per succeedValues, and moves the job from its claim check to the retention
-- list. The caller counts the state change. Returns the outcome ("a", "s" or "n"), or nil
-- for a job with an ordering key: it takes the whole path (apply(), which leaves the key's
-- sequence).
local NO_KEY = "\0\0\0\0" -- an ordering key's length of 0
-- A token as its slot starts when it holds that token: its length byte, then its bytes.
local storedTokens = {}
local function storedToken(token)
  local stored = storedTokens[token]
  if not stored then
    stored = string.char(#token) .. token
    storedTokens[token] = stored
  end
  return stored
end
local function succeedRunning(tag, id, token, now)
  local key = jobKey(tag, id)
  local head = redis.call("GETRANGE", key, OFFSET_0, KEY_LENGTH_LAST) -- through the ordering key's length
  if head == "" then return "n" end
  local st, be, bn, ce = struct.unpack(HEAD_START, head)
  -- The stored token is compared where it lies (a plain find anchored by its position)
  -- rather than unpacked and cut out: two strings fewer per job.
  local ct = #token <= TOKEN_WIDTH and string.find(head, storedToken(token), TOKEN_AT, true) == TOKEN_AT and token or nil
  local outcome = checkClaimValues(st, ct, token)
  if outcome ~= "a" then return outcome end
  if string.find(head, NO_KEY, KEY_LENGTH_AT, true) ~= KEY_LENGTH_AT then return nil end
  local nst, nce, nua, nfa = succeedValues(now)
  redis.call("SETRANGE", key, OFFSET_0, struct.pack(HEAD_START, nst, be, bn, nce, nua, nfa))
  ledgerLeave(claimChecks, checkNameOf(ct, ce))
  listSucceededAt(tag, nfa, id)
  return "a"
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

-- Users see waiting and buffered jobs as pending; filters name the visible state.
local function visible(st)
  if st == "b" or st == "w" then return "p" end
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
