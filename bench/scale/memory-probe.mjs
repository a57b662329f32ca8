// Preloaded into a replica by bench/tenants-memory.ts (`node --import`): on SIGWINCH it appends one JSON line to
// $MEMPROBE_FILE with process.memoryUsage(), v8.getHeapStatistics() and v8.getHeapSpaceStatistics() (committed,
// used and physical size per space), and the resident bytes of the process's mappings from /proc/self/smaps
// (the brk heap, other anonymous mappings, files). `other` is RSS minus the V8 heap's physical size and array buffers.
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.MEMPROBE_FILE;
const mib = (bytes) => Math.round((bytes / 1048576) * 10) / 10;

function mappings() {
  const resident = { heapSeg: 0, anon: 0, file: 0 };
  let kind = 'file';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      const path = line.trim().split(/\s+/)[5];
      kind = path === '[heap]' ? 'heapSeg' : path === undefined || path.startsWith('[') ? 'anon' : 'file';
    } else if (line.startsWith('Rss:')) resident[kind] += Number(line.split(/\s+/)[1]) * 1024;
  }
  return Object.fromEntries(Object.entries(resident).map(([key, bytes]) => [key, mib(bytes)]));
}

// With MEMPROBE_DETAIL=1 also the 30 largest mappings by resident size (address range, size, Rss, path) and the
// process's threads by name: which of the anonymous pages are V8's spaces, malloc arenas or a thread's stack.
function largest() {
  const rows = [];
  let current;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      const parts = line.trim().split(/\s+/);
      const [from, to] = parts[0].split('-').map((hex) => Number.parseInt(hex, 16));
      current = { range: parts[0], perms: parts[1], size: mib(to - from), rss: 0, path: parts[5] ?? '' };
      rows.push(current);
    } else if (line.startsWith('Rss:') && current) current.rss = mib(Number(line.split(/\s+/)[1]) * 1024);
  }
  return rows.sort((a, b) => b.rss - a.rss).slice(0, 30);
}

function threads() {
  const names = {};
  for (const task of readdirSync('/proc/self/task')) {
    const name = readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim();
    names[name] = (names[name] ?? 0) + 1;
  }
  return names;
}

function sample(label) {
  const usage = process.memoryUsage();
  const heap = v8.getHeapStatistics();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, { size: mib(space.space_size), used: mib(space.space_used_size), phys: mib(space.physical_space_size) }]));
  const line = { label, t: Math.round(process.uptime() * 10) / 10, rss: mib(usage.rss), heapTotal: mib(usage.heapTotal), heapUsed: mib(usage.heapUsed), external: mib(usage.external), arrayBuffers: mib(usage.arrayBuffers), physHeap: mib(heap.total_physical_size), malloced: mib(heap.malloced_memory), peakMalloced: mib(heap.peak_malloced_memory), spaces, smaps: mappings() };
  line.other = Math.round((line.rss - line.physHeap - line.arrayBuffers) * 10) / 10;
  if (process.env.MEMPROBE_DETAIL) Object.assign(line, { largest: largest(), threads: threads() });
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

let samples = 0;
if (file) process.on('SIGWINCH', () => sample(`sample ${++samples}`));
