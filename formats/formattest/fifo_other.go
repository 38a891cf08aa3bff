//go:build !unix

package formattest

import "errors"

const canFIFO = false

func mkfifo(string) error { return errors.New("no FIFOs here") }

func unblock(string) {}
