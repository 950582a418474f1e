// Package demo holds what `flower demo` plays: the scripted model's
// conversations (demo.yaml), the person's ask and the answer the demo types.
// The command runs them; the end-to-end tests script flows with them too, so
// both read them here.
package demo

import (
	_ "embed"
	"strings"
)

// YAML is the scripted model behind `flower demo`: a clarifier that asks one
// question, a judge that sets the goal and rejects the first round, a
// coordinator that first tries to write by itself (and is denied), then
// delegates, and a coder whose long command output gets spilled. `flower
// demo --print-script` prints it. Its paths name Workspace.
//
//go:embed demo.yaml
var YAML string

// Workspace is the placeholder For fills with the demo's workspace.
const Workspace = "{{workspace}}"

// Ask is what the person "asks" in the demo.
const Ask = "在工作区写一个 hello.txt,再生成一份 1 到 2000 的编号清单"

// Answer is what the demo "types" when the clarifier asks.
const Answer = "hello, flower"

// For is YAML with its paths in workspace ws.
func For(ws string) string { return strings.ReplaceAll(YAML, Workspace, ws) }
