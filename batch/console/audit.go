package console

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/payout/payout/ledger"
)

// Auditor is what the auditors' page reads of the ledger (ledger.DB); it changes nothing.
type Auditor interface {
	ApprovalPolicy(ctx context.Context) (ledger.ApprovalPolicy, error)
	ChainHead(ctx context.Context) (ledger.ChainHead, error)
	VerifyChain(ctx context.Context) (ledger.ChainReport, error)
}

// runView is one run as the auditors' page lists it.
type runView struct {
	ledger.Run
	Name string
}

// PackWriter writes the evidence pack of the run runID to the new file out, as `payout audit
// export` writes it (audit.Export), naming actor as who made it; the error wraps
// ledger.ErrNotFound when there is no such run.
type PackWriter func(ctx context.Context, runID, out, actor string) error

// runsShown bounds the runs, and the reconciliations, the auditors' page lists.
const runsShown = 50

// auditPage shows, to anyone signed in, the approval policy and its history, the latest runs and
// the chain's head; the chain is checked on request (a POST, since it reads the whole ledger).
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	return s.renderAudit(w, r, sess, nil)
}

func (s *Server) auditVerify(w http.ResponseWriter, r *http.Request, sess *session) error {
	rep, err := s.cfg.Ledger.VerifyChain(r.Context())
	if err != nil {
		return err
	}
	return s.renderAudit(w, r, sess, &rep)
}

func (s *Server) renderAudit(w http.ResponseWriter, r *http.Request, sess *session, rep *ledger.ChainReport) error {
	ctx := r.Context()
	pol, err := s.cfg.Ledger.ApprovalPolicy(ctx)
	if err != nil {
		return &pageError{Status: http.StatusServiceUnavailable, What: "The ledger's approval policy cannot be read: " + err.Error(),
			Do: "Run payout audit verify, and tell the administrator."}
	}
	head, err := s.cfg.Ledger.ChainHead(ctx)
	if err != nil {
		return err
	}
	runs, err := s.cfg.Ledger.FindRuns(ctx, ledger.RunFilter{Latest: 4 * runsShown})
	if err != nil {
		return err
	}
	// Latest first: what an auditor asks about is most often the last payday.
	var paid, reconciled []runView
	for _, run := range slices.Backward(runs) {
		v := runView{Run: run, Name: filepath.Base(run.File)}
		if run.Kind == ledger.KindReconcile {
			if len(reconciled) < runsShown {
				reconciled = append(reconciled, v)
			}
		} else if len(paid) < runsShown {
			paid = append(paid, v)
		}
	}
	return s.render(w, "audit.html", sess, map[string]any{"Title": "Audit", "Policy": pol, "Head": head, "Runs": paid, "Reconciliations": reconciled,
		"Report": rep, "Packs": s.cfg.Packs != nil})
}

// packName is what a run's id may bring to a download's file name.
var packName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// auditPack serves a run's evidence pack, made now from the ledger, to anyone signed in: a
// reader audits, and the pack is what `payout audit export` writes, which `payout audit verify
// --pack` checks without the ledger. It is unsigned: a pack to hand on is signed with audit export.
func (s *Server) auditPack(w http.ResponseWriter, r *http.Request, sess *session) error {
	runID := r.URL.Query().Get("run")
	if s.cfg.Packs == nil || runID == "" || len(runID) > 200 {
		return &pageError{Status: http.StatusNotFound, What: "There is no such evidence pack.", Do: "Choose a run on the audit page."}
	}
	dir, err := os.MkdirTemp("", "payout-console-pack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "pack.zip")
	if err := s.cfg.Packs(r.Context(), runID, out, sess.person.Principal+" (console)"); err != nil {
		if errors.Is(err, ledger.ErrNotFound) {
			return &pageError{Status: http.StatusNotFound, What: "The ledger has no run " + runID + ".", Do: "Choose a run on the audit page."}
		}
		return err
	}
	f, err := os.Open(out)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("console: evidence pack downloaded", "principal", sess.person.Principal, "run", runID, "bytes", info.Size())
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "evidence-" + packName.ReplaceAllString(runID, "_") + ".zip"}))
	http.ServeContent(w, r, "", info.ModTime(), f)
	return nil
}
