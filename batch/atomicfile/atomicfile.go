// Package atomicfile writes files so that a reader, or the same program after a crash, sees
// either the whole old file or the whole new one, never a part.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with what write produces. The bytes go to a temporary file beside path,
// which is given mode, synced, renamed over path, and the directory is synced so that the new
// name survives a power cut. On any error path is untouched and the temporary file is gone.
func Write(path string, mode fs.FileMode, write func(io.Writer) error) error {
	return replace(path, mode, true, write)
}

// WriteUnsynced is Write without the syncs: a reader still never sees part of the file, but a
// power cut may lose it. For files that are cheap to make again, such as a dry run's reports.
func WriteUnsynced(path string, mode fs.FileMode, write func(io.Writer) error) error {
	return replace(path, mode, false, write)
}

func replace(path string, mode fs.FileMode, sync bool, write func(io.Writer) error) error {
	tmp, err := writeTemp(path, mode, sync, write)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if !sync {
		return nil
	}
	return SyncDir(filepath.Dir(path))
}

// WriteNew is Write for a file that must not exist yet: when path exists it is left as it is
// and the error matches fs.ErrExist.
func WriteNew(path string, mode fs.FileMode, write func(io.Writer) error) error {
	if _, err := os.Lstat(path); err == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	tmp, err := writeTemp(path, mode, true, write)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	// A hard link, unlike a rename, never replaces what another process made in between.
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// WriteBytes is Write for data already in memory.
func WriteBytes(path string, mode fs.FileMode, data []byte) error {
	return Write(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeTemp writes a temporary file beside path, synced when sync is set, and returns its name.
func writeTemp(path string, mode fs.FileMode, sync bool, write func(io.Writer) error) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	// Before any byte is written: the file may hold account numbers.
	if err = f.Chmod(mode); err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err = write(bw); err != nil {
		return "", err
	}
	if err = bw.Flush(); err != nil {
		return "", err
	}
	if sync {
		if err = f.Sync(); err != nil {
			return "", err
		}
	}
	if err = f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// SyncDir syncs a directory, so that the names created or renamed in it are on disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
