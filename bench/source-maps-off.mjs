// Imported after tsx by the bench's worker processes, in every thread: the shipped worker runs on
// plain Node, where source maps are off, but tsx turns them on, and with them every stack trace
// the SDK takes for a workflow promise is mapped once more by Node (docs/benchmarks.md).
process.setSourceMapsEnabled(false);
