package main

import (
	"math"
	"slices"
	"testing"
)

func TestSerialFraction(t *testing.T) {
	for _, tc := range []struct {
		t1, tn float64
		n      int
		want   float64
	}{
		{10, 5, 2, 0},      // perfect scaling
		{10, 10, 2, 1},     // no gain
		{10, 6, 2, 0.2},    // 0.2 + 0.8/2 = 0.6
		{10, 3.25, 4, 0.1}, // 0.1 + 0.9/4 = 0.325
		{10, 12, 2, 1},     // slower: clamped
		{10, 4, 2, 0},      // superlinear: clamped
		{10, 7, 1, 0},      // one worker tells nothing
	} {
		if got := serialFraction(tc.t1, tc.tn, tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("serialFraction(%v, %v, %d) = %v, want %v", tc.t1, tc.tn, tc.n, got, tc.want)
		}
	}
	// 1 s on one worker over 1M members, a fifth serial: 200 ns a member.
	if got := serialNsPerMember(1, 0.6, 2, 1_000_000); math.Abs(got-200) > 1e-6 {
		t.Errorf("serialNsPerMember = %v, want 200", got)
	}
}

func TestWorkers(t *testing.T) {
	for cores, want := range map[int][]int{1: {1}, 2: {1, 2}, 6: {1, 2, 4, 6}, 16: {1, 2, 4, 8, 16}} {
		if got := defaultWorkers(cores); !slices.Equal(got, want) {
			t.Errorf("defaultWorkers(%d) = %v, want %v", cores, got, want)
		}
	}
	got, err := parseWorkers(" 4,1,2,1 ")
	if err != nil || !slices.Equal(got, []int{1, 2, 4}) {
		t.Errorf("parseWorkers = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "2,x", "-1"} {
		if _, err := parseWorkers(bad); err == nil {
			t.Errorf("parseWorkers(%q) took it", bad)
		}
	}
}
