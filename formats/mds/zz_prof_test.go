package mds_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/itarconv/itarconv/formats/registry"
)

func TestZZProf(t *testing.T) {
	src := os.Getenv("MDS_PROF_SRC")
	if src == "" {
		t.Skip()
	}
	out := t.TempDir() + "/out"
	start := time.Now()
	ds := open(t, "tar", src)
	convert(t, ds, "mds", out, registry.CreateOptions{Workers: 2})
	t.Logf("to mds %v", time.Since(start))
	start = time.Now()
	convert(t, open(t, "mds", out), "tar", out+".tar", registry.CreateOptions{Workers: 2})
	t.Logf("to tar %v", time.Since(start))
	_ = context.Background
}
