// Package gctune paces the garbage collector of the cdclog binary: a heap
// goal of at least 64 MiB from the start, then GOGC alone (Tune).
package gctune
