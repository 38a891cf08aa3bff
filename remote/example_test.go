package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/itarconv/itarconv/remote"
)

// Read a range of a shard where it lives: one ranged GET, checked against
// the file's size and ETag. An index over URL shards (fold.BuildIndex
// given URLs) reads their headers the same way, through the Client in
// the context.
func Example() {
	shard := bytes.Repeat([]byte("0123456789"), 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "shard-000000.tar", time.Time{}, bytes.NewReader(shard))
	}))
	defer srv.Close()

	client := remote.NewClient(remote.Options{Connections: 4})
	ctx := remote.WithClient(context.Background(), client)
	f, err := client.Open(ctx, srv.URL+"/shard-000000.tar")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 5)
	if _, err := f.ReadAt(buf, 512); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes, ETag %s; at 512: %s\n", f.Size(), f.ETag(), buf)
	// Output: 1000 bytes, ETag "v1"; at 512: 23456
}
