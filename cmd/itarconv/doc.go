// Command itarconv indexes tar shards for random access (TARIDX) and
// converts datasets between formats. See README.md.
//
// Nothing imports it.
package main
