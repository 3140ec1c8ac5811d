//go:build !linux

package pgtest

import "syscall"

// sysProcAttr: outside Linux a child is stopped only by its test's cleanup.
func sysProcAttr() *syscall.SysProcAttr { return nil }
