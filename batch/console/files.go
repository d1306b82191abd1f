package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/ledger"
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

// Kinds of signature the console makes beside a file awaiting approval.
const (
	signApprove = "approve" // its plan, in payout-plan: FILE.<principal>.sig
	signRefuse  = "refuse"  // a refusal statement, in payout-reject: FILE.<principal>.reject and .reject.sig
	signRepeats = "repeats" // its plan with the rows held as repeats paid, in payout-repeat: FILE.<principal>.repeats.sig
)

// pendingSignature is what the signed-in person was asked to sign, kept with the ceremony. The
// statement itself is not kept: the host that gets the passkey's answer computes it again from
// the file, and signs nothing unless it is what the passkey signed.
type pendingSignature struct {
	Kind       string    `json:"kind"`
	File       string    `json:"file"`
	Reason     string    `json:"reason,omitempty"`
	ValidUntil time.Time `json:"valid_until"`
}

// statement is what p signs, for the file at path: the text, its namespace, where the signature
// goes (and the refusal's statement), and the plan it is about.
type statement struct {
	text                   []byte
	namespace              string
	sigPath, statementPath string
	plan                   intake.Plan
}

// RepeatPlanner is a Planner that also plans a file with its rows held as possible repeats paid
// like any other row: the plan that accepting them signs (`payout plan --allow-repeats`).
type RepeatPlanner interface {
	PlanWithRepeats(ctx context.Context, path string) (intake.Plan, map[int64]string, error)
}

func (s *Server) statementOf(ctx context.Context, p *pendingSignature, path, principal string) (*statement, error) {
	var plan intake.Plan
	var err error
	if p.Kind == signRepeats {
		rp, ok := s.cfg.Planner.(RepeatPlanner)
		if !ok {
			return nil, &pageError{Status: http.StatusNotImplemented, What: "This console cannot plan a file with its repeats.", Do: "Accept them with payout approve --accept-repeats."}
		}
		plan, _, err = rp.PlanWithRepeats(ctx, path)
	} else {
		plan, _, err = s.cfg.Planner.Plan(ctx, path)
	}
	if err != nil {
		return nil, &pageError{Status: http.StatusUnprocessableEntity, What: fmt.Sprintf("The plan of %s cannot be read: %v", p.File, err), Do: "Correct the file and drop it again."}
	}
	base := path + "." + safeName(principal)
	st := &statement{plan: plan}
	switch p.Kind {
	case signRefuse:
		st.namespace, st.statementPath, st.sigPath = signature.NamespaceReject, base+approval.RefusalSuffix, base+approval.RefusalSuffix+approval.SigSuffix
		st.text = plan.RefusalStatement(p.Reason)
		return st, nil
	case signRepeats:
		st.namespace, st.sigPath = signature.NamespaceRepeat, base+".repeats"+approval.SigSuffix
	default:
		st.namespace, st.sigPath = signature.NamespacePlan, base+approval.SigSuffix
	}
	var b bytes.Buffer
	if err := plan.WriteStatement(&b, p.ValidUntil); err != nil {
		return nil, err
	}
	st.text = b.Bytes()
	return st, nil
}

func (s *Server) signBegin(w http.ResponseWriter, r *http.Request, sess *session) error {
	var req struct {
		Folder, File, Decision, Reason string
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return &pageError{Status: http.StatusBadRequest, What: "The request could not be read.", Do: "Open the review page again."}
	}
	if req.Folder != watch.AwaitingDir {
		return &pageError{Status: http.StatusConflict, What: "Only a file awaiting approval can be approved or refused.", Do: "Open the list of files to see where it is now."}
	}
	path, err := s.locate(req.Folder, req.File)
	if err != nil {
		return err
	}
	p := sess.person
	pending := &pendingSignature{Kind: req.Decision, File: req.File, Reason: strings.TrimSpace(req.Reason), ValidUntil: s.validUntil()}
	switch {
	case req.Decision != signApprove && req.Decision != signRefuse && req.Decision != signRepeats:
		return &pageError{Status: http.StatusBadRequest, What: "Say whether you approve or refuse.", Do: "Use the buttons of the review page."}
	case req.Decision == signApprove && !p.CanApprove:
		return &pageError{Status: http.StatusForbidden, What: fmt.Sprintf("%s may read but not approve plans: the allowed_signers line of this passkey lacks the namespace %s.", p.Principal, signature.NamespacePlan),
			Do: "Ask the administrator if you should approve payouts."}
	case req.Decision == signRefuse && !p.CanRefuse:
		return &pageError{Status: http.StatusForbidden, What: fmt.Sprintf("%s may not refuse plans: the allowed_signers line of this passkey lacks the namespace %s.", p.Principal, signature.NamespaceReject),
			Do: "Ask the administrator if you should refuse payouts."}
	case req.Decision == signRepeats && !p.CanAcceptRepeats:
		return &pageError{Status: http.StatusForbidden, What: fmt.Sprintf("%s may not accept repeats: the allowed_signers line of this passkey lacks the namespace %s.", p.Principal, signature.NamespaceRepeat),
			Do: "Ask the administrator if you should accept repeated payouts."}
	case req.Decision == signRepeats && !watch.HeldForRepeats(path):
		return &pageError{Status: http.StatusConflict, What: "This file holds no rows as possible repeats.", Do: "Approve it, or refuse it."}
	case req.Decision == signRefuse && pending.Reason == "":
		return &pageError{Status: http.StatusBadRequest, What: "A refusal needs a reason, for the file's maker.", Do: "Write what is wrong with the file, then refuse."}
	case req.Decision == signApprove && slices.Contains(s.makers(path), p.Principal):
		return &pageError{Status: http.StatusForbidden, What: "You dropped this file, so your approval would not be a second person's.", Do: "Ask another signer to approve it."}
	case req.Decision == signRepeats && slices.Contains(s.makers(path), p.Principal):
		return &pageError{Status: http.StatusForbidden, What: "You dropped this file, so accepting its repeats is for someone else.", Do: "Ask another signer to accept them."}
	}
	st, err := s.statementOf(r.Context(), pending, path, p.Principal)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(st.sigPath); err == nil && pending.Kind != signRefuse {
		did := map[string]string{signApprove: "approved this file", signRepeats: "accepted this file's repeats"}[pending.Kind]
		return &pageError{Status: http.StatusConflict, What: "You have " + did + " already; one person counts once.", Do: "Wait for the other signers."}
	}
	challenge, err := signature.SignedData(bytes.NewReader(st.text), st.namespace)
	if err != nil {
		return err
	}
	user := passkeyUser{id: sess.userHandle, name: p.Principal, credentials: []webauthn.Credential{{ID: p.credential}}}
	assertion, data, err := s.webauthn.BeginLogin(user, webauthn.WithChallenge(challenge), webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return err
	}
	if err := s.begin(r.Context(), sess, ceremony{For: "sign", Data: *data, Sign: pending}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, assertion)
	return nil
}

var errStatementChanged = &pageError{Status: http.StatusConflict, What: "The file, or what it pays, changed after you pressed the button, so nothing was signed.",
	Do: "Open the review page again, read it, and sign again."}

func (s *Server) signFinish(w http.ResponseWriter, r *http.Request, sess *session) error {
	c, err := s.take(r.Context(), sess, "sign")
	if err != nil {
		return err
	}
	if c.Sign == nil {
		return errNoCeremony
	}
	data, pending, p := c.Data, c.Sign, sess.person
	parsed, err := protocol.ParseCredentialRequestResponseBody(r.Body)
	if err != nil {
		return passkeyRefused("signature", err)
	}
	a, err := s.loadAllowed()
	if err != nil {
		return err
	}
	line, ok := s.passkeyLine(a, p.credential)
	if !ok {
		return errNotListed
	}
	cred, err := credential(line, p.credential, parsed.Response.AuthenticatorData.Flags.HasBackupEligible())
	if err != nil {
		return err
	}
	if _, err := s.webauthn.ValidateLogin(passkeyUser{id: data.UserID, name: p.Principal, credentials: []webauthn.Credential{cred}}, data, parsed); err != nil {
		return passkeyRefused("signature", err)
	}
	path, err := s.locate(watch.AwaitingDir, pending.File)
	if err != nil {
		return err
	}
	st, err := s.statementOf(r.Context(), pending, path, p.Principal)
	if err != nil {
		return err
	}
	// The passkey signed the challenge begin made: the statement computed here must be the one it
	// was made of, or the signature written would be of a text nobody read.
	challenge, err := signature.SignedData(bytes.NewReader(st.text), st.namespace)
	if err != nil {
		return err
	}
	if base64.RawURLEncoding.EncodeToString(challenge) != data.Challenge {
		return errStatementChanged
	}
	raw := parsed.Raw.AssertionResponse
	armored, err := signature.WebAuthnSignature(line.Key, st.namespace, parsed.Response.CollectedClientData.Origin, signature.Assertion{
		AuthenticatorData: raw.AuthenticatorData, ClientDataJSON: raw.ClientDataJSON, Signature: raw.Signature,
	})
	if err != nil {
		return passkeyRefused("signature", err)
	}
	// The run's own check, before anything is written: a signature nobody could count is no approval.
	id, err := signature.Verify(st.text, armored, st.namespace, a, s.cfg.Now())
	if err != nil {
		return &pageError{Status: http.StatusForbidden, What: "The signature does not count: " + err.Error(), Do: "Ask the administrator to check your allowed_signers line."}
	}
	sigSum := sha256.Sum256(armored)
	kind, detail := ledger.EventConsoleSigned, fmt.Sprintf("%s signed %s of %s in the console", id.Principal(), st.namespace, pending.File)
	if pending.Kind == signRepeats {
		kind, detail = ledger.EventConsoleRepeatsAccepted, fmt.Sprintf("%s accepted the rows of %s held as possible repeats, in the console", id.Principal(), pending.File)
	}
	if err := s.record(r.Context(), kind, detail,
		map[string]string{"principal": id.Principal(), "fingerprint": id.Fingerprint, "namespace": st.namespace, "file": pending.File,
			"file_sha256": st.plan.FileSHA256, "plan_sha256": st.plan.Digest, "sig_file": filepath.Base(st.sigPath), "sig_sha256": hex.EncodeToString(sigSum[:])}); err != nil {
		return err
	}
	if st.statementPath != "" {
		if err := atomicfile.WriteBytes(st.statementPath, sigMode, st.text); err != nil {
			return err
		}
	}
	if err := atomicfile.WriteBytes(st.sigPath, sigMode, armored); err != nil {
		return err
	}
	verb := map[string]string{signApprove: "approved", signRefuse: "refused", signRepeats: "repeats accepted"}[pending.Kind]
	s.cfg.Logger.Info("console: plan "+verb, "principal", id.Principal(), "fingerprint", id.Fingerprint, "signature", filepath.Base(st.sigPath))
	writeJSON(w, http.StatusOK, map[string]string{"redirect": "/files", "message": fmt.Sprintf("%s by %s: wrote %s", verb, id.Principal(), filepath.Base(st.sigPath))})
	return nil
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

// safeName makes a principal fit a file name, as `payout approve` does.
func safeName(p string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ',' || r == ' ' {
			return '_'
		}
		return r
	}, p)
}
