//go:build !unix

package fold

import "os"

// dupFile: none here; ShardFile opens the shard again.
func dupFile(*os.File) (*os.File, error) { return nil, nil }
