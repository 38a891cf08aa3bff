package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/itarconv/itarconv/bench"
)

// scdlEnv makes the program an SCDL generator: the archive is written by a
// child process so that this one stays small. A child starts sharing its
// parent's memory until exec, and Linux may count the parent's pages in the
// child's peak RSS: a large parent could inflate the figures.
const scdlEnv = "MEMBENCH_GENERATE_SCDL"

// generateChild, in a child started by prepareSCDL, writes the archive its
// environment asks for and tells the exit status; ok is false in any other
// process.
func generateChild() (status int, ok bool) {
	dir := os.Getenv(scdlEnv)
	if dir == "" {
		return 0, false
	}
	cells, err := strconv.Atoi(os.Getenv(scdlEnv + "_CELLS"))
	if err == nil {
		err = bench.GenerateSCDL(dir, cells, valuesPerCell)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "membench: generating %s: %v\n", dir, err)
		return 1, true
	}
	return 0, true
}

// prepareSCDL makes sure base holds an SCDL archive of cells cells: it
// reuses one when the stamp beside it (written once the archive was
// complete) says so, and otherwise generates it in a child process.
func prepareSCDL(base string, cells int) (dir string, reused bool, err error) {
	dir = filepath.Join(base, fmt.Sprintf("membench-scdl-%d", cells))
	stamp := dir + ".json"
	want, _ := json.Marshal(map[string]int{"cells": cells, "values_per_cell": valuesPerCell})
	if b, err := os.ReadFile(stamp); err == nil && string(b) == string(want) {
		if _, err := os.Stat(filepath.Join(dir, "header.sch")); err == nil {
			return dir, true, nil
		}
	}
	os.Remove(stamp)
	if err := os.RemoveAll(dir); err != nil {
		return "", false, err
	}
	self, err := os.Executable()
	if err != nil {
		return "", false, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), scdlEnv+"="+dir, scdlEnv+"_CELLS="+strconv.Itoa(cells))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", false, fmt.Errorf("generating the SCDL archive %s: %w", dir, err)
	}
	return dir, false, os.WriteFile(stamp, want, 0o644)
}
