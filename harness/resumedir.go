package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowerhq/flower/internal/envlist"
)

// loadResume loads the session a resume continues from the store into the
// config dir the resumed claude reads, whether the run is portable or not
// (expire, trim, prune and repair run on every load):
//
//   - portable: into the run's config dir, under the run's project key;
//   - not portable: claude keeps the user's own config dir, so the Agent
//     SDK's way: a private claude-resume-* folder in the
//     step's folder with the user's login and settings copied in, the
//     session written under the workspace's project key, and
//     CLAUDE_CONFIG_DIR + CLAUDE_CODE_PROJECT_DIR_NAME set for this attempt
//     only (env). The folder is removed when the attempt ends (done).
//
// A session a damaged store lost (ErrSessionLost) that the config dir does
// not hold either starts fresh (a.resume cleared, a "store" event with
// fresh: true), since claude would only answer "No conversation found"; one
// that is simply not stored is resumed as asked (a run that was not portable
// then reads the user's own dir), and claude says whether it knows it —
// unless it is the flow's own (RunOptions.ResumeOwn) and claude's dir has
// no transcript of it either: that starts fresh the same way.
// Without a store, or for a fresh session, nothing is loaded and claude
// reads its own files.
func (r *Runtime) loadResume(ctx context.Context, a *attemptArgs, stepDir string) (env map[string]string, done func(), err error) {
	done = func() {}
	if a.resume == "" || r.store == nil {
		return nil, done, nil
	}
	st, err := r.store.get(ctx)
	if err != nil {
		return nil, done, err
	}
	dir, project := r.configDir, r.project
	if dir == "" {
		if dir, err = os.MkdirTemp(stepDir, "claude-resume-"); err != nil {
			return nil, done, fmt.Errorf("resume config dir: %w", err)
		}
		done = func() { os.RemoveAll(dir) }
		project = ProjectKey(r.workspace)
		if err := r.copyUserConfig(dir); err != nil {
			done()
			return nil, func() {}, err
		}
		env = map[string]string{"CLAUDE_CONFIG_DIR": dir, "CLAUDE_CODE_PROJECT_DIR_NAME": project}
	}
	err = st.Materialize(ctx, project, a.resume, dir)
	if err == nil {
		return env, done, nil
	}
	ev := ErrorEvent{Error: err.Error(), Op: "materialize", SessionID: a.resume}
	file := filepath.Join(dir, "projects", project, a.resume+".jsonl")
	if errors.Is(err, ErrSessionLost) {
		os.Remove(file) // what a load cut short by the damage wrote
		_, serr := os.Stat(file)
		ev.Fresh = serr != nil
	} else {
		ev.Fresh = a.own && sessionNotFound(err) && !r.claudeHolds(file, a.resume)
		if r.configDir == "" {
			// Not stored: claude may still hold it in the user's own dir
			// (and a fresh session belongs there too).
			done()
			env, done = nil, func() {}
		}
	}
	if ev.Fresh {
		a.resume, a.fork, a.resumeAt = "", false, ""
	}
	if a.emit != nil {
		a.emit(Event{Kind: EventStore, Data: EventData(ev)})
	}
	return env, done, nil
}

// sessionNotFound reports whether a Materialize error says the store does
// not hold the session (an error in its chain with SessionNotFound() true,
// as sessionstore.ErrNotFound has), not that the store failed.
func sessionNotFound(err error) bool {
	var nf interface{ SessionNotFound() bool }
	return errors.As(err, &nf) && nf.SessionNotFound()
}

// claudeHolds reports whether the claude of this attempt could resume
// session id without the store: its transcript is at file (a portable
// run's config dir), or, when the run is not portable, in the user's own
// config dir under the workspace's project key.
func (r *Runtime) claudeHolds(file, id string) bool {
	if r.configDir == "" {
		file = filepath.Join(UserConfigDir(envlist.Getter(r.env)), "projects", ProjectKey(r.workspace), id+".jsonl")
	}
	_, err := os.Stat(file)
	return err == nil
}

// copyUserConfig puts the user's login (through Options.CopyCredentials,
// refresh tokens removed) and settings.json into a resume's config dir.
// settings.json loses enabledPlugins, extraKnownMarketplaces and
// env.CLAUDE_CONFIG_DIR, as the SDK's copy does: the resumed claude must
// not point back at the user's dir or install what the user's claude has.
func (r *Runtime) copyUserConfig(dir string) error {
	from := UserConfigDir(envlist.Getter(r.env))
	if r.opts.CopyCredentials != nil {
		if err := r.opts.CopyCredentials(from, dir); err != nil {
			return fmt.Errorf("resume config dir: %w", err)
		}
	}
	data, err := os.ReadFile(filepath.Join(from, "settings.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("resume config dir: %w", err)
	}
	var settings map[string]any
	if err := json.Unmarshal(data, &settings); err != nil {
		return nil // claude ignores a settings.json it cannot read; so does the copy
	}
	delete(settings, "enabledPlugins")
	delete(settings, "extraKnownMarketplaces")
	if env, ok := settings["env"].(map[string]any); ok {
		delete(env, "CLAUDE_CONFIG_DIR")
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return fmt.Errorf("resume config dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), out, 0o600); err != nil {
		return fmt.Errorf("resume config dir: %w", err)
	}
	return nil
}
