package main

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
)

// newCompleteCmd is the hidden `flower __complete runs|sessions [-C DIR]
// [--run-dir DIR]` the completion script calls for words it cannot know
// itself: the run ids of the run dir's manifest (newest first), or the
// session ids those runs used. It reads the manifest only (never a store,
// never a recovery), prints nothing on any error, and exits 0: a completion
// must not fail loudly at a prompt.
func newCompleteCmd(e *cmdEnv) *cli.Command {
	var ws, runDir string
	return &cli.Command{
		Name:   "__complete",
		Hidden: true,
		Flags:  []cli.Flag{workspaceFlag(&ws, "workspace `DIR`"), runDirFlag(&runDir)},
		Action: func(c *cli.Context) error {
			pl, err := resolvePlace(ws, runDir)
			if err != nil || c.NArg() != 1 {
				return nil
			}
			rows, _ := harness.ReadManifestAround(filepath.Join(pl.RunDir, "manifest.json"))
			for _, w := range completionIDs(c.Args().First(), rows) {
				fmt.Fprintln(e.Stdout, w)
			}
			return nil
		},
	}
}

// completionIDs are the words offered for kind: run ids newest first, or
// every session id of those runs (sorted).
func completionIDs(kind string, rows []harness.ManifestRow) []string {
	var out []string
	switch kind {
	case "runs":
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].StartedAt > rows[j].StartedAt })
		for _, r := range rows {
			out = append(out, r.Run)
		}
	case "sessions":
		for id := range sessionSteps(rows) {
			out = append(out, id)
		}
		sort.Strings(out)
	}
	return out
}
