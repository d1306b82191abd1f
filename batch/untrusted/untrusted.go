// Package untrusted opens files that someone other than the account running payout may have
// named, planted or swapped: run inputs, signatures and refusals beside them, chain heads and
// evidence packs handed to an auditor. Every open is non-blocking and refuses anything but a
// regular file, so a FIFO cannot stall a run that holds the ledger's lock and a device such as
// /dev/zero cannot be read for ever; every whole read is bounded. OpenOwned and ReadSmallOwned
// also refuse a path through a symbolic link that another account made: in a shared folder a
// maker could otherwise point an input at the merchant token or a private key, which the
// account running payout can read, and have its text quoted back in an error or a cron mail.
package untrusted

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Reasons a file is refused.
var (
	// ErrNotRegular is a folder, FIFO, socket or device where a file was expected.
	ErrNotRegular = errors.New("not a regular file")
	// ErrForeignLink is a symbolic link, or the file one leads to, owned by another account than
	// the one running payout or root.
	ErrForeignLink = errors.New("a symbolic link another account made")
	// ErrTooLarge is a file larger than its reader accepts.
	ErrTooLarge = errors.New("file too large")
	// ErrChanged is a path that led elsewhere once opened than when its links were checked.
	ErrChanged = errors.New("the file was replaced while it was being opened")
)

// maxLinks bounds the symbolic links followed on one path, as the kernel's own limit does.
const maxLinks = 40

// NotRegularError names what a path is instead of a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

// Error says what the file is.
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Unwrap gives ErrNotRegular.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// LinkError names a symbolic link (or the file it leads to) that another account owns.
type LinkError struct {
	Path  string // the path as named
	Owned string // the link or file owned by Owner
	Owner uint32
	// Target tells that Owned is the file the links lead to, not a link.
	Target bool
}

// Error names the link, its owner and what to do.
func (e *LinkError) Error() string {
	what := "is a symbolic link owned by"
	switch abs, _ := filepath.Abs(e.Path); {
	case e.Target:
		what = "is a symbolic link to " + e.Owned + ", which is owned by"
	case abs != e.Owned:
		what = "leads through the symbolic link " + e.Owned + ", owned by"
	}
	return fmt.Sprintf("%s %s %s, not by you or root: payout does not follow a link that may point at any file "+
		"you can read; put the file itself there", e.Path, what, ownerName(e.Owner))
}

// Unwrap gives ErrForeignLink.
func (e *LinkError) Unwrap() error { return ErrForeignLink }

// TooLargeError is a file larger than Max bytes.
type TooLargeError struct {
	Path string
	Max  int64
}

// Error names the file and the bound.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Max)
}

// Unwrap gives ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Kind names a file mode for people: "a folder", "a named pipe (FIFO)".
func Kind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a regular file"
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// Open opens path for reading, following links, without blocking: a FIFO, a folder or a device
// is refused (a *NotRegularError) before a byte of it is read. It returns the file and what it is.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return open(path, path, false)
}

// OpenOwned is Open for a file named by someone else: a path that leads through a symbolic link
// owned by another account than the one running or root, or through links to a file such an
// account owns, is refused (a *LinkError) without being opened.
func OpenOwned(path string) (*os.File, fs.FileInfo, error) {
	resolved, checked, err := followOwned(path)
	if err != nil {
		return nil, nil, err
	}
	f, info, err := open(path, resolved, true)
	if err != nil {
		return nil, nil, err
	}
	if !os.SameFile(info, checked) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w: run again once nothing is changing it", path, ErrChanged)
	}
	return f, info, nil
}

// open opens target, the file path names, and names it by path in errors; noFollow refuses a
// last component that is a link.
func open(path, target string, noFollow bool) (*os.File, fs.FileInfo, error) {
	// What is not a regular file is refused before it is opened (opening a device may do
	// something, a socket cannot be opened at all), and again once opened, in case the path
	// changed in between.
	stat := os.Stat
	if noFollow {
		stat = os.Lstat
	}
	if info, err := stat(target); err == nil && !info.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: path, Mode: info.Mode()}
	}
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(target, flags, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: info.Mode()}
	}
	return f, info, nil
}

// ReadSmall reads a whole regular file of at most max bytes (Open's rules); a larger one is a
// *TooLargeError, found after reading max+1 bytes whatever its size claims.
func ReadSmall(path string, max int64) ([]byte, error) {
	f, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, max)
}

// ReadSmallOwned is ReadSmall with OpenOwned's rules.
func ReadSmallOwned(path string, max int64) ([]byte, error) {
	f, _, err := OpenOwned(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, max)
}

func readBounded(r io.Reader, path string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return data, nil
}

// followOwned resolves path component by component. Every symbolic link on the way must be
// owned by the running account or root, and so must the file the links lead to; it returns that
// file's path, free of links, and what it was: what is opened is compared with it, so a link
// swapped in once the path was checked is not followed unnoticed.
func followOwned(path string) (string, fs.FileInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	uid := uint32(os.Geteuid())
	rest := components(abs)
	cur, links := "/", 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		info, err := os.Lstat(next)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				pe.Path = path
			}
			return "", nil, err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
		}
		if owner, ok := ownerOf(info); !ok || owner != uid && owner != 0 {
			return "", nil, &LinkError{Path: path, Owned: next, Owner: owner}
		}
		dest, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(dest) {
			cur = "/"
		}
		rest = append(components(dest), rest...)
	}
	info, err := os.Lstat(cur)
	if err != nil {
		return "", nil, err
	}
	if owner, ok := ownerOf(info); links > 0 && (!ok || owner != uid && owner != 0) {
		return "", nil, &LinkError{Path: path, Owned: cur, Owner: owner, Target: true}
	}
	return cur, info, nil
}

func components(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

func ownerOf(info fs.FileInfo) (uint32, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// ownerName is an account's name and number ("alice (uid 1001)"), or its number alone.
func ownerName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
