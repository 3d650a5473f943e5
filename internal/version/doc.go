// Package version says what the cdclog binary knows of its own build:
// the module version, the commit and the Go version (Read), as 'cdclog
// version' prints them.
package version
