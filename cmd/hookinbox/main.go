// Command hookinbox is the operators' command line for hookinbox.
//
// Usage:
//
//	hookinbox SUBCOMMAND [flags]
//
// Subcommands:
//
//	send          sign a realistic sample delivery of a catalog provider and post it
//	migrate       create the inbox's tables, or bring them up to date
//	stats         count the inbox's items by state, the backlog, and dead letters by provider and type
//	dead-letters  list dead letters (or closed ones), newest first, with filters and paging
//	show          show one item: its state, attempts, audit trail and quarantined deliveries
//	replay        replay one item, or the dead letters a query selects, audited with an actor and a reason
//	close         close one dead letter on purpose, audited with an actor and a reason
//	pause         pause a handler over every processor, audited with an actor and a reason
//	resume        resume a paused handler, audited with an actor and a reason
//	pauses        list the handlers' pauses in force, then those that ended: who paused, why, and who resumed
//	purge         delete old succeeded items, old closed dead letters and expired replay keys (retention)
//	help          print this help, or a subcommand's
//
// The subcommands after send work on a pgstore inbox: each takes -dsn (or
// $DATABASE_URL) and -schema (default "webhooks"), and one item is named by
// -provider, -tenant (default none: the item of no tenant) and -event-id.
// An event has one job per handler (webhooks.Handlers): -handler names one
// handler's job (show prints every job), selects one handler's dead letters
// (-handler ” the default handler's), and replay -to-handler replays
// events to another handler; stats counts each handler's jobs and lists
// the held ordering keys.
//
// Run "hookinbox help SUBCOMMAND" for a subcommand's flags.
//
// What the inbox holds comes from outside, so text output escapes its
// control and bidirectional characters (\x1b, \u202e) rather than let them
// reach the terminal; -json prints the data as it is, JSON-escaped. show
// prints payloads and stored headers only with -payloads.
//
// Exit codes:
//
//	0  success
//	1  the work failed: for send, the endpoint answered other than 2xx or
//	   could not be reached; for the others, the database failed while
//	   working, or the schema holds no inbox (run migrate)
//	2  usage error: a bad flag or value, a cursor the store did not make
//	3  not found: no item with that provider, tenant and event ID
//	4  refused: the item's state does not allow it (closing an item that
//	   is not a dead letter, replaying one that is pending or running),
//	   or resuming a handler that is not paused
//	5  unavailable: the database could not be reached, or did not answer
//	   within -timeout; trying again later may work
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hookinbox/webhooks/pgstore"
)

func main() {
	os.Exit(run(os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// Exit codes (see the package documentation).
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitNotFound    = 3
	exitRefused     = 4
	exitUnavailable = 5
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

// commands is the subcommand table, in the order help lists it.
var commands []command

func init() {
	commands = []command{
		{name: "send", summary: "sign a realistic sample delivery of a catalog provider and post it", run: runSend, usage: sendUsage},
		migrateCmd.command(),
		statsCmd.command(),
		deadLettersCmd.command(),
		showCmd.command(),
		replayCmd.command(),
		closeCmd.command(),
		pauseCmd.command(),
		resumeCmd.command(),
		pausesCmd.command(),
		purgeCmd.command(),
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
	fmt.Fprintln(w, "Every subcommand but send and help works on a pgstore inbox: -dsn (or")
	fmt.Fprintln(w, "$DATABASE_URL) and -schema (default \""+pgstore.DefaultSchema+"\") say which; one item is named by")
	fmt.Fprintln(w, "-provider, -tenant (default none) and -event-id, and one handler's job of it by")
	fmt.Fprintln(w, "-handler (default the default handler).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run \"hookinbox help SUBCOMMAND\" for its flags.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 success, 1 failure, 2 usage error, 3 item not found, 4 refused by the")
	fmt.Fprintln(w, "item's state, 5 database unavailable (try again later).")
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
