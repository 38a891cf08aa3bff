package loaders

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"os"

	"github.com/itarconv/itarconv/fold"
)

// A PartLoader is a Loader whose Finish needs what its indexers kept of
// each shard: a task of a partitioned run saves it with its part, and the
// merge restores it.
type PartLoader interface {
	SaveShard(enc *gob.Encoder, path string) error
	LoadShard(dec *gob.Decoder, path string) error
}

// partHeader starts a part's file: the loaders whose states follow, shard
// by shard, and the counts of the files the task wrote in place.
type partHeader struct {
	Loaders []string
	Shards  []string
	Stats   *Stats
}

// SavePart writes to the file at path what the loaders that span the
// dataset keep of shards, and the counts so far.
func (l *Set) SavePart(path string, shards []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	enc := gob.NewEncoder(bw)
	var names []string
	for _, k := range l.kinds {
		if _, ok := k.(PartLoader); ok {
			names = append(names, k.Name())
		}
	}
	if err := enc.Encode(partHeader{Loaders: names, Shards: shards, Stats: l.Stats()}); err != nil {
		return err
	}
	for _, s := range shards {
		for _, k := range l.kinds {
			if pl, ok := k.(PartLoader); ok {
				if err := pl.SaveShard(enc, s); err != nil {
					return fmt.Errorf("%s: %s: %w", s, k.Name(), err)
				}
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// LoadPart restores what SavePart wrote at path, and counts the part's
// files as this run's.
func (l *Set) LoadPart(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := gob.NewDecoder(bufio.NewReader(f))
	var h partHeader
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("%s: %w: %w", path, fold.ErrPart, err)
	}
	var want []PartLoader
	var names []string
	for _, k := range l.kinds {
		if pl, ok := k.(PartLoader); ok {
			want = append(want, pl)
			names = append(names, k.Name())
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(h.Loaders) {
		return fmt.Errorf("%s: the part kept the states of %v, the merge writes %v: %w", path, h.Loaders, names, fold.ErrPart)
	}
	for _, s := range h.Shards {
		for i, pl := range want {
			if err := pl.LoadShard(dec, s); err != nil {
				return fmt.Errorf("%s: shard %s: %s: %w: %w", path, s, names[i], fold.ErrPart, err)
			}
		}
	}
	l.addStats(h.Stats)
	return nil
}

// addStats counts a part's loaders' files as this run's.
func (l *Set) addStats(st *Stats) {
	if st == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, n := range st.Written {
		l.stats.Written[k] += n
	}
	for k, v := range st.None {
		l.stats.None[k] = append(l.stats.None[k], v...)
	}
}
