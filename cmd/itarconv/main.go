// Command itarconv indexes tar shards for random access (TARIDX) and
// converts datasets between formats. See README.md.
package main

import (
	"os"

	"github.com/itarconv/itarconv/cmd/itarconv/cli"
)

func main() {
	quietCrashes()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
