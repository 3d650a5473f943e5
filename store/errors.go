package store

import "errors"

// Errors callers tell apart. Open wraps them with the path.
var (
	// ErrLocked: another process holds the database.
	ErrLocked = errors.New("database is locked by another process")
	// ErrForeign: the file is not a cdclog database (not bbolt at all, or
	// a bbolt database of another program).
	ErrForeign = errors.New("not a cdclog database")
	// ErrNewerSchema: the database was written by a newer cdclog.
	ErrNewerSchema = errors.New("database schema is newer than this cdclog")
	// ErrCorrupt: the database is damaged.
	ErrCorrupt = errors.New("database is corrupt")
	// ErrNotExist: a read-only open found no database at the path.
	ErrNotExist = errors.New("no database at this path")
)
