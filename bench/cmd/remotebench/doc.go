// Command remotebench measures reading tar shards over HTTP, as from a
// remote object store: itarconv given the shards' URLs, against
// downloading the same shards with curl, side by side in one run, both
// through the same link.
//
//	go run ./bench/cmd/remotebench [-dir DIR] [-reps N] [-quick] [-rtt 20ms,50ms,100ms] [-rate 50] [-connections 8]
//		[-small N] [-sizes 4MiB,64MiB] [-large-shard 256MiB] [-quiet-wait D] [-no-urls] [-bin ITARCONV]
//
// The shards are served by the standard library's file server, started in
// this program on loopback over -dir, behind testing/netproxy, which
// makes it look remote: each response waits one round trip (-rtt) before
// its headers, each new connection one more (its handshake), and each
// connection is sent at most -rate MB/s, as object stores cap each
// connection. One proxy runs for each round trip, and every run is
// measured through each. curl (/usr/bin/curl, or the first on $PATH) gets
// the same number of parallel connections as itarconv: `curl --parallel
// --parallel-immediate --parallel-max C` with one URL per shard.
//
// The jobs, for each round trip:
//
//  1. Small members (dataset A scaled to 60,000 members of 1-20 KiB in 8
//     shards, about 650 MiB; bench.DatasetA): every byte has to be read.
//     `itarconv index -q --connections C -o OUT.taridx URL...` against
//     curl downloading the shards to /dev/null. Target: the index within
//     1.1x of the download alone. It must write nothing on the local disk
//     but the index: the bytes it wrote (its rusage's blocks out) and the
//     files left in its output directory and in its $TMPDIR are reported.
//  2. Large members, one set for each of -sizes (8 shards of about
//     -large-shard bytes each, members of that size whose payloads are
//     holes in sparse files, so that generating them is instant):
//     `itarconv index` over the URLs against the download. Targets: the
//     index reads under 5% of the shards' bytes and takes under 0.1x of
//     the download. Each header seek costs a round trip, so 0.1x needs
//     members larger than about 10 x RTT x the rate of a connection (10
//     MB at 20 ms and 50 MB/s, 50 MB at 100 ms): the smaller sizes are
//     there to show where that stops holding, and are reported as they
//     come.
//  3. On the small members again: `itarconv convert -q --connections C
//     URL... OUT.barecat` against curl downloading the shards to local
//     files and then `itarconv convert -q FILES... OUT.barecat`. Target:
//     at most 0.7x of download plus convert, with the disk its copies of
//     the shards take (sampled every 2 ms: files *.plain.tar* beside the
//     output, their allocated blocks) below the shards' size. The floor
//     of that ratio, the download alone over download plus convert, is
//     printed beside it: no convert through the same link beats it.
//
// Reported for each run: the time (median, min-max, over -reps), the body
// bytes the proxy sent (its Stats.BytesToClient; for large members, as a
// share of the shards' bytes), the requests and connections it saw, the
// ratio to the baseline and PASS or FAIL against the target. The outputs
// are checked: an index over URLs must equal, byte for byte, the index of
// the same shards as local files (`itarconv index -q -o X.taridx
// FILES...`, built once, untimed); only the .taridx file is compared, as
// the manifest beside it (.taridx.shards.json) names URLs in one and paths
// in the other. The Barecat archive converted from URLs must have the same
// shards, byte for byte, as the one converted from the downloaded files.
//
// All runs are subprocesses timed by this program (wall clock, process
// start included) in one invocation, so only ratios within a run compare.
// Before each timed step the file system is synced and the served shards
// are read once more, untimed, so that the server reads from the page
// cache. The repetitions are interleaved (each rep runs every step once),
// and each waits for a quiet machine first (-quiet-wait). The server, the
// proxy and curl or itarconv share the machine's cores: the link is
// simulated, not free. The datasets are kept in -dir (default:
// remotebench under the system's temporary directory) and reused by later
// runs. -no-urls skips itarconv's runs over URLs and keeps the rest (the
// baselines, the reference outputs), for a binary that cannot read URLs.
// -bin runs a given itarconv binary instead of building ./cmd/itarconv.
//
// With the defaults it takes several minutes: the baselines alone take
// about a minute and a half for each rep on this project's 2-core machine.
// -quick is a smoke run of seconds: A scaled to 2,000 members, large
// members of 1 and 4 MiB in 16 MiB shards, a round trip of 20 ms, one
// rep, unless those flags are given.
//
// The exit status is non-zero only when something breaks (a command
// fails, or an output differs from its reference). A missed target is a
// measurement: it prints FAIL and still exits 0.
//
// It is for development benchmarks only: no product package imports it.
package main
