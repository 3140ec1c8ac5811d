package pgtest

import "syscall"

// sysProcAttr makes a child the tests start die with the test binary, so an
// interrupted run leaves no pooler behind holding its port.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
