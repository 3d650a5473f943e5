//go:build !linux

package prealloc

import "os"

// New returns an Ahead that reserves nothing on this system.
func New(*os.File) *Ahead { return &Ahead{off: true} }

// Ensure does nothing on this system.
func (a *Ahead) Ensure(int64) {}

// Release does nothing on this system.
func (a *Ahead) Release() error { return nil }

// Reserved reports false: nothing is reserved on this system.
func (a *Ahead) Reserved() bool { return false }

// Stat returns an error on this system: there is nothing to reserve.
func (a *Ahead) Stat() (os.FileInfo, error) { return nil, os.ErrInvalid }

// Reset does nothing on this system.
func (a *Ahead) Reset(int64) {}
