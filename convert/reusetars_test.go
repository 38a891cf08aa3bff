package convert

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
)

// TestReuseTarsRefuses: a wrapped archive whose index no longer matches
// its tars is refused at the file concerned (a size that is not its
// member's; an offset past every member's payload), a canceled context
// stops the check, and no index is written.
func TestReuseTarsRefuses(t *testing.T) {
	const deep = "deep/%" // the one file of the second tar
	for _, tt := range []struct {
		name, stmt string
		canceled   bool
		want       string
	}{
		{"size", "UPDATE files SET size = 2999 WHERE path LIKE '" + deep + "'", false, "(2999 bytes): the tar member at offset"},
		{"offset", "UPDATE files SET offset = offset + 512 WHERE path LIKE '" + deep + "'", false, "no regular tar member's payload starts at offset"},
		{"canceled", "", true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, shards := sampleShards(t)
			out := filepath.Join(t.TempDir(), "w.barecat")
			if _, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{Wrap: true}); err != nil {
				t.Fatal(err)
			}
			if tt.stmt != "" {
				db, err := sql.Open("sqlite", out)
				if err != nil {
					t.Fatal(err)
				}
				_, err = db.Exec(tt.stmt)
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			a, err := barecat.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ctx, cancel := context.WithCancel(context.Background())
			if tt.canceled {
				cancel()
			}
			defer cancel()
			idx := filepath.Join(t.TempDir(), "train.taridx")
			_, err = ReuseTars(ctx, a, idx, fold.IndexOptions{})
			switch {
			case tt.canceled:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want context.Canceled", err)
				}
			case err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "deep/er/"):
				t.Fatalf("got %v, want %q naming the file", err, tt.want)
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(idx), "*")); len(m) != 0 {
				t.Errorf("left %v", m)
			}
		})
	}
}
