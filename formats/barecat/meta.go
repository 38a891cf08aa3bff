package barecat

import "context"

// File type bits of a stat mode, as barecat stores a file's or a
// directory's mode when it took it from the file system (from a tar it
// stores the permission bits alone).
const (
	modeTypeMask = 0o170000
	modeRegular  = 0o100000
	modeDir      = 0o040000
	maxID        = 1<<32 - 1 // uid_t and gid_t are 32 bits
)

// CheckFile checks a file's stored mode, uid and gid: a uid or gid is 0
// to 2^32-1, and a mode is permission bits (0 to 07777, set-id and sticky
// bits included: they are the file's own, and a tar keeps them), with at
// most the regular-file type bits. Any other mode (negative, bits above
// the type, the type of a directory, a link or a device) is refused
// rather than cut to its low 12 bits, which would make up permissions,
// set-id bits among them, that the row does not have. NULL is fine.
func (a *Archive) CheckFile(f File) error {
	return checkMeta(a.indexPath, f.Path, false, f.Mode, f.HasMode, f.UID, f.HasUID, f.GID, f.HasGID)
}

// CheckDir checks a directory's stored mode, uid and gid as CheckFile
// does, the type bits allowed being a directory's.
func (a *Archive) CheckDir(d Dir) error {
	return checkMeta(a.indexPath, d.Path, true, d.Mode, d.HasMode, d.UID, d.HasUID, d.GID, d.HasGID)
}

func checkMeta(index, path string, dir bool, mode int64, hasMode bool, uid int64, hasUID bool, gid int64, hasGID bool) error {
	kind, typ := "file", int64(modeRegular)
	if dir {
		kind, typ = "directory", modeDir
	}
	if hasMode && (mode < 0 || mode > modeTypeMask|0o7777 || mode&modeTypeMask != 0 && mode&modeTypeMask != typ) {
		return newErr(index, path, ErrBadRow, "%s row: mode %d: want permission bits 0 to 0o7777, with at most the type bits of a %s (0o%o)",
			kind, mode, kind, typ)
	}
	if hasUID && (uid < 0 || uid > maxID) {
		return newErr(index, path, ErrBadRow, "%s row: uid %d: want 0 to %d", kind, uid, int64(maxID))
	}
	if hasGID && (gid < 0 || gid > maxID) {
		return newErr(index, path, ErrBadRow, "%s row: gid %d: want 0 to %d", kind, gid, int64(maxID))
	}
	return nil
}

// clashQuery lists the paths that are both a directory and a file: one
// lookup in the files' path index per directory (directories are few).
const clashQuery = `SELECT d.path FROM dirs AS d WHERE EXISTS (SELECT 1 FROM files AS f WHERE f.path = d.path) ORDER BY d.path`

// CheckClash returns an ErrConflict error naming the first path that is
// both a directory row and a file row, or nil.
func (a *Archive) CheckClash(ctx context.Context) error {
	var first string
	found := false
	err := a.queryStrings(ctx, clashQuery+` LIMIT 1`, func(p string) { first, found = p, true })
	if err != nil {
		return err
	}
	if found {
		return newErr(a.indexPath, first, ErrConflict, "both a directory row and a file row")
	}
	return nil
}
