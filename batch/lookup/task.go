package lookup

import (
	"time"

	"github.com/payout/payout/batch/pool"
)

// Kind is what a task does to its row.
type Kind int

const (
	Send   Kind = iota // POST the payout: the row is READY
	LookUp             // GET it by external_invoice_ref: the row is UNKNOWN, or SUBMITTED without an invoice number
)

// Task is one send or lookup of a row, as the pool schedules it.
type Task struct {
	Ref     string
	Kind    Kind
	At      time.Time // not before
	Attempt int       // earlier tries of this kind that ended in an error
	Limited int       // 429s in a row for this task
	// Initial is a lookup that must finish before anything new is sent.
	Initial bool
	// Refused is a lookup that confirms the service's refusal of the row's create: "not found"
	// makes the row final FAILED, where an UNKNOWN row would wait out the grace.
	Refused bool
	// GraceEnds, on a lookup of a row reported not found, is when its grace is over: until then
	// it is only looked up.
	GraceEnds time.Time
}

func (t Task) Due() time.Time      { return t.At }
func (t Task) First() bool         { return t.Initial }
func (t Task) Waits() bool         { return t.Kind == Send }
func (t Task) GraceEnd() time.Time { return t.GraceEnds }

// SelfPaced is true of a send: it takes its turn after its intent is recorded (pool.TakeTurn).
func (t Task) SelfPaced() bool { return t.Kind == Send }

// Result is what a worker reports back to the pool after one task.
type Result = pool.Result[Task]
