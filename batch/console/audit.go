package console

import (
	"context"
	"net/http"
	"path/filepath"

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
	runs, err := s.cfg.Ledger.FindRuns(ctx, ledger.RunFilter{Latest: 50})
	if err != nil {
		return err
	}
	views := make([]runView, len(runs))
	for i, run := range runs {
		views[i] = runView{Run: run, Name: filepath.Base(run.File)}
	}
	return s.render(w, "audit.html", sess, map[string]any{"Title": "Audit", "Policy": pol, "Head": head, "Runs": views, "Report": rep})
}
