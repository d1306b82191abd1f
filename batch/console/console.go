package console

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/consolestore"
)

// Defaults of the console.
const (
	DefaultMaxUpload  = 32 << 20 // a payroll workbook of 200,000 rows is well below
	DefaultSessionTTL = 8 * time.Hour
	maxFormBody       = 64 << 10 // every POST but an upload: a form or a WebAuthn answer
)

//go:embed assets
var assets embed.FS

// Planner computes a file's plan exactly as a run would, and names the banks it pays into.
type Planner interface {
	// Plan reads the file at path and returns its plan, and the provider names by id. A file
	// that cannot be planned is an error saying why.
	Plan(ctx context.Context, path string) (intake.Plan, map[int64]string, error)
}

// Ledger is what the console needs of the ledger (ledger.DB): it appends events to the hash
// chain and reads the runs a file is compared with.
type Ledger interface {
	AppendLedgerEvents(ctx context.Context, events ...ledger.LedgerEvent) (ledger.ChainHead, error)
	History
	Auditor
}

// Sessions keeps the sessions every console host on the ledger shares
// (ledger.DB.ConsoleSessions).
type Sessions interface {
	Session(ctx context.Context, tokenSHA256 string, now time.Time) (consolestore.Session, bool, error)
	BeginCeremony(ctx context.Context, s consolestore.Session, now time.Time, maxVisitors int) error
	TakeCeremony(ctx context.Context, tokenSHA256 string, now time.Time) (string, error)
	SignIn(ctx context.Context, oldSHA256 string, s consolestore.Session) error
	End(ctx context.Context, tokenSHA256 string) error
}

// Config is what the console needs.
type Config struct {
	// RPID is the relying-party id: the console's host name, or a parent domain of it. Every
	// passkey, and so every signer's key, is bound to it.
	RPID string
	// Origin is where browsers reach the console: https://HOST[:PORT], or http on a loopback
	// address. Cookies are Secure when it is https.
	Origin string
	// AllowedSigners is the path of the allowed_signers file (PAYOUT_ALLOWED_SIGNERS).
	AllowedSigners string
	// Folder is folder mode's directory (`payout watch DIR`).
	Folder  string
	Planner Planner
	// MaxUpload bounds a dropped file (DefaultMaxUpload when 0).
	MaxUpload int64
	// Ledger is where every sign-in and every signature made in the console becomes an event of
	// the chain before it takes effect, and whose runs say what a file changes.
	Ledger Ledger
	// Sessions keeps who is signed in and the passkey ceremonies under way, for every console
	// host on the ledger.
	Sessions Sessions
	// AmountShare is how far an amount may move from what the last paid file of the same name
	// paid the payee before the review page points it out (DefaultAmountShare when 0).
	AmountShare decimal.Decimal
	// Packs writes a run's evidence pack for the auditors' page to offer (none offered when nil).
	Packs PackWriter
	// SessionTTL is how long a sign-in lasts (DefaultSessionTTL when 0).
	SessionTTL time.Duration
	// Zone is the operator's zone, in which pages show times (UTC when nil).
	Zone   *time.Location
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is the console's http.Handler.
type Server struct {
	cfg      Config
	webauthn *webauthn.WebAuthn
	pages    *template.Template
	mux      *http.ServeMux
	secure   bool
}

// New checks cfg and returns the console.
func New(cfg Config) (*Server, error) {
	origin, err := url.Parse(cfg.Origin)
	if err != nil || origin.Host == "" || (origin.Scheme != "https" && origin.Scheme != "http") || origin.Path != "" && origin.Path != "/" {
		return nil, fmt.Errorf("console: origin %q: want https://HOST[:PORT] as browsers reach the console", cfg.Origin)
	}
	cfg.Origin = origin.Scheme + "://" + origin.Host
	host := origin.Hostname()
	if cfg.RPID == "" {
		cfg.RPID = host
	}
	if host != cfg.RPID && !strings.HasSuffix(host, "."+cfg.RPID) {
		return nil, fmt.Errorf("console: relying-party id %q: the origin's host %s must be it or end with .%s", cfg.RPID, host, cfg.RPID)
	}
	if cfg.AllowedSigners == "" {
		return nil, errors.New("console: no allowed_signers file: set PAYOUT_ALLOWED_SIGNERS to the file that lists who may sign")
	}
	if cfg.Folder == "" || cfg.Planner == nil || cfg.Ledger == nil || cfg.Sessions == nil {
		return nil, errors.New("console: a folder-mode directory, a planner, a ledger and its sessions are required")
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if !cfg.AmountShare.IsPositive() {
		cfg.AmountShare = DefaultAmountShare
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	wa, err := webauthn.New(&webauthn.Config{RPID: cfg.RPID, RPDisplayName: "payout console", RPOrigins: []string{cfg.Origin}})
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	pages, err := template.New("").Funcs(template.FuncMap{"money": money, "base": filepath.Base,
		"when": func(t time.Time) string { return words.FormatTime(t, cfg.Zone) }}).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	s := &Server{cfg: cfg, webauthn: wa, pages: pages, secure: origin.Scheme == "https"}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := http.NewServeMux()
	static := http.StripPrefix("/static/", http.FileServerFS(mustSub(assets, "assets/static")))
	m.HandleFunc("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		// Files only: no folder listing.
		if r.PathValue("file") == "" {
			http.NotFound(w, r)
			return
		}
		static.ServeHTTP(w, r)
	})
	m.HandleFunc("GET /{$}", s.page(s.home))
	m.HandleFunc("GET /register", s.page(s.registerPage))
	m.HandleFunc("POST /register/begin", s.post(s.registerBegin))
	m.HandleFunc("POST /register/finish", s.post(s.registerFinish))
	m.HandleFunc("POST /signin/begin", s.post(s.signInBegin))
	m.HandleFunc("POST /signin/finish", s.post(s.signInFinish))
	m.HandleFunc("POST /signout", s.post(s.signOut))
	m.HandleFunc("GET /files", s.page(s.signedIn(s.filesPage)))
	m.HandleFunc("POST /files", s.upload)
	m.HandleFunc("GET /review", s.page(s.signedIn(s.reviewPage)))
	m.HandleFunc("POST /sign/begin", s.post(s.signedIn(s.signBegin)))
	m.HandleFunc("POST /sign/finish", s.post(s.signedIn(s.signFinish)))
	m.HandleFunc("GET /report", s.page(s.signedIn(s.report)))
	m.HandleFunc("GET /audit", s.page(s.signedIn(s.auditPage)))
	m.HandleFunc("POST /audit/verify", s.post(s.signedIn(s.auditVerify)))
	m.HandleFunc("GET /audit/pack", s.page(s.signedIn(s.auditPack)))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, &pageError{Status: http.StatusNotFound, What: "There is no such page.", Do: "Go back to the list of files."})
	})
	s.mux = m
}

// ServeHTTP answers with the headers every page of a payments console needs.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer a form POST carries "Origin: null".
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if s.secure {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	s.mux.ServeHTTP(w, r)
}

// pageError is an error a person reads: what is wrong and what to do.
type pageError struct {
	Status int
	What   string
	Do     string
}

func (e *pageError) Error() string { return e.What }

// handler is a page or an action: it returns an error to show on the error page.
type handler func(w http.ResponseWriter, r *http.Request, sess *session) error

// page serves a GET with the visitor's session (a new token on first visit, for its CSRF token).
func (s *Server) page(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.session(r.Context(), s.cookie(r))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if sess == nil {
			sess = visitor(randomToken())
			s.setCookie(w, sess)
		}
		if err := h(w, r, sess); err != nil {
			s.fail(w, r, err)
		}
	}
}

// post serves a POST: a bounded body, from the console's own origin, with the session's CSRF token.
func (s *Server) post(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		sess, err := s.checkPost(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if err := h(w, r, sess); err != nil {
			s.fail(w, r, err)
		}
	}
}

var errCrossSite = &pageError{Status: http.StatusForbidden, What: "This request did not come from a page of this console (its security token is missing or stale), so nothing was done.",
	Do: "Open the console's page again and repeat what you did there."}

// checkPost refuses a POST that another site could have made: one from another origin, or
// without the token of the session its cookie names.
func (s *Server) checkPost(r *http.Request) (*session, error) {
	if origin := r.Header.Get("Origin"); origin != "" && origin != s.cfg.Origin {
		return nil, errCrossSite
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return nil, errCrossSite
	}
	sess, err := s.session(r.Context(), s.cookie(r))
	if err != nil {
		return nil, err
	}
	if sess == nil {
		return nil, errCrossSite
	}
	token := r.Header.Get("X-CSRF-Token")
	if token == "" {
		token = r.FormValue("csrf")
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(sess.csrf)) != 1 {
		return nil, errCrossSite
	}
	return sess, nil
}

// signedIn serves h only to a person signed in whose allowed_signers line is still there.
func (s *Server) signedIn(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, sess *session) error {
		if sess.principal == "" {
			return &pageError{Status: http.StatusUnauthorized, What: "You are not signed in.", Do: "Sign in with your passkey on the console's first page."}
		}
		p, err := s.person(r.Context(), sess)
		if err != nil {
			return err
		}
		return h(w, r, sess.with(p))
	}
}

// fail shows err as a page (or, to the script, as JSON with the same words).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var pe *pageError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &tooLarge):
		pe = &pageError{Status: http.StatusRequestEntityTooLarge, What: fmt.Sprintf("What was sent is larger than the console takes (%d bytes).", tooLarge.Limit),
			Do: "Split the file, or ask the administrator to raise --max-upload."}
	default:
		s.cfg.Logger.Error("console: request failed", "path", r.URL.Path, "err", err)
		pe = &pageError{Status: http.StatusInternalServerError, What: "The console could not do this: " + err.Error(), Do: "Try again; if it fails again, give the administrator the time it happened."}
	}
	if r.Header.Get("Accept") == "application/json" {
		writeJSON(w, pe.Status, map[string]string{"error": pe.What, "do": pe.Do})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(pe.Status)
	_ = s.pages.ExecuteTemplate(w, "error.html", map[string]any{"Title": http.StatusText(pe.Status), "Error": pe})
}

// render writes a page from the layout with data.
func (s *Server) render(w http.ResponseWriter, name string, sess *session, data map[string]any) error {
	data["CSRF"] = sess.csrf
	data["Person"] = sess.person
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return s.pages.ExecuteTemplate(w, name, data)
}

func (s *Server) home(w http.ResponseWriter, r *http.Request, sess *session) error {
	if sess.principal != "" {
		http.Redirect(w, r, "/files", http.StatusSeeOther)
		return nil
	}
	return s.render(w, "signin.html", sess, map[string]any{"Title": "Sign in"})
}

// record appends an event to the ledger's chain; what it records does not happen without it.
func (s *Server) record(ctx context.Context, kind, detail string, facts map[string]string) error {
	if _, err := s.cfg.Ledger.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: kind, Detail: detail, Facts: facts}); err != nil {
		s.cfg.Logger.Error("console: record in the ledger", "kind", kind, "err", err)
		return &pageError{Status: http.StatusServiceUnavailable, What: "The ledger could not record this, so it was not done.",
			Do: "Try again in a minute; if it fails again, ask the administrator to check the ledger (payout audit verify)."}
	}
	return nil
}

// loadAllowed reads the allowed signers again: a line removed ends its person's access now.
func (s *Server) loadAllowed() (*signature.AllowedSigners, error) {
	a, err := signature.LoadAllowedSigners(s.cfg.AllowedSigners)
	if err != nil {
		return nil, &pageError{Status: http.StatusServiceUnavailable, What: "The console cannot read who may sign: " + err.Error(), Do: "Ask the administrator to fix PAYOUT_ALLOWED_SIGNERS."}
	}
	return a, nil
}

// mustSub is the embedded folder dir, which the build guarantees.
func mustSub(f embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// money shows an amount as people read MYR: two decimals and thousands separated.
func money(d decimal.Decimal) string {
	s := d.StringFixed(2)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String() + "." + frac
	if neg {
		out = "-" + out
	}
	return out
}
