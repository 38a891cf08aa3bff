package main

import (
	"os"

	"github.com/itarconv/itarconv/cmd/itarconv/cli"
	"github.com/itarconv/itarconv/internal/gcfloor"
	// Before any other package of the command is initialized: see its
	// documentation.
	_ "github.com/itarconv/itarconv/cmd/itarconv/internal/quietcrash"
)

// gcFloor is the least heap goal of the command's collector: see package
// gcfloor.
const gcFloor = 64 << 20

func main() {
	gcfloor.Start(gcFloor)
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
