// Command hookinbox is the operators' command line for hookinbox.
//
// Usage:
//
//	hookinbox SUBCOMMAND [flags]
//
// Subcommands:
//
//	send   sign a realistic sample delivery of a catalog provider and post it
//	help   print this help, or a subcommand's
//
// Run "hookinbox help SUBCOMMAND" for a subcommand's flags. Exit codes: 0
// on success, 1 when the work failed (for send: the endpoint answered
// other than 2xx, or could not be reached), 2 on a usage error.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// env is what a subcommand may touch.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	// run runs the subcommand with its arguments; usage prints its flags.
	run   func(args []string, e env) int
	usage func(w io.Writer)
}

// commands is the subcommand table, in the order help lists it. Other
// subcommands (migrate, stats, dead-letters, …) join it here.
var commands []command

func init() {
	commands = []command{
		{name: "send", summary: "sign a realistic sample delivery of a catalog provider and post it", run: runSend, usage: sendUsage},
		{name: "help", summary: "print this help, or a subcommand's (hookinbox help send)", run: runHelp, usage: usage},
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func run(args []string, e env) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "-help" || name == "--help" {
		name = "help"
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(e.stderr, "hookinbox: unknown subcommand %q\n\n", args[0])
		usage(e.stderr)
		return exitUsage
	}
	return c.run(args[1:], e)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: hookinbox SUBCOMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Subcommands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run \"hookinbox help SUBCOMMAND\" for its flags. Exit codes: 0 success, 1 failure, 2 usage error.")
}

func runHelp(args []string, e env) int {
	if len(args) == 0 {
		usage(e.stdout)
		return exitOK
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(e.stderr, "hookinbox help: unknown subcommand %q (subcommands: %s)\n", args[0], names())
		return exitUsage
	}
	c.usage(e.stdout)
	return exitOK
}

func names() string {
	out := make([]string, len(commands))
	for i, c := range commands {
		out[i] = c.name
	}
	return strings.Join(out, ", ")
}
