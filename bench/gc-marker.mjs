// Preloaded into a bench server by bench/gc-per-request.ts (with --allow-natives-syntax): on SIGUSR2 prints a marker
// through V8's own stdout stream, the one --trace-gc-nvp writes to, so the markers and the GC lines keep their order.
// That stream is block-buffered into a pipe: the marker is padded past the buffer's size, so whatever the stream
// held before it is written out with it (and nothing of the window is left in the buffer at the second marker).
const mark = new Function(`%DebugPrint("GC-WINDOW-MARKER${'.'.repeat(16384)}")`);
process.on('SIGUSR2', () => mark());
