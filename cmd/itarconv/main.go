package main

import (
	"os"

	"github.com/itarconv/itarconv/cmd/itarconv/cli"
)

func main() {
	quietCrashes()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
