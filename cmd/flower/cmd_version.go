package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/internal/pinned"
)

// versionInfo is what `flower version` reports: the module version, the
// commit it was built from (from the Go build's VCS stamp), the Go version
// and the claude version flower is tested on.
type versionInfo struct {
	Version, Commit, Time, Go, Claude string
	Modified                          bool
}

// buildCommit and buildModified are set by scripts/setup.sh with -ldflags
// -X (git rev-parse HEAD, and whether the tree differed from it): the
// commit when the Go build stamped no VCS info.
var buildCommit, buildModified string

func readVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version(), Claude: pinned.ClaudeVersion}
	v.Commit, v.Modified = buildCommit, buildModified == "true"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func printVersion(w io.Writer) error {
	v := readVersion()
	commit := "unknown commit"
	if v.Commit != "" {
		commit = "commit " + v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			commit += " (modified)"
		}
		if v.Time != "" {
			commit += " of " + v.Time
		}
	}
	_, err := fmt.Fprintf(w, "flower %s, %s, built with %s\nclaude %s (the pinned Claude Code CLI flower is tested on)\n", v.Version, commit, v.Go, v.Claude)
	return err
}

// versionJSON is `flower version --json`.
type versionJSON struct {
	Kind     string `json:"kind"` // "version"
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	Claude   string `json:"claude"` // the pinned claude version flower is tested on
}

func newVersionCmd(e *cmdEnv) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "version",
		Usage: "print flower's version, commit, Go version and the pinned claude version",
		Flags: []cli.Flag{jsonFlag(&asJSON, "print one JSON object")},
		Action: func(c *cli.Context) error {
			if err := noArgs(c, ""); err != nil {
				return err
			}
			if asJSON {
				v := readVersion()
				return writeJSON(e.Stdout, versionJSON{Kind: "version", Version: v.Version, Commit: v.Commit, Time: v.Time, Modified: v.Modified, Go: v.Go, Claude: v.Claude})
			}
			return printVersion(e.Stdout)
		},
	}
}
