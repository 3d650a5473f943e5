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
	// ErrNotExist: an open that may not create found no database at the
	// path: no file, or one that holds no committed cdclog state.
	ErrNotExist = errors.New("no database at this path")
	// ErrReplaced: Update on a DB whose file Replace has replaced. The
	// new file is at the path; open it again.
	ErrReplaced = errors.New("the database file was replaced; open it again")
)
