// Package bench holds itarconv's development benchmarks: the Go benchmarks
// of this package and the helpers the commands under bench/cmd share
// (indexbench times the itarconv binary against GNU tar in the same run).
// The shard generator lives in formatcompare/shardgen, product code that
// "itarconv bench --synthetic" uses too; nothing in the binary imports this
// package.
//
// It is for development benchmarks only: no product package imports it.
package bench
