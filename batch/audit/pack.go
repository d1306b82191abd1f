// Package audit writes and checks the evidence pack of a run, and purges old personal data from
// the ledger while keeping its hash-chained trail valid.
//
// An evidence pack is a zip file holding:
//
//	run.json         the run's record, its input file's SHA-256, the chain head the pack was cut at
//	events.jsonl     the run's events (those it recorded and every event of its payouts), one JSON
//	                 object a line, oldest first, each with the fields its hash covers, its hash
//	                 and prev_hash, its payload and its payout's salt
//	approvals.jsonl  the signatures the run was approved on, one JSON object a line (and the
//	                 decisions an older version recorded on the run's file)
//	approvals/...    for each, the plan statement as signed (DIGEST-VALIDUNTIL.plan) and the
//	                 SSHSIG signature as stored (EVENT.sig)
//	allowed_signers  the lines of the allowed signers that name those signatures' keys
//	reports/...      the run's reports, written from the ledger when the pack was made
//	input/NAME       the input file itself, with --with-input
//	SHA256SUMS       the SHA-256 of every other member, in the format of sha256sum
//
// A pack may be signed: ExportOptions.Sign writes FILE.zip.sig beside it, a detached signature
// of the zip's bytes. Checking a pack (VerifyPack) reads it as a stream, within PackLimits, and
// holds each report row against the state its payout's events give.
package audit

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/untrusted"
	"github.com/payout/payout/ledger"
)

// PackFormat names the layout of an evidence pack in its run.json.
const PackFormat = "payout-evidence-pack-v1"

// Member names of a pack.
const (
	runMember       = "run.json"
	eventsMember    = "events.jsonl"
	approvalsMember = "approvals.jsonl"
	evidenceDir     = "approvals/"
	allowedMember   = "allowed_signers"
	sumsMember      = "SHA256SUMS"
	reportsDir      = "reports/"
	inputDir        = "input/"
)

// ErrInputChanged says that the input file offered for a pack is not the one the run read.
var ErrInputChanged = errors.New("the input file is not the one the run read")

// ExportOptions says which run to pack, and where.
type ExportOptions struct {
	RunID string
	Out   string // the pack's path; written atomically, mode 0600
	Input string // the input file to include, or "" for none
	Actor string // who makes the pack
	Now   time.Time
	// Zone is the time zone of the times the packed reports show people (UTC when nil).
	Zone *time.Location
	// AllowedSigners is the allowed_signers file the run's signatures are checked against: the
	// reports name only the signers it proves, and the pack carries its lines that were used.
	AllowedSigners string
	// Sign, when set, signs the pack once it is written: it reads the zip's bytes and returns a
	// detached signature, which Export writes to Out+SignatureSuffix (mode 0600). Export fails,
	// and removes the pack, when it fails: a pack meant to be signed is never left unsigned.
	Sign func(pack io.Reader) ([]byte, error)
}

// SignatureSuffix is added to a pack's name for its detached signature.
const SignatureSuffix = ".sig"

// PackInfo is a pack's run.json.
type PackInfo struct {
	Format      string `json:"format"`
	RunID       string `json:"run_id"`
	Kind        string `json:"kind"`
	File        string `json:"file"`
	InputSHA256 string `json:"input_sha256"`
	StartedAt   string `json:"started_at"`
	EndedAt     string `json:"ended_at"`
	Status      string `json:"status"`
	ExitCode    int    `json:"exit_code"`
	ChainHead   string `json:"chain_head"`
	ExportedAt  string `json:"exported_at"`
	ExportedBy  string `json:"exported_by"`
	Events      int    `json:"events"`
}

// PackStore is what exporting a pack reads: the chain and a run's evidence, and the run's
// reports written again.
type PackStore interface {
	ledger.AuditStore
	runs.ReportLedger
}

// Export writes the evidence pack of a run. It returns what the pack's run.json says.
func Export(ctx context.Context, db PackStore, o ExportOptions) (PackInfo, error) {
	run, err := db.GetRun(ctx, o.RunID)
	if err != nil {
		return PackInfo{}, err
	}
	members := map[string][]byte{}
	if o.Input != "" {
		data, err := readInput(o.Input)
		if err != nil {
			return PackInfo{}, err
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != run.FileSHA256 {
			return PackInfo{}, fmt.Errorf("%s: %w (SHA-256 %x, the run read %s)", o.Input, ErrInputChanged, sum, run.FileSHA256)
		}
		members[inputDir+filepath.Base(o.Input)] = data
	}
	head, err := addReports(ctx, db, run, o, members)
	if err != nil {
		return PackInfo{}, err
	}
	events, err := db.RunEvents(ctx, run.ID, head)
	if err != nil {
		return PackInfo{}, err
	}
	if members[eventsMember], err = jsonLines(events); err != nil {
		return PackInfo{}, err
	}
	approvals, err := db.Approvals(ctx, run.FileSHA256)
	if err != nil {
		return PackInfo{}, err
	}
	if members[approvalsMember], err = jsonLines(approvals); err != nil {
		return PackInfo{}, err
	}
	if err := addSignatures(ctx, db, run.ID, o.AllowedSigners, members); err != nil {
		return PackInfo{}, err
	}
	info := PackInfo{Format: PackFormat, RunID: run.ID, Kind: string(run.Kind), File: run.File, InputSHA256: run.FileSHA256,
		StartedAt: fmtTime(run.StartedAt), EndedAt: fmtTime(run.EndedAt), Status: string(run.Status), ExitCode: run.ExitCode,
		ChainHead: head.String(), ExportedAt: fmtTime(o.Now), ExportedBy: o.Actor, Events: len(events)}
	if members[runMember], err = json.MarshalIndent(info, "", "  "); err != nil {
		return PackInfo{}, err
	}
	if err := atomicfile.Write(o.Out, 0o600, func(w io.Writer) error { return writeZip(w, members, o.Now) }); err != nil {
		return PackInfo{}, fmt.Errorf("write evidence pack: %w", err)
	}
	if o.Sign == nil {
		// A signature left from an earlier pack of that name would sign other bytes.
		if err := os.Remove(o.Out + SignatureSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return PackInfo{}, fmt.Errorf("remove the signature of an earlier pack: %w", err)
		}
	} else {
		if err := signPack(o.Out, o.Sign); err != nil {
			_ = os.Remove(o.Out)
			return PackInfo{}, fmt.Errorf("sign evidence pack %s: %w; no pack written", o.Out, err)
		}
	}
	return info, nil
}

// readInput reads a run's input for its pack: the bytes hashed are the bytes packed, and the
// input is opened as a run opens it (package untrusted).
func readInput(path string) ([]byte, error) {
	f, _, err := untrusted.OpenOwned(path)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// signPack writes the detached signature of the pack at path beside it.
func signPack(path string, sign func(io.Reader) ([]byte, error)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sig, err := sign(f)
	if err != nil {
		return err
	}
	return atomicfile.Write(path+SignatureSuffix, 0o600, func(w io.Writer) error {
		_, err := w.Write(sig)
		return err
	})
}

// maxReportTries bounds how often Export writes the reports again while other processes append
// events: the reports must print the head the pack is cut at.
const maxReportTries = 5

// addReports writes the run's reports into a private temporary folder and adds them to members.
// It returns the chain head the reports print: it was the head before and after they were written.
func addReports(ctx context.Context, db PackStore, run ledger.Run, o ExportOptions, members map[string][]byte) (ledger.ChainHead, error) {
	dir, err := os.MkdirTemp("", "payout-pack-")
	if err != nil {
		return ledger.ChainHead{}, err
	}
	defer os.RemoveAll(dir)
	for try := 0; try < maxReportTries; try++ {
		before, err := db.ChainHead(ctx)
		if err != nil {
			return ledger.ChainHead{}, err
		}
		paths, err := runs.WriteReports(ctx, db, run.ID, dir, "", o.Now, o.Zone, o.AllowedSigners)
		if err != nil {
			return ledger.ChainHead{}, err
		}
		after, err := db.ChainHead(ctx)
		if err != nil {
			return ledger.ChainHead{}, err
		}
		if before == after {
			for _, p := range paths.List() {
				if members[reportsDir+filepath.Base(p)], err = os.ReadFile(p); err != nil {
					return ledger.ChainHead{}, err
				}
			}
			return after, nil
		}
		for _, p := range paths.List() {
			_ = os.Remove(p) // written again on the next try
		}
	}
	return ledger.ChainHead{}, fmt.Errorf("the ledger changed while the run's reports were written %d times: try again when it is quieter", maxReportTries)
}

func jsonLines[T any](items []T) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

// writeZip writes members in name order, then SHA256SUMS over them, each dated modified (the
// export's time: an unzip tool shows it, where a zero time would show 1980).
func writeZip(w io.Writer, members map[string][]byte, modified time.Time) error {
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	var sums strings.Builder
	zw := zip.NewWriter(w)
	for _, n := range names {
		if err := addMember(zw, n, members[n], modified); err != nil {
			return err
		}
		sum := sha256.Sum256(members[n])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	if err := addMember(zw, sumsMember, []byte(sums.String()), modified); err != nil {
		return err
	}
	return zw.Close()
}

func addMember(zw *zip.Writer, name string, data []byte, modified time.Time) error {
	f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modified})
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return err
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// PackedSignature is a line of approvals.jsonl for a signature the run was approved on: the
// members holding the statement as signed and the signature, and what the exporter found.
type PackedSignature struct {
	EventID    int64  `json:"event_id"`
	At         string `json:"at"`
	Principal  string `json:"principal"`
	PlanSHA256 string `json:"plan_sha256"`
	ValidUntil string `json:"valid_until"`
	Statement  string `json:"statement"`
	Signature  string `json:"signature"`
	Problem    string `json:"problem,omitempty"`
	// Purged says that purge forgot the statement before the pack was made.
	Purged bool `json:"purged,omitempty"`
}

// addSignatures adds the evidence of the run's approvals to members: each signature and the
// statement it signed, a line of approvals.jsonl for each, and the allowed_signers lines that
// name their keys, so that an auditor checks each with ssh-keygen -Y verify and the pack alone.
func addSignatures(ctx context.Context, db PackStore, runID, allowedSigners string, members map[string][]byte) error {
	events, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved, RunID: runID})
	if err != nil || len(events) == 0 {
		return err
	}
	checked, err := approval.CheckStoredApprovals(ctx, db, events, allowedSigners)
	if err != nil {
		return err
	}
	var lines []byte
	var allowed []string
	for _, a := range checked {
		e := a.Event
		p := PackedSignature{EventID: e.ID, At: fmtTime(e.At), Principal: a.Signer.Principal(), PlanSHA256: e.Facts["plan_sha256"],
			ValidUntil: e.Facts["valid_until"], Problem: a.Problem, Purged: a.Purged}
		if a.Statement != nil {
			p.Statement = evidenceDir + fmt.Sprintf("%s-%s.plan", e.Facts["plan_sha256"], e.Facts["valid_until"])
			members[p.Statement] = a.Statement
		}
		if len(a.Signature) > 0 {
			p.Signature = evidenceDir + fmt.Sprintf("%d.sig", e.ID)
			members[p.Signature] = a.Signature
		}
		for _, l := range a.AllowedLines {
			if !slices.Contains(allowed, l) {
				allowed = append(allowed, l)
			}
		}
		line, err := json.Marshal(p)
		if err != nil {
			return err
		}
		lines = append(append(lines, line...), '\n')
	}
	members[approvalsMember] = append(members[approvalsMember], lines...)
	if len(allowed) > 0 {
		members[allowedMember] = []byte(strings.Join(allowed, "\n") + "\n")
	}
	return nil
}
