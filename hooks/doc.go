// Package hooks is flower's guard layer: the pure rules behind the
// flower-hook binary that Claude Code runs once per tool call, the hook
// wire types and the best-effort socket reporter. The glance classifier
// (IsEphemeral) lives in package glance; IsEphemeral here forwards to it.
//
// # Lifecycle of one hook call
//
// Claude Code starts `flower-hook GUARD [flags]` (from a settings.json made
// by the harness, from the user's own ~/.claude/settings.json, or from the
// plugin in plugin/), writes the hook input JSON to its stdin and waits.
// Run parses the flags, reads and decodes the input, asks the guard's pure
// rule (Delegate, Whitelist, Fence, Spill, Index, Isolate) for a Decision, writes
// the hook output JSON to stdout, sends one Report line to $FLOWER_SOCKET
// (if set; bounded by reportTimeout, errors ignored) and exits. Nothing is
// kept between calls; the only state is on disk (spill files, INDEX.md).
// flower-hook never waits on the flower Runtime: it decides locally.
//
// # The decision server
//
// A step's delegate, whitelist, fence and isolate calls go through
// flower-hook-lite (internal/hooklite), which links only syscall: it
// forwards the call over $FLOWER_SOCKET, and Answer runs the same guard
// (run, with the hook's environment, working folder and flower-hook path:
// host) in the flower process, which owns the socket. The client trusts
// only the peer $FLOWER_HOOK_SERVER names and execs flower-hook in every
// other case (docs/guards.md).
//
// # Failing closed and open
//
// The CLI runs the tool when a hook crashes, times out or exits with
// anything but 2. The deny guards (delegate, whitelist, fence) therefore catch
// every failure themselves (bad flags, empty, truncated or oversized input,
// a non-object, a panic) and deny with exit 2 and the reason on stderr; and
// the settings and plugin commands that call them go through DenyCommand,
// which turns a missing, non-executable or crashing binary (or any answer
// but flower-hook's own) into exit 2 as well. The transforming guards
// (spill, index, isolate) fail open: they answer {} and the original input
// or output stands; spill and index also refuse to write through a symlink
// or outside the workbench.
//
// # Main thread and subagents
//
// The CLI puts agent_id into hook input only for tool calls made inside a
// subagent (verified on 2.1.328), so Input.IsMainThread is "agent_id is
// absent". delegate and whitelist only ever stop the main thread;
// fence stops both.
//
// # The fence
//
// fence keeps Write/Edit/NotebookEdit inside its roots
// (the workspace, the workbench, --allow-dir) and off its protected paths
// (flower's run dir, flow lock and notes). A path is resolved as the kernel
// opens it: relative to the call's cwd, "~" expanded as the CLI does,
// symlinks followed through the deepest existing ancestor, a dangling link
// to its target, and checked both lexically cleaned (as the CLI resolves
// it) and with ".." applied after the link before it; /proc and /dev/fd
// paths, loops and anything unresolvable are denied. Bash is not analysed.
//
// # The read-only sandbox
//
// delegate --glance --sandbox and whitelist --glance --sandbox answer a
// read-only main thread's Bash call that may run with allow and an
// updatedInput whose command runs the original in bubblewrap (Linux:
// Sandboxing.Line, bwrapArgs, the environment of sandboxEnv) or through
// `flower-hook sandbox` (sandbox-exec on macOS). The original command
// travels hex-escaped or base64-encoded, never quoted into shell text. An
// allowed Bash (a judge that may run commands) gets a private scratch.
// --unclassified (tests only) takes every call for a glance, to show that
// the sandbox alone holds.
//
// # Choices
//
//   - Deny texts, the spill pointer and INDEX.md are Chinese, like every
//     text the model reads (delegate: send a subagent with the Agent tool,
//     name goal and acceptance criteria, long results to the workbench's
//     artifacts/, answer with path and conclusion; whitelist: "<role>没有
//     <tool>:这是有意为之 …"). A reason with variable parts is built from
//     fixed texts (tests match those, not the wording). The fail-closed
//     wrapper's "flower-hook was not found … install it" stays English:
//     only a person can act on it.
//   - spill replaces every string field longer than the threshold found
//     through nested objects (never lists, never objects whose "type" is
//     not "text", never base64 or isImage output), each into its own
//     content-addressed file. A call whose input names the spill directory
//     or a spill file ("spill/<16 hex>.txt") is a read-back and never spills.
//   - INDEX.md lists scripts/ (with "# desc:" descriptions), artifacts/ and
//     notes/, newest first; RefreshIndex is exported so the harness's
//     Workbench renders the same file.
//   - The report is fire-and-forget: one JSON line (Report) written to a
//     non-blocking Unix socket and closed; no answer is awaited, so the
//     harness's server must not rely on writing an acknowledgement. A
//     missing, dead or full socket costs a failed syscall, never a wait.
//
// This package imports no other package of flower but glance, no cgo and
// no SQLite (deps_test.go enforces it), so flower-hook stays a small static
// binary.
package hooks
