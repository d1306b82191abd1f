package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/watch"
)

// sigMode is the mode of the signature files written beside a file: they hold no account number.
const sigMode = 0o644

// maxRowsShown bounds the rows a review page lists; what changed, and the totals, cover every row.
const maxRowsShown = 10000

// maxNote bounds a folder-mode note read into a page.
const maxNote = 16 << 10

// fileName is a name the console accepts for a dropped file: what folder mode pays, and safe in
// a path, a URL and a page.
var fileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,120}\.(?i:csv|xlsx)$`)

// folders are folder mode's, in the order a file passes them, with what each means for people.
var folders = []struct{ Dir, State string }{
	{watch.InboxDir, "dropped: folder mode takes it once it has settled"},
	{watch.ProcessingDir, "being paid now"},
	{watch.AwaitingDir, "awaiting approval: not paid"},
	{watch.DoneDir, "paid (see its report)"},
	{watch.FailedDir, "not paid: failed or refused"},
}

// fileView is one file as the list shows it.
type fileView struct {
	Name, Folder, State, Why string
	Signatures               []string
	Reports                  []string
	DroppedBy                string
}

func (s *Server) dir(parts ...string) string {
	return filepath.Join(append([]string{s.cfg.Folder}, parts...)...)
}

func (s *Server) filesPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	var files []fileView
	reports, _ := os.ReadDir(s.dir(watch.ReportsDir))
	for _, f := range folders {
		entries, err := os.ReadDir(s.dir(f.Dir))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !fileName.MatchString(e.Name()) {
				continue
			}
			v := fileView{Name: e.Name(), Folder: f.Dir, State: f.State, Why: readNote(s.dir(f.Dir, e.Name()+watch.WhySuffix))}
			if sigs, _, err := approval.SignatureFiles(s.dir(f.Dir, e.Name())); err == nil {
				for _, sig := range sigs {
					v.Signatures = append(v.Signatures, filepath.Base(sig.Path))
				}
			}
			// A run's reports are named by the file's name without its extension, its notes with it.
			stem := strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())) + "."
			for _, rep := range reports {
				n := rep.Name()
				if rep.Type().IsRegular() && (strings.HasPrefix(n, stem) || strings.HasPrefix(n, e.Name()+".")) {
					v.Reports = append(v.Reports, n)
				}
			}
			if f.Dir != watch.DoneDir && f.Dir != watch.FailedDir {
				// Each file is read to know it by its bytes: only where someone may still approve it.
				v.DroppedBy = strings.Join(s.makers(s.dir(f.Dir, e.Name())), ", ")
			}
			files = append(files, v)
		}
	}
	return s.render(w, "files.html", sess, map[string]any{"Title": "Files", "Files": files, "MaxUpload": s.cfg.MaxUpload})
}

// readNote is a folder-mode note, or nothing. People may write where notes lie (the inbox,
// awaiting-approval): a link or a FIFO put there in a note's name is never read, or the page
// would show whatever file it leads to.
func readNote(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxNote))
	return string(b)
}

// makerNote is where the console keeps who dropped a file: named by the file's SHA-256, since
// folder mode renames a file whose name it has seen before, beside the reports.
func (s *Server) makerNote(sum string) string {
	return watch.DroppedByNote(s.cfg.Folder, sum)
}

// makers are the principals who dropped the bytes of the file at path through the console.
func (s *Server) makers(path string) []string {
	sum, err := read.FileSHA256(path)
	if err != nil {
		return nil
	}
	return strings.Fields(readNote(s.makerNote(sum)))
}

// stampedName matches the name folder mode gives a file whose name it has seen before.
var stampedName = regexp.MustCompile(`^(.*)\.\d{8}T\d{6}Z(?:-\d+)?(\.[^.]+)$`)

// originalName is a file's name as dropped, before folder mode added a time to it.
func originalName(name string) string {
	if m := stampedName.FindStringSubmatch(name); m != nil {
		return m[1] + m[2]
	}
	return name
}

// upload drops a file into the inbox, as a person copying it there would: a new name only, and
// written whole before its name appears.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload+maxFormBody)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.fail(w, r, &pageError{Status: http.StatusRequestEntityTooLarge, What: fmt.Sprintf("The file is larger than the console takes (%d MiB), so it was not dropped.", s.cfg.MaxUpload>>20),
				Do: "Split the file, or give it to folder mode directly, or ask the administrator to raise --max-upload."})
			return
		}
		s.fail(w, r, &pageError{Status: http.StatusBadRequest, What: "The upload could not be read: " + err.Error(), Do: "Choose the file again and drop it."})
		return
	}
	defer r.MultipartForm.RemoveAll()
	sess, err := s.checkPost(r)
	if err == nil {
		err = s.signedIn(s.drop)(w, r, sess)
	}
	if err != nil {
		s.fail(w, r, err)
	}
}

func (s *Server) drop(w http.ResponseWriter, r *http.Request, sess *session) error {
	file, header, err := r.FormFile("file")
	if err != nil {
		return &pageError{Status: http.StatusBadRequest, What: "No file was chosen.", Do: "Choose a CSV or XLSX file, then drop it."}
	}
	defer file.Close()
	name := filepath.Base(header.Filename)
	if !fileName.MatchString(name) {
		return &pageError{Status: http.StatusBadRequest, What: "The file's name must end in .csv or .xlsx and hold only letters, digits, spaces, dots, dashes, underscores and brackets.",
			Do: "Rename the file, such as payroll-2026-11.csv, and drop it again."}
	}
	for _, d := range []string{watch.InboxDir, watch.ProcessingDir, watch.AwaitingDir} {
		if _, err := os.Lstat(s.dir(d, name)); err == nil {
			return &pageError{Status: http.StatusConflict, What: fmt.Sprintf("A file named %s is already in %s.", name, d),
				Do: "Wait until it is paid or refused, or drop this one under another name."}
		}
	}
	if info, err := os.Stat(s.dir(watch.InboxDir)); err != nil || !info.IsDir() {
		return &pageError{Status: http.StatusServiceUnavailable, What: "Folder mode's inbox is not there, so nothing can be dropped.",
			Do: "Ask the administrator to start payout watch on the console's folder."}
	}
	if err := os.MkdirAll(s.dir(watch.ReportsDir), 0o750); err != nil {
		return err
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, file); err != nil {
		return err
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// Before the file is there: the note must never be missing when someone approves it. It
	// keeps every maker of these bytes, and each is refused as their approver.
	note := s.makerNote(hex.EncodeToString(sum.Sum(nil)))
	makers := strings.Fields(readNote(note))
	if !slices.Contains(makers, sess.principal) {
		makers = append(makers, sess.principal)
	}
	if err := atomicfile.WriteBytes(note, sigMode, []byte(strings.Join(makers, "\n")+"\n")); err != nil {
		return err
	}
	err = atomicfile.WriteNew(s.dir(watch.InboxDir, name), 0o640, func(w io.Writer) error {
		_, err := io.Copy(w, file)
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		return &pageError{Status: http.StatusConflict, What: fmt.Sprintf("A file named %s was dropped a moment ago.", name), Do: "Drop this one under another name."}
	}
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("console: file dropped", "principal", sess.principal, "file", name)
	http.Redirect(w, r, "/files", http.StatusSeeOther)
	return nil
}

// planRow is one payable row of a plan statement, as people read it.
type planRow struct {
	Line                      int
	Ref, Bank, Account, Payee string
	ProviderID                int64
	Amount                    decimal.Decimal
}

// bankTotal is what a plan pays into one bank.
type bankTotal struct {
	Bank  string
	Rows  int
	Total decimal.Decimal
}

// readStatement reads the rows of a plan statement: what is shown is what is signed.
func readStatement(statement []byte, banks map[int64]string) ([]planRow, []bankTotal, []int) {
	var rows []planRow
	var rejected []int
	byBank := map[string]*bankTotal{}
	for _, line := range strings.Split(string(statement), "\n") {
		f := strings.Split(line, "\t")
		switch {
		case len(f) == 2 && f[0] == "rejected":
			n, _ := strconv.Atoi(f[1])
			rejected = append(rejected, n)
		case len(f) == 7 && f[0] == "row":
			n, _ := strconv.Atoi(f[1])
			ref, _ := strconv.Unquote(f[2])
			payee, _ := strconv.Unquote(f[6])
			id, _ := strconv.ParseInt(f[3], 10, 64)
			amount, _ := decimal.NewFromString(f[5])
			bank := banks[id]
			if bank == "" {
				bank = "provider " + f[3]
			}
			rows = append(rows, planRow{Line: n, Ref: ref, Bank: bank, ProviderID: id, Account: f[4], Payee: payee, Amount: amount})
			t := byBank[bank]
			if t == nil {
				t = &bankTotal{Bank: bank}
				byBank[bank] = t
			}
			t.Rows++
			t.Total = t.Total.Add(amount)
		}
	}
	var totals []bankTotal
	for _, t := range byBank {
		totals = append(totals, *t)
	}
	sort.Slice(totals, func(i, j int) bool { return totals[i].Bank < totals[j].Bank })
	return rows, totals, rejected
}

// locate finds a file by name in the folder given, refusing any other name.
func (s *Server) locate(folder, name string) (string, error) {
	ok := false
	for _, f := range folders {
		ok = ok || f.Dir == folder
	}
	if !ok || !fileName.MatchString(name) {
		return "", &pageError{Status: http.StatusNotFound, What: "There is no such file.", Do: "Choose it from the list of files."}
	}
	path := s.dir(folder, name)
	if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
		return "", &pageError{Status: http.StatusNotFound, What: fmt.Sprintf("%s is no longer in %s: folder mode moved it on.", name, folder), Do: "Find it again in the list of files."}
	}
	return path, nil
}

// validUntil is the last day a signature made now holds: the longest a plan statement allows.
func (s *Server) validUntil() time.Time {
	return s.cfg.Now().UTC().Truncate(24 * time.Hour).Add(approval.DefaultValidity)
}

func (s *Server) reviewPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	folder, name := r.URL.Query().Get("folder"), r.URL.Query().Get("file")
	path, err := s.locate(folder, name)
	if err != nil {
		return err
	}
	plan, banks, err := s.cfg.Planner.Plan(r.Context(), path)
	if err != nil {
		return &pageError{Status: http.StatusUnprocessableEntity, What: fmt.Sprintf("The plan of %s cannot be read: %v", name, err), Do: "Correct the file and drop it again."}
	}
	var statement bytes.Buffer
	if err := plan.WriteStatement(&statement, s.validUntil()); err != nil {
		return err
	}
	rows, totals, rejected := readStatement(statement.Bytes(), banks)
	shown, hidden := rows, 0
	if len(rows) > maxRowsShown {
		shown, hidden = rows[:maxRowsShown], len(rows)-maxRowsShown
	}
	since, paid, err := lastPaid(r.Context(), s.cfg.Ledger, originalName(name), plan.FileSHA256)
	if err != nil {
		return err
	}
	changes := compare(paid, rows, banks, s.cfg.AmountShare)
	changes.Since = since
	data := map[string]any{
		"Changes": changes, "SharePercent": s.cfg.AmountShare.Shift(2).String(),
		"Title": "Review " + name, "Name": name, "Folder": folder, "Plan": plan, "Rows": shown, "Hidden": hidden, "Banks": totals, "Rejected": rejected,
		"Why": readNote(path + watch.WhySuffix), "DroppedBy": strings.Join(s.makers(path), ", "), "ValidUntil": s.validUntil().Format(time.DateOnly),
		"Awaiting": folder == watch.AwaitingDir, "HeldRepeats": folder == watch.AwaitingDir && watch.HeldForRepeats(path),
	}
	if sigs, _, err := approval.SignatureFiles(path); err == nil {
		var names []string
		for _, sig := range sigs {
			names = append(names, filepath.Base(sig.Path))
		}
		data["Signatures"] = names
	}
	return s.render(w, "review.html", sess, data)
}

// report serves a report from folder mode's reports folder: HTML inline (in a sandbox, as the
// report's own style needs), CSV and XLSX as downloads.
func (s *Server) report(w http.ResponseWriter, r *http.Request, sess *session) error {
	name := r.URL.Query().Get("name")
	if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return &pageError{Status: http.StatusNotFound, What: "There is no such report.", Do: "Choose it from the list of files."}
	}
	// Never through a link: a report is a file folder mode wrote there.
	f, err := os.OpenFile(s.dir(watch.ReportsDir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return &pageError{Status: http.StatusNotFound, What: "There is no such report.", Do: "Choose it from the list of files."}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return &pageError{Status: http.StatusNotFound, What: "There is no such report.", Do: "Choose it from the list of files."}
	}
	h := w.Header()
	switch strings.ToLower(filepath.Ext(name)) {
	case ".html":
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	case ".csv":
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	case ".xlsx":
		h.Set("Content-Type", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	default:
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	http.ServeContent(w, r, "", info.ModTime(), f)
	return nil
}
