-- wrk script for bench/rps.sh: every request is a GET of one line of a URL
-- list, sent with `Accept-Encoding: gzip`.
--
--   wrk -t1 -c50 -d10s -s bench/lib/urls.lua http://127.0.0.1:8333 -- FILE MODE [SEED]
--
-- MODE `seq` walks FILE in order (each wrk thread from its own offset) and
-- wraps around: that replays urls_hot.txt's 80/20 mix exactly. MODE `random`
-- picks a uniformly random line per request (fixed seed, so every run sends
-- the same sequence). Requests are formatted once in init(), so the load
-- generator spends its time on sockets, not on building strings.
--
-- done() prints one machine-readable line that bench/rps.sh parses:
--   RESULT requests=.. duration_us=.. bytes=.. connect=.. read=.. write=..
--          status=.. timeout=.. p50_us=.. p99_us=.. p999_us=..
-- (`status` counts responses with a status >= 400, as wrk does.)

local requests = {}
local count = 0
local mode = "seq"
local next_index = 0
local thread_no = 0

function setup(thread)
   thread:set("thread_no", thread_no)
   thread_no = thread_no + 1
end

function init(args)
   local file = args[1]
   mode = args[2] or "seq"
   local seed = tonumber(args[3] or "12345")
   if file == nil then
      error("usage: wrk ... -s urls.lua URL -- FILE [seq|random] [SEED]")
   end
   wrk.headers["Accept-Encoding"] = "gzip"
   for line in io.lines(file) do
      if #line > 0 then
         count = count + 1
         requests[count] = wrk.format("GET", line)
      end
   end
   if count == 0 then
      error("no URLs in " .. file)
   end
   math.randomseed(seed + 7919 * thread_no)
   next_index = (thread_no * 7919) % count
end

function request()
   if mode == "random" then
      return requests[math.random(count)]
   end
   next_index = next_index % count + 1
   return requests[next_index]
end

function done(summary, latency, _)
   local e = summary.errors
   io.write(string.format(
      "RESULT requests=%d duration_us=%d bytes=%d connect=%d read=%d write=%d status=%d timeout=%d p50_us=%d p99_us=%d p999_us=%d\n",
      summary.requests, summary.duration, summary.bytes,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
