package read

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payout/payout/batch/untrusted"
)

// Row is one data row as read, every field a string exactly as the user sees it. Line is the
// 1-based line (CSV: the physical line where the record starts) or spreadsheet row.
type Row struct {
	Line                                                          int
	Ref, Recipient, Bank, ServiceID, Account, Amount, Description string
	// Warnings are doubts that do not reject the row, such as an XLSX account stored as a number
	// accepted by Options.NumericAccounts.
	Warnings []string
	// Problems are what the reader found wrong with the row (too many fields, a hidden row, a
	// formula, a value too long): the validator rejects the row with them.
	Problems []*RowError
}

// Options limits what a reader accepts. Zero values take the defaults.
type Options struct {
	Sheet    string // XLSX sheet; empty means the active one (the one shown when it was saved)
	MaxRows  int    // data rows; 0 means no limit
	MaxBytes int64  // input file size; 0 means DefaultMaxCSVBytes or DefaultMaxXLSXBytes
	// NumericAccounts accepts XLSX account cells stored as numbers (with a warning): for users
	// whose account numbers have no leading zeros.
	NumericAccounts bool
	// HiddenRows accepts XLSX rows hidden in the workbook instead of rejecting them.
	HiddenRows bool
}

// Default size caps. A CSV is streamed, so its cap only guards against a wrong file; an XLSX is a
// zip whose shared strings excelize holds in memory, so its cap is tighter.
const (
	DefaultMaxCSVBytes  int64 = 2 << 30
	DefaultMaxXLSXBytes int64 = 100 << 20
)

// Reader streams rows; Next returns io.EOF after the last one. Header problems are returned by
// OpenFile.
type Reader interface {
	Next() (Row, error)
	Close() error
	// Sheet is the sheet of a workbook being read; empty for a CSV.
	Sheet() string
}

// Reasons a file is refused as a whole.
var (
	ErrFileType        = errors.New("unsupported file type: use .csv or .xlsx")
	ErrFileTooLarge    = errors.New("file too large")
	ErrNotUTF8         = errors.New("file is not UTF-8: save it as CSV UTF-8")
	ErrHeaderMissing   = errors.New("required column missing")
	ErrHeaderDuplicate = errors.New("column appears twice in the header")
	ErrSheetNotFound   = errors.New("sheet not found")
	ErrMalformed       = errors.New("malformed file")
	ErrTooManyRows     = errors.New("too many rows")
	ErrFieldCount      = errors.New("field count differs from the header's")
	ErrTooLong         = errors.New("value too long")
	ErrRecordTooLong   = errors.New("record longer than 64 KiB")
	ErrNotCSV          = errors.New("this is an Excel workbook, not a CSV: rename it .xlsx or save it as CSV UTF-8")
	ErrEncrypted       = errors.New("the workbook is password-protected (encrypted): save a copy without a password")
	ErrOldExcel        = errors.New("this is an old Excel 97-2003 workbook (.xls): save it as an Excel Workbook (.xlsx) or as CSV UTF-8")
	ErrHiddenSheet     = errors.New("the active sheet is hidden")
	ErrNotRegular      = errors.New("not a regular file: name a CSV or XLSX file")
)

// InputError is a file the reader refused: wrong type, too large, not UTF-8, bad header, broken
// quoting, a zip bomb. Line is 0 when the problem is not on one line.
type InputError struct {
	Path string
	Line int
	Err  error
}

// Error names the file and, when known, the line.
func (e *InputError) Error() string {
	name := filepath.Base(e.Path)
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %v", name, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", name, e.Err)
}

// Unwrap gives the reason.
func (e *InputError) Unwrap() error { return e.Err }

// FileError is a file rejected as a whole (no rows, total over --max-total, ...).
type FileError struct {
	Path string
	Errs []*RowError
}

func (e *FileError) Error() string {
	msg := filepath.Base(e.Path) + ": "
	for i, err := range e.Errs {
		if i > 0 {
			msg += "; "
		}
		msg += err.Error()
	}
	return msg
}

// Unwrap gives the reasons, for errors.Is.
func (e *FileError) Unwrap() []error {
	errs := make([]error, len(e.Errs))
	for i, err := range e.Errs {
		errs[i] = err
	}
	return errs
}

// Column names of an input file's header row.
const (
	ColRef         = "external_invoice_ref"
	ColRecipient   = "recipient_reference"
	ColBank        = "bank"
	ColServiceID   = "payout_service_id"
	ColAccount     = "third_party_account_no"
	ColAmount      = "amount"
	ColDescription = "payment_description"
)

// WholeRow is the column named by a problem of the row as a whole (its field count, a hidden row).
const WholeRow = "(whole row)"

// Columns is the header of an input file, in template order.
var Columns = []string{ColRef, ColRecipient, ColBank, ColServiceID, ColAccount, ColAmount, ColDescription}

// OpenFile opens a CSV or XLSX file, chosen by its extension, and reads its header.
func OpenFile(path string, opts Options) (Reader, error) {
	rd, _, err := openFile(path, opts, false)
	return rd, err
}

// OpenFileHashed is OpenFile that also returns the hex SHA-256 of the file it opened, read
// through the same open file as the rows: the bytes the rows come from, whatever the path names
// by then.
func OpenFileHashed(path string, opts Options) (Reader, string, error) {
	return openFile(path, opts, true)
}

func openFile(path string, opts Options, hash bool) (Reader, string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".xls" {
		return nil, "", &InputError{Path: path, Err: ErrOldExcel}
	}
	if ext != ".csv" && ext != ".xlsx" {
		return nil, "", &InputError{Path: path, Err: fmt.Errorf("%w (got %q)", ErrFileType, ext)}
	}
	f, st, err := untrusted.OpenOwned(path)
	if errors.Is(err, untrusted.ErrNotRegular) {
		return nil, "", &InputError{Path: path, Err: fmt.Errorf("%w: %w", ErrNotRegular, err)}
	}
	if err != nil {
		return nil, "", fmt.Errorf("open input: %w", err)
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxCSVBytes
		if ext == ".xlsx" {
			limit = DefaultMaxXLSXBytes
		}
	}
	if st.Size() > limit {
		f.Close()
		return nil, "", &InputError{Path: path, Err: fmt.Errorf("%w: %d bytes, limit %d", ErrFileTooLarge, st.Size(), limit)}
	}
	if err := sniff(f, ext); err != nil {
		f.Close()
		return nil, "", &InputError{Path: path, Err: err}
	}
	var sum string
	if hash {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size())); err != nil {
			f.Close()
			return nil, "", fmt.Errorf("read input: %w", err)
		}
		sum = hex.EncodeToString(h.Sum(nil))
	}
	if ext == ".xlsx" {
		rd, err := newXLSXReader(f, st, path, opts)
		if err != nil {
			f.Close()
			return nil, "", err
		}
		return rd, sum, nil
	}
	opts.MaxBytes = limit
	rd, err := newCSVReader(f, f, path, opts)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return rd, sum, nil
}

var (
	zipMagic  = []byte("PK\x03\x04")
	ole2Magic = []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
)

// sniff tells a file by its first bytes when they contradict its extension: a workbook named
// .csv, an encrypted or old-format workbook named .xlsx (both OLE2 containers, not zips).
func sniff(f *os.File, ext string) error {
	magic := make([]byte, len(ole2Magic))
	n, _ := f.ReadAt(magic, 0)
	magic = magic[:n]
	switch {
	case bytes.HasPrefix(magic, ole2Magic):
		return ole2Kind(f)
	case ext == ".csv":
		return notCSV(magic)
	}
	return nil
}

// ole2Kind tells an encrypted workbook (its container holds an EncryptedPackage stream) from an
// Excel 97-2003 one. Stream names are UTF-16 in the container's directory, wherever it lies.
func ole2Kind(r io.ReaderAt) error {
	encrypted := utf16le("EncryptedPackage")
	buf := make([]byte, 64<<10)
	var off int64
	for {
		n, err := r.ReadAt(buf, off)
		if bytes.Contains(buf[:n], encrypted) {
			return ErrEncrypted
		}
		if err != nil || n < len(buf) {
			return ErrOldExcel
		}
		off += int64(n - len(encrypted)) // overlap: a name may straddle two reads
	}
}

func utf16le(s string) []byte {
	out := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i], 0)
	}
	return out
}

// headerMap is the position of each known column in the file, -1 when absent.
type headerMap struct {
	ref, recipient, bank, serviceID, account, amount, description int
	width                                                         int
	named                                                         int // columns up to the last one with a name
	names                                                         []string
}

// normalizeHeader makes "External Invoice-Ref" and "external_invoice_ref" alike.
func normalizeHeader(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, s)
}

func parseHeader(path string, line int, fields []string) (headerMap, error) {
	h := headerMap{-1, -1, -1, -1, -1, -1, -1, len(fields), 0, slices.Clone(fields)}
	slots := map[string]*int{ColRef: &h.ref, ColRecipient: &h.recipient, ColBank: &h.bank, ColServiceID: &h.serviceID,
		ColAccount: &h.account, ColAmount: &h.amount, ColDescription: &h.description}
	found := make([]string, 0, len(fields))
	known := 0
	for i, f := range fields {
		name := normalizeHeader(f)
		if name == "" {
			continue
		}
		found = append(found, Excerpt(name))
		h.named = i + 1
		slot, ok := slots[name]
		if !ok {
			continue // unknown extra columns are the user's own notes
		}
		known++
		if *slot >= 0 {
			return h, &InputError{Path: path, Line: line, Err: fmt.Errorf("%w: %s", ErrHeaderDuplicate, name)}
		}
		*slot = i
	}
	var missing []string
	for _, c := range []struct {
		name string
		pos  int
	}{{ColRef, h.ref}, {ColRecipient, h.recipient}, {ColAccount, h.account}, {ColAmount, h.amount}} {
		if c.pos < 0 {
			missing = append(missing, c.name)
		}
	}
	if h.bank < 0 && h.serviceID < 0 {
		missing = append(missing, ColBank+" (or "+ColServiceID+")")
	}
	if len(missing) > 0 {
		hint := ""
		if len(fields) == 1 {
			// A whole header in one cell: the file is separated by something other than commas,
			// as Excel writes "CSV" in locales whose decimal mark is a comma.
			for _, sep := range []struct{ char, name string }{{";", "semicolons"}, {"\t", "tabs"}, {"|", "bars"}} {
				if strings.Contains(fields[0], sep.char) {
					hint = fmt.Sprintf(" (the header is separated by %s: save the file as CSV with commas, \"CSV UTF-8 (Comma delimited)\")", sep.name)
					break
				}
			}
		}
		if known == 0 {
			if hint == "" {
				hint = ": is this the payout file you meant? `payout template` writes the header it needs"
			}
			return h, &InputError{Path: path, Line: line, Err: fmt.Errorf("%w: %s; no column of a payout file at all, its first line %s%s",
				ErrHeaderMissing, strings.Join(missing, ", "), maskedLine(fields), hint)}
		}
		return h, &InputError{Path: path, Line: line, Err: fmt.Errorf("%w: %s; columns found: %s%s",
			ErrHeaderMissing, strings.Join(missing, ", "), strings.Join(found, ", "), hint)}
	}
	return h, nil
}

func field(fields []string, i int) string {
	if i < 0 || i >= len(fields) {
		return ""
	}
	return fields[i]
}

func (h *headerMap) row(line int, fields []string) Row {
	r := Row{Line: line, Ref: field(fields, h.ref), Recipient: field(fields, h.recipient), Bank: field(fields, h.bank),
		ServiceID: field(fields, h.serviceID), Account: field(fields, h.account), Amount: field(fields, h.amount),
		Description: field(fields, h.description)}
	r.bound()
	return r
}

// Longest value of each column, in characters (see also MaxRefLength, MaxRecipientLength and
// MaxDescriptionLength). A longer value rejects its row when the file is read, and only an
// excerpt of it is kept, printed and recorded.
const (
	MaxBankLength      = 100
	MaxServiceIDLength = 10
	MaxAccountLength   = 34 // the longest account number form there is (IBAN), spaces and dashes included
	MaxAmountLength    = 20
)

// bound rejects every field longer than its column allows.
func (r *Row) bound() {
	r.boundField(ColRef, &r.Ref, MaxRefLength)
	r.boundField(ColRecipient, &r.Recipient, MaxRecipientLength)
	r.boundField(ColBank, &r.Bank, MaxBankLength)
	r.boundField(ColServiceID, &r.ServiceID, MaxServiceIDLength)
	r.boundField(ColAccount, &r.Account, MaxAccountLength)
	r.boundField(ColAmount, &r.Amount, MaxAmountLength)
	r.boundField(ColDescription, &r.Description, MaxDescriptionLength)
}

func (r *Row) boundField(col string, v *string, max int) {
	if len(*v) <= max {
		return // bytes bound characters: the common case costs one comparison
	}
	s := strings.TrimSpace(*v)
	n := utf8.RuneCountInString(s)
	if n <= max {
		return
	}
	*v = Excerpt(s)
	r.problem(col, *v, fmt.Errorf("%w: %d characters, at most %d", ErrTooLong, n, max))
}

// problem adds a reason to reject the row.
func (r *Row) problem(col, value string, err error) {
	r.Problems = append(r.Problems, &RowError{Line: r.Line, Column: col, Value: value, Err: err})
}

// A first line that names no column of a payout file may be anything the account running
// payout can read (a token, a key, a hash key) named by mistake or through a link: messages,
// and so logs, cron mails and --json, describe it without quoting it, showing maskedChars
// characters of a line at least maskedMinChars long, enough to tell a wrong file ("---" of a
// key) and too little to matter of a secret.
const (
	maskedChars    = 3
	maskedMinChars = 16
)

// maskedLine describes a header line without quoting it: its length, its field count and, when
// it is long enough, its first maskedChars characters.
func maskedLine(fields []string) string {
	line := strings.TrimPrefix(strings.Join(fields, ","), "\ufeff")
	n := utf8.RuneCountInString(line)
	plural := "s"
	if len(fields) == 1 {
		plural = ""
	}
	desc := fmt.Sprintf("(%d characters, %d field%s)", n, len(fields), plural)
	if n < maskedMinChars {
		return desc
	}
	runes := 0
	for i := range line {
		if runes == maskedChars {
			line = line[:i]
			break
		}
		runes++
	}
	shown := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, line)
	return fmt.Sprintf("%s begins %q…", desc, shown)
}

// excerptChars is how much of a long value messages and reports show.
const excerptChars = 40

// Excerpt is a value short enough to print: a long one is cut to its first 40 characters, followed
// by its length, "ABCD…(104857600 chars)".
func Excerpt(s string) string {
	if len(s) <= excerptChars+20 {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= excerptChars+20 {
		return s
	}
	runes := 0
	for i := range s {
		if runes == excerptChars {
			return fmt.Sprintf("%s…(%d chars)", s[:i], n)
		}
		runes++
	}
	return s
}

func blank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// FileSHA256 is the hex SHA-256 of the file at path: a run records it to know the same file again.
func FileSHA256(path string) (string, error) {
	// A FIFO would block the open itself and a device would never end: only a regular file is
	// read, and a link another account made is not followed (package untrusted).
	f, _, err := untrusted.OpenOwned(path)
	if errors.Is(err, untrusted.ErrNotRegular) {
		return "", &InputError{Path: path, Err: ErrNotRegular}
	}
	if err != nil {
		return "", fmt.Errorf("open input: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read input: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
