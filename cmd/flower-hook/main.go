// Command flower-hook is flower's guard binary: Claude Code runs it once per
// tool call as a command hook (`flower-hook GUARD [flags]`, hook input on
// stdin, hook output on stdout). All logic lives in package hooks; see its
// documentation and design.md §3 for the guards, flags and exit codes.
package main

import "os"

import "github.com/flowerhq/flower/hooks"

func main() {
	os.Exit(hooks.Main(os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
