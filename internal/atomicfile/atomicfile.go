// Package atomicfile writes a file so that a crash or a full disk leaves
// either the old content or the new one, never a mix or a truncation.
//
// Lifecycle: none; Write and Commit are plain functions. Write writes a
// temp file beside the target, fsyncs it, renames it over the target and
// fsyncs the folder so that the rename itself survives a power cut (Commit
// does the same for a temp file the caller streamed). The file gets perm, narrowed
// by the mode of a file already at the path: a file a person made more
// private stays so (flower never widens modes it finds).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data atomically and durably (see the package doc).
func Write(path string, data []byte, perm fs.FileMode) error {
	if st, err := os.Stat(path); err == nil {
		perm &= st.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	return Commit(tmp, path)
}

// Commit puts a temp file that the caller wrote (streamed, say) in place of
// path: it fsyncs and closes tmp, renames it over path and fsyncs the
// folder. tmp must be in path's folder (os.CreateTemp there). On any error
// tmp is removed and path is left as it was.
func Commit(tmp *os.File, path string) error {
	err := tmp.Sync()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a folder, making the renames and creations in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}

// NotALink returns an error when path (a file or the folder it is about to
// be written in) is a symlink: flower writes its own files only into real
// folders and files, so that a planted link cannot carry them out of the
// workbench. A missing path is no error (the caller creates it).
func NotALink(path string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return errors.New(path + " is a symlink: flower does not write through it")
	}
	return nil
}
