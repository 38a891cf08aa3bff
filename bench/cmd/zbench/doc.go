// Command zbench measures conversions of compressed tar shards against the
// route a user takes without itarconv's decompression: decompress every
// shard with the codec's own tool into plain files, two at a time, then
// convert those.
//
//	go run ./bench/cmd/zbench [-dir DIR] [-reps N] [-quick]
//
// It prints, side by side in one run, page cache warm:
//
//   - decompression throughput on one core: `gzip -dc` and `zstd -dc` of
//     every shard to /dev/null against itarconv's decoders
//     (formats/compressed) doing the same in this process;
//   - each conversion of the gzip and zstd shards (to TBL, to Barecat, to an
//     indexed fold of plain tar) against the two-step route, both with two
//     shards decompressing at once (itarconv --workers 2; xargs -P 2).
//
// The target: each conversion takes at most the two-step route's time
// (ratio <= 1.00). A missed target prints FAIL and still exits 0; a tool
// that fails, or an output that does not hold every member, exits 1.
//
// It is for development benchmarks only: no product package imports it.
package main
