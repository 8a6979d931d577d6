// Loaded into the service by `server.mjs --breakdown` (node --import): on SIGUSR2 the main
// thread writes its process.memoryUsage() and V8 heap statistics to stderr as one line, so the
// bench can say which part of the resident set is JavaScript heap, external and ArrayBuffer
// memory, and which is outside V8 (the allocator, PGlite, the workers).
import v8 from 'node:v8';
process.on('SIGUSR2', () => {
  const m = process.memoryUsage();
  const h = v8.getHeapStatistics();
  process.stderr.write(`MEMDUMP ${JSON.stringify({ ...m, heapTotalV8: h.total_heap_size, malloced: h.malloced_memory, external: h.external_memory })}\n`);
});
