package safefile

// A file written front to back into blocks the file system allocates as
// the writes come (ext4's delayed allocation) costs the writer about
// twice the system time of one written into blocks reserved beforehand.
// ReserveAhead reserves ahead of the writes, a step at a time, the file's
// size left as written; Commit frees what was reserved past the end.

// reserveStep is how far ahead of the writes blocks are reserved.
const reserveStep = 64 << 20

// ReserveAhead tells f that its bytes up to end are about to be written:
// blocks are reserved through end and a step beyond, where the file
// system can (elsewhere it does nothing).
func (f *File) ReserveAhead(end int64) {
	if f.done || end <= f.reserved {
		return
	}
	to := end + reserveStep
	if reserve(f.File, f.reserved, to-f.reserved) {
		f.reserved = to
	}
}
