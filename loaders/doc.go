// Package loaders writes and checks other data loaders' indexes of tar
// shards (energon's, wids', DALI's, ratarmount's) from the same pass over
// the shards' headers as a fold's TARIDX. Each loader is a plug-in, a
// package of its own under loaders/ that registers a Plugin in init: how
// to write its indexes (a Loader, gathered in a Set that a fold's pass
// feeds through fold.IndexOptions.Loaders) and how to tell and check the
// files it writes (Detect, Check). Package loaders/all imports them all.
//
// It stands above fold (whose scans it uses: fold.TarShards, MemberSink)
// and the formats/ packages that know the files' bytes; it must import
// nothing under cmd/, bench, convert or testing/, and fold must never
// import it.
package loaders
