// Package plugin carries flower's guards plugin for Claude Code (the
// .claude-plugin/plugin.json manifest and hooks/hooks.json) inside the
// flower binary, so that a `go install`ed flower needs no checkout: flower
// writes these files into a private cache folder and passes it to claude
// with --plugin-dir. The folder itself stays usable as a plugin
// (--plugin-dir, or through the repository's marketplace).
//
// Lifecycle: read-only data, fixed at build time.
package plugin

import (
	"embed"
)

// Files holds .claude-plugin/plugin.json and hooks/hooks.json.
//
//go:embed .claude-plugin/plugin.json hooks/hooks.json
var Files embed.FS

// Names lists the files in Files, in a fixed order.
var Names = []string{".claude-plugin/plugin.json", "hooks/hooks.json"}
