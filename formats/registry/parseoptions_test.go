package registry_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TestParseOptions: each format makes its own typed options of the flags'
// values, for the side it is on: the one way they reach a conversion.
func TestParseOptions(t *testing.T) {
	v := defaults()
	for k, x := range map[string]string{"fold": "val", "ignore-zeros": "true", "wrap": "true", "crc": "true", "on-duplicate": "last",
		"reuse-tars": "true", "cells-per-shard": "7", "tbl-version": "1", "lz4": "true", "no-names": "true", "compat": "turboloader"} {
		v[k] = x
	}
	scan := tarfile.Options{IgnoreZeros: true}
	for _, c := range []struct {
		format string
		dir    registry.Direction
		want   any
	}{
		{"tar", registry.Read, fold.OpenOptions{Fold: "val", Scan: scan}},
		{"tar", registry.Write, fold.CreateOptions{Fold: "val"}},
		{"barecat", registry.Read, barecat.OpenOptions{ReuseTars: true, Scan: scan}},
		{"barecat", registry.Write, barecat.CreateOptions{Wrap: true, CRC: true, OnDuplicate: "last"}},
		{"scdl", registry.Read, scdl.OpenOptions{CellsPerShard: 7}},
		{"scdl", registry.Write, nil},
		{"tbl", registry.Read, nil},
		{"tbl", registry.Write, tbl.RowsOptions{Version: 1, LZ4: true, NoNames: true, Compat: "turboloader"}},
	} {
		f := registry.Lookup(c.format)
		if f.ParseOptions == nil {
			t.Errorf("%s: no ParseOptions", c.format)
			continue
		}
		got, err := f.ParseOptions(c.dir, v)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ParseOptions(%d) = %#v, %v; want %#v", c.format, c.dir, got, err, c.want)
		}
	}
}

// TestTarOnlyOptions: wrapping and TurboLoader's selection apply to tar
// shards converted in place; a format writing rows refuses them before
// reading one, rather than writing without them.
func TestTarOnlyOptions(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		format string
		opts   any
		want   error
	}{
		{"barecat", barecat.CreateOptions{Wrap: true}, barecat.ErrTarOnly},
		{"barecat", &barecat.CreateOptions{OnDuplicate: "first"}, barecat.ErrTarOnly},
		{"tbl", tbl.RowsOptions{Compat: "turboloader"}, tbl.ErrCompat},
	} {
		f := registry.Lookup(c.format)
		_, err := f.Create(context.Background(), noRows{t}, filepath.Join(dir, c.format+".out"), registry.CreateOptions{Format: c.opts})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Create with %+v: %v, want %v", c.format, c.opts, err, c.want)
		}
		_, err = f.CreatePart(context.Background(), noRows{t}, t.TempDir(), registry.CreateOptions{Format: c.opts})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: CreatePart with %+v: %v, want %v", c.format, c.opts, err, c.want)
		}
	}
}
