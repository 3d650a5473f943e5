package control

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// maxSocketPath is the longest socket address used next to a database:
// Linux's sun_path holds 108 bytes with the terminating NUL, macOS's 104.
const maxSocketPath = 100

// SocketPath returns where the process holding the database at db listens:
// db's absolute path with ".sock" appended, or, when that is too long for
// a socket address, a name derived from it in cdclog-UID under the
// temporary directory.
func SocketPath(db string) (string, error) {
	abs, err := filepath.Abs(db)
	if err != nil {
		return "", err
	}
	if p := abs + ".sock"; len(p) <= maxSocketPath {
		return p, nil
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(os.TempDir(), "cdclog-"+strconv.Itoa(os.Getuid()))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".sock"), nil
}

// listen creates the socket at path, the owner's only: under a temporary
// name, made mode 0600, then renamed into place, so that it is never
// reachable with wider permissions. A socket left at path by a process
// that died is replaced; one that answers is not (ErrInUse).
func listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := staleOrAbsent(path); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // it is renamed; Server.Close removes it
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, err
	}
	return ln, nil
}

// ErrInUse: another process answers on the control socket's path.
var ErrInUse = errors.New("another process answers on the control socket")

// staleOrAbsent removes a socket at path that nothing answers on.
func staleOrAbsent(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket: not replaced", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s: %w", path, ErrInUse)
	}
	return os.Remove(path)
}
