-- lua_work.lua - the workload of bench/bench-lua.sh: table inserts, string
-- building, recursion and sorting, about a second uninstrumented.
local scale = tonumber(arg and arg[1]) or 1
local checksum = 0

-- table inserts, array and hash parts
for round = 1, 4 * scale do
	local t, h = {}, {}
	for i = 1, 200000 do
		t[#t + 1] = i * 2
		h["k" .. (i % 5000)] = i
	end
	checksum = checksum + #t + h.k42
end

-- string building: concatenation, formatting, table.concat, gsub
for round = 1, 3 * scale do
	local parts = {}
	for i = 1, 60000 do
		parts[#parts + 1] = string.format("%d:%s", i, tostring(i * 3))
	end
	local s = table.concat(parts, ",")
	local n = 0
	s:gsub("%d+", function() n = n + 1 end)
	checksum = checksum + n + #s:upper():sub(1, 100)
end

-- recursion
local function fib(n)
	if n < 2 then
		return n
	end
	return fib(n - 1) + fib(n - 2)
end
checksum = checksum + fib(24 + scale)

-- sorting, with the default order and with a comparator
for round = 1, 2 * scale do
	local a, b = {}, {}
	for i = 1, 100000 do
		a[i] = (i * 7919) % 100003
		b[i] = { key = (i * 104729) % 1000003, name = "n" .. i }
	end
	table.sort(a)
	table.sort(b, function(x, y) return x.key < y.key end)
	checksum = checksum + a[1] + b[1].key
end

print("checksum " .. checksum)
