package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// serialFraction estimates by Amdahl's law the share s of a job that does
// not run in parallel, from its time t1 on one worker and tn on n: with
// T(n) = T(1)*(s + (1-s)/n), s = (T(n)/T(1) - 1/n) / (1 - 1/n). Noise can
// put the raw estimate outside [0, 1]; it is clamped there, since a job
// neither gains more than n-fold nor loses time to parallelism in the law.
func serialFraction(t1, tn float64, n int) float64 {
	if n < 2 || t1 <= 0 {
		return 0
	}
	inv := 1 / float64(n)
	s := (tn/t1 - inv) / (1 - inv)
	return min(max(s, 0), 1)
}

// serialNsPerMember is the serial part's time per member, in ns: the
// serial fraction of the one-worker time, spread over the members.
func serialNsPerMember(t1, tn float64, n, members int) float64 {
	if members <= 0 {
		return 0
	}
	return serialFraction(t1, tn, n) * t1 / float64(members) * 1e9
}

// defaultWorkers is 1, 2, 4, ... up to cores, and cores itself when it is
// not a power of two.
func defaultWorkers(cores int) []int {
	var ws []int
	for w := 1; w < cores; w *= 2 {
		ws = append(ws, w)
	}
	return append(ws, max(cores, 1))
}

// parseWorkers reads a -workers list such as "1,2,8": positive, distinct,
// returned in increasing order.
func parseWorkers(s string) ([]int, error) {
	var ws []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		w, err := strconv.Atoi(f)
		if err != nil || w < 1 {
			return nil, fmt.Errorf("-workers: %q is not a positive number", f)
		}
		if !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("-workers: no worker count in %q", s)
	}
	slices.Sort(ws)
	return ws, nil
}
