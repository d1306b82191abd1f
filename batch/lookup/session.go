package lookup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/ledger"
)

// Ledger is what lookups read and record: the row as the ledger holds it, the payouts known to
// exist (to prove that lookups work), and every move a lookup decides. A ledger.RunWrites is one.
type Ledger interface {
	Get(ctx context.Context, ref string) (ledger.Payout, error)
	WalkPayouts(ctx context.Context, set ledger.Filter, page int, fn func(ledger.Payout) error) error
	Apply(ctx context.Context, changes ...ledger.Change) error
}

// Service is what lookups ask of the payout service.
type Service interface {
	GetPayout(ctx context.Context, reference string) (api.Payout, error)
}

// Config is how a Session looks payouts up.
type Config struct {
	Ledger  Ledger
	Service Service
	// Limiter paces the lookups that prove lookups work, which go outside the pool.
	Limiter pool.Limiter
	Logger  *slog.Logger // discarded when nil
	Now     func() time.Time
	// RunID is the ledger run the changes are recorded under.
	RunID string
	// MaxErrors lookups of a row with no usable answer give it up.
	MaxErrors int
	Backoff   Backoff
	// Grace is how long, and by how many lookups, an UNKNOWN row must be reported not found
	// before it is proven never created.
	Grace outcome.Grace
	// Account, when set, gives the account number of a payout in hand, for the debug log.
	Account func(ref string) (string, bool)
}

// Stuck is a row found stuck (outcome.Stuck): its reference and how many times it was sent.
type Stuck struct {
	Ref      string `json:"ref"`
	Attempts int    `json:"attempts"`
}

// Session is what one run or reconciliation shares while it looks payouts up: the ledger run
// their changes are recorded under, and whether lookups by external_invoice_ref are proven to
// work.
type Session struct {
	cfg    Config
	log    *slog.Logger
	proven atomic.Bool // a lookup by external_invoice_ref found a payout in this session
	broken atomic.Bool // a payout known to exist was reported not found: lookups prove nothing
	mu     sync.Mutex
	known  []string // refs accepted by the service in this session, for proving lookups work
	stuck  []Stuck  // rows found stuck in this session
}

// New is a Session of cfg.
func New(cfg Config) *Session {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Session{cfg: cfg, log: cfg.Logger}
}

// SettledByCallback turns a state conflict into "done": only a callback moves rows beside a run
// (the run holds the ledger's lock), and only towards SUCCEEDED, so the row has its answer.
func (s *Session) SettledByCallback(o Result) Result {
	if o.Fatal != nil && errors.Is(o.Fatal, ledger.ErrStateConflict) {
		s.log.Info("payout moved by a callback while this task handled it", "ref", o.Task.Ref, "err", o.Fatal.Error())
		return Result{Task: o.Task, ServiceOK: o.ServiceOK, RowDone: true}
	}
	return o
}

// Apply records changes of t's row under the session's run; a failure is the task's result,
// which stops the pool.
func (s *Session) Apply(ctx context.Context, t Task, changes ...ledger.Change) *Result {
	for i := range changes {
		changes[i].Ref, changes[i].RunID = t.Ref, s.cfg.RunID
	}
	if err := s.cfg.Ledger.Apply(ctx, changes...); err != nil {
		return &Result{Task: t, Fatal: fmt.Errorf("record %s: %w", t.Ref, err)}
	}
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.logChanges(ctx, t.Ref, changes)
	}
	return nil
}

// logChanges logs, at debug level, the changes recorded for one payout, its account masked.
func (s *Session) logChanges(ctx context.Context, ref string, changes []ledger.Change) {
	account := ""
	if s.cfg.Account != nil {
		if a, ok := s.cfg.Account(ref); ok {
			account = outcome.MaskAccount(a)
		}
	}
	for _, c := range changes {
		what := c.Detail
		if what == "" {
			what = c.Error
		}
		s.log.DebugContext(ctx, "payout "+string(c.From)+" -> "+string(c.To), "ref", ref, "account", account, "detail", what)
	}
}

// Remember keeps ref, a payout the service accepted in this session, to prove lookups with.
func (s *Session) Remember(ref string) {
	s.mu.Lock()
	if len(s.known) < 16 {
		s.known = append(s.known, ref)
	}
	s.mu.Unlock()
}

// Stuck is the rows found stuck so far.
func (s *Session) Stuck() []Stuck {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Stuck(nil), s.stuck...)
}

func (s *Session) noteStuck(p ledger.Payout) {
	s.mu.Lock()
	s.stuck = append(s.stuck, Stuck{Ref: p.Ref, Attempts: p.Attempts})
	s.mu.Unlock()
}

// Broken reports whether a payout known to exist was reported not found: "not found" proves
// nothing on this service.
func (s *Session) Broken() bool { return s.broken.Load() }

// MarkBroken records that a payout known to exist was reported not found, as a caller's own
// lookup showed: from now on "not found" proves nothing in this session.
func (s *Session) MarkBroken() { s.broken.Store(true) }
