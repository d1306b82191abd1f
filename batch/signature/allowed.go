package signature

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// maxAllowedSigners bounds the allowed_signers file read: a trust root is small.
const maxAllowedSigners = 4 << 20

// ErrUnsafeFile is returned (wrapped) by LoadAllowedSigners for a file that others than its
// owner could have written, or that is not a regular file owned by root or the reading account.
var ErrUnsafeFile = errors.New("unsafe allowed_signers file")

// AllowedSigner is one line of an allowed_signers file.
type AllowedSigner struct {
	Line int
	// Text is the line as the file holds it, for evidence packs: what an auditor gives
	// ssh-keygen -Y verify.
	Text       string
	Principals []string // patterns; with CertAuthority, what a certificate's principals must match
	// CertAuthority says that Key signs certificates, and the certificates' keys sign.
	CertAuthority bool
	// Namespaces, when not empty, are the patterns of the namespaces the key may sign in.
	Namespaces []string
	// ValidAfter and ValidBefore, when not zero, bound when the key is trusted.
	ValidAfter, ValidBefore time.Time
	Key                     ssh.PublicKey
	Comment                 string
}

// AllowedSigners is a parsed allowed_signers file.
type AllowedSigners struct {
	Path    string
	Signers []AllowedSigner
}

// LoadAllowedSigners opens path once and reads it as an allowed_signers file. The opened file
// must be a regular file owned by root or by the current user, writable by its owner alone, in
// folders (those of path and of the file it leads to) that nobody else may change: owned by root
// or the current user, and writable by their owner alone or sticky, as /tmp is (ErrUnsafeFile
// otherwise). Otherwise whoever may write a folder on the way could put another file there.
func LoadAllowedSigners(path string) (*AllowedSigners, error) {
	if err := safeFolders(path); err != nil {
		return nil, fmt.Errorf("allowed signers %s: %w", path, err)
	}
	// Without blocking: a FIFO put in its place would otherwise hold the run forever.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("allowed signers: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("allowed signers %s: %w", path, err)
	}
	if err := safeTrustRoot(info); err != nil {
		return nil, fmt.Errorf("allowed signers %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxAllowedSigners+1))
	if err != nil {
		return nil, fmt.Errorf("allowed signers %s: %w", path, err)
	}
	if len(data) > maxAllowedSigners {
		return nil, fmt.Errorf("allowed signers %s: larger than %d bytes", path, maxAllowedSigners)
	}
	return ParseAllowedSigners(path, data)
}

// safeFolders checks every folder above path, as given and once its links are followed.
func safeFolders(path string) error {
	given, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return err
	}
	uid := uint32(os.Getuid())
	for _, p := range []string{given, real} {
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			info, err := os.Lstat(dir)
			if err != nil {
				return err
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			switch {
			case !ok:
				return fmt.Errorf("%w: this system does not say who owns %s", ErrUnsafeFile, dir)
			case st.Uid != 0 && st.Uid != uid:
				return fmt.Errorf("%w: its folder %s is owned by uid %d, not by root or by this account: its administrator keeps it", ErrUnsafeFile, dir, st.Uid)
			case info.Mode().Perm()&0o022 != 0 && info.Mode()&os.ModeSticky == 0:
				return fmt.Errorf("%w: its folder %s (mode %04o) lets others than its owner put another file there: chmod go-w it", ErrUnsafeFile, dir, info.Mode().Perm())
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return nil
}

// safeTrustRoot refuses what sshd's StrictModes refuses, from the opened file's own status.
func safeTrustRoot(info os.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file", ErrUnsafeFile)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: this system does not say who owns a file", ErrUnsafeFile)
	}
	if uid := uint32(os.Getuid()); st.Uid != 0 && st.Uid != uid {
		return fmt.Errorf("%w: owned by uid %d, not by root or by this account (uid %d): its administrator keeps it", ErrUnsafeFile, st.Uid, uid)
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w: mode %04o lets others than its owner write it: chmod go-w it", ErrUnsafeFile, perm)
	}
	return nil
}

// ParseAllowedSigners reads data in the allowed_signers format of ssh-keygen(1): a line is
// principals, options (cert-authority, namespaces="...", valid-after="...", valid-before="..."),
// the key type, the base64 key, and a comment; '#' starts a comment line. name is for errors.
func ParseAllowedSigners(name string, data []byte) (*AllowedSigners, error) {
	out := &AllowedSigners{Path: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxAllowedSigners)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("allowed signers %s line %d: %w", name, n, err)
		}
		s.Line, s.Text = n, line
		out.Signers = append(out.Signers, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("allowed signers %s: %w", name, err)
	}
	return out, nil
}

func parseLine(line string) (AllowedSigner, error) {
	var s AllowedSigner
	principals, rest, err := firstField(line)
	if err != nil {
		return s, err
	}
	for _, p := range strings.Split(principals, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return s, errors.New("an empty principal")
		}
		s.Principals = append(s.Principals, p)
	}
	key, comment, options, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return s, fmt.Errorf("want principals, options, key type, base64 key: %w", err)
	}
	s.Key, s.Comment = key, comment
	for _, o := range options {
		if err := s.setOption(o); err != nil {
			return s, err
		}
	}
	return s, nil
}

// firstField splits off the principals, which may be quoted.
func firstField(line string) (string, string, error) {
	if strings.HasPrefix(line, `"`) {
		end := strings.IndexByte(line[1:], '"')
		if end < 0 {
			return "", "", errors.New("unterminated quoted principals")
		}
		return line[1 : end+1], line[end+2:], nil
	}
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return "", "", errors.New("a principals list and nothing else: want principals, then the key")
	}
	return line[:i], line[i+1:], nil
}

func (s *AllowedSigner) setOption(o string) error {
	name, value, hasValue := strings.Cut(o, "=")
	name = strings.ToLower(name)
	value = strings.Trim(value, `"`)
	var err error
	switch {
	case name == "cert-authority" && !hasValue:
		s.CertAuthority = true
	case name == "namespaces" && hasValue:
		s.Namespaces = strings.Split(value, ",")
	case name == "valid-after" && hasValue:
		s.ValidAfter, err = parseSignerTime(value)
	case name == "valid-before" && hasValue:
		s.ValidBefore, err = parseSignerTime(value)
	default:
		return fmt.Errorf("unknown option %q: want cert-authority, namespaces=\"...\", valid-after=\"...\" or valid-before=\"...\"", o)
	}
	if err != nil {
		return fmt.Errorf("option %s: %w", o, err)
	}
	return nil
}

// parseSignerTime reads YYYYMMDD[HHMM[SS]], in UTC with a Z suffix and in local time otherwise,
// as ssh-keygen does.
func parseSignerTime(v string) (time.Time, error) {
	loc := time.Local
	if strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z") {
		loc, v = time.UTC, v[:len(v)-1]
	}
	layouts := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}
	layout, ok := layouts[len(v)]
	if !ok {
		return time.Time{}, fmt.Errorf("%q: want YYYYMMDD[HHMM[SS]][Z]", v)
	}
	return time.ParseInLocation(layout, v, loc)
}

// match reports whether s matches any of the patterns (sshd's: '*' and '?' wildcards, and a
// pattern starting with '!' excludes).
func match(s string, patterns []string) bool {
	ok := false
	for _, p := range patterns {
		if neg := strings.HasPrefix(p, "!"); neg {
			if wildcard(s, p[1:]) {
				return false
			}
			continue
		}
		if wildcard(s, p) {
			ok = true
		}
	}
	return ok
}

func wildcard(s, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if wildcard(s[i:], p[1:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			s, p = s[1:], p[1:]
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return s == ""
}
