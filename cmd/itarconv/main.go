package main

import (
	"os"

	"github.com/itarconv/itarconv/cmd/itarconv/cli"
	// Before any other package of the command is initialized: see its
	// documentation.
	_ "github.com/itarconv/itarconv/cmd/itarconv/internal/quietcrash"
)

func main() {
	cli.HeapFloor = 32 << 20
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
