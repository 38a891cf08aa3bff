package ratarmount

import (
	"errors"
)

// Suffix follows an archive's name to name its index.
const Suffix = ".index.sqlite"

// IndexPath names an archive's index as ratarmount looks for it first:
// beside the archive, its name followed by ".index.sqlite".
func IndexPath(archive string) string { return archive + Suffix }

// Versions this package writes and reads.
const (
	// IndexVersion is the version of the index layout, the "index" row of
	// table versions.
	IndexVersion = "0.7.0"
	// ToolVersion is the ratarmount-core release whose index this package
	// writes, the "ratarmount" row of table versions.
	ToolVersion = "0.11.1"
	// BackendName is the metadata "backendName" of an index of a tar archive.
	BackendName = "SQLiteIndexedTar"
)

// Arguments is the metadata "arguments" of an index built with
// ratarmount's defaults, as Python's json.dumps writes them: the options
// that change what the index holds (SQLiteIndexedTar.INDEX_ARGUMENTS_TO_CHECK,
// in that order, then gzipSeekPointSpacing). ratarmount compares the first
// seven with its own options when it loads the index, and only warns when
// they differ.
const Arguments = `{"mountRecursively": false, "encoding": "utf-8", "stripRecursiveTarExtension": false, ` +
	`"transformRecursiveMountPoint": null, "transformPattern": null, "ignoreZeros": false, "hashes": [], ` +
	`"gzipSeekPointSpacing": 16777216}`

var (
	// ErrFormat: a file that is not an index of this layout: not SQLite,
	// another schema, another index version or another backend.
	ErrFormat = errors.New("not a ratarmount SQLiteIndexedTar index (version 0.7)")
	// ErrEmpty: an archive of no member: ratarmount writes no index for it
	// ("Tarfile returned nothing"), and could not load one.
	ErrEmpty = errors.New("archive has no member: ratarmount indexes no empty archive")
	// ErrUnsupported: a member whose row this package cannot compute as
	// ratarmount does.
	ErrUnsupported = errors.New("member not supported by the ratarmount index writer")
	// ErrStale: an index that does not describe the archive as it is now.
	ErrStale = errors.New("ratarmount index does not match the archive")
)
