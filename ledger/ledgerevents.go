package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kinds of the events about the ledger itself (their ref is empty; the kind is their to_state).
const (
	// EventPolicy sets the approval policy: facts "approvals" (how many distinct signers a
	// file's plan needs), "was", and for a lowering the signers that allowed it ("signed_by"),
	// the policy statement they signed ("statement") and their SSHSIG signatures, armored, one
	// after another ("signatures"), which every run checks again.
	EventPolicy = "POLICY"
	// EventApproved records one signature a run went ahead on, before it paid anything: facts
	// "principal", "fingerprint", "plan_sha256", "sig_sha256", "sig_file", "file_sha256",
	// "valid_until" and the SSHSIG signature itself, armored as it was signed ("signature"). The
	// statement it signed is the plan's EventPlan payload followed by its valid-until line.
	EventApproved = "APPROVED"
	// EventRejected records a signed refusal that a run met beside its file: facts "rejected"
	// (who and why), "plan_sha256", "file_sha256", "sheet", and the refusal statement and its
	// signature as signed ("statement", "signature"). Once recorded, the plan and the file's
	// bytes never pay, whether or not the refusal's files are still there.
	EventRejected = "REJECTED"
	// EventPlan stores a plan statement that signatures were accepted on, once per plan, with no
	// run: facts "plan_sha256", "file_sha256", "sheet", "first_run"; its payload is the statement's text before its
	// valid-until line, whose SHA-256 is "plan_sha256" (so the hash that covers the facts covers
	// the payload). It is the evidence each send is proved against.
	EventPlan = "PLAN"
	// EventRepeatsAccepted records one signature by which folder mode pays a file's rows held as
	// possible repeats, before its run: facts "principal", "fingerprint", "file", "file_sha256",
	// "sig_file", "sig_sha256", "valid_until" and the SSHSIG signature itself, armored as signed
	// ("signature"), in namespace payout-repeat, over the file's plan with those rows paid.
	EventRepeatsAccepted = "REPEATS-ACCEPTED"
)

// ErrPolicyChanged is returned by AppendLedgerEvents for a policy event decided on a policy that
// is no longer in force: whoever decided it reads the policy again and decides again.
var ErrPolicyChanged = errors.New("the approval policy changed meanwhile")

// FactReplaces is the fact by which a policy event names the policy event it was decided on and
// replaces (PolicyRef). Readers refuse one that names another than the policy before it. A
// genesis, and the policy events of earlier versions, do not carry it, and are read without it.
const FactReplaces = "replaces"

// LedgerEvent is an event about the ledger rather than one payout.
type LedgerEvent struct {
	ID     int64
	RunID  string
	Kind   string // EventPolicy, EventApproved or EventRejected
	Detail string
	Facts  map[string]string
	// Payload is the text an EventPlan stores; empty for every other kind. The ledger does not
	// judge it: a reader trusts it only when its SHA-256 is the event's plan_sha256 fact
	// (approval.StoredStatement).
	Payload string
	At      time.Time
	Actor   string
	Hash    string
}

// appendLedgerEvents links events into the chain inside tx.
func (db *DB) appendLedgerEvents(ctx context.Context, tx *sql.Tx, events []LedgerEvent) (ChainHead, error) {
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return head, err
	}
	chain := db.newChainer(head)
	now := fmtTime(db.now())
	for _, le := range events {
		e := &ChainEvent{RunID: le.RunID, At: now, To: le.Kind, Detail: le.Detail, Facts: factsJSON(le.Facts), Payload: le.Payload}
		chain.link(e)
		if _, err := tx.ExecContext(ctx, insertEventSQL, eventArgs(nil, e)...); err != nil {
			return head, err
		}
	}
	return chain.head, nil
}

// AppendLedgerEvents appends events about the ledger to the chain, in one transaction, and
// returns the chain's new head. A policy event (EventPolicy) is appended only while the policy it
// names in its FactReplaces is still in force, ErrPolicyChanged otherwise: two people who change
// the policy at once cannot both decide on the same one, and no caller appends a policy change
// without saying what it replaces. A call holds at most one policy event.
func (db *DB) AppendLedgerEvents(ctx context.Context, events ...LedgerEvent) (ChainHead, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return ChainHead{}, fmt.Errorf("append events: %w", err)
	}
	defer tx.Rollback()
	if err := checkPolicyEvent(ctx, tx, events); err != nil {
		return ChainHead{}, fmt.Errorf("append events: %w", err)
	}
	head, err := db.appendLedgerEvents(ctx, tx, events)
	if err != nil {
		return head, fmt.Errorf("append events: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return head, fmt.Errorf("append events: %w", err)
	}
	return head, nil
}

// checkPolicyEvent refuses, inside the transaction that would append them, events that hold more
// than one policy event, or one whose FactReplaces is not the policy in force.
func checkPolicyEvent(ctx context.Context, tx *sql.Tx, events []LedgerEvent) error {
	var change *LedgerEvent
	for i := range events {
		if events[i].Kind != EventPolicy {
			continue
		}
		if change != nil {
			return errors.New("two policy events in one call: append each on its own, on the policy the one before set")
		}
		change = &events[i]
	}
	if change == nil {
		return nil
	}
	now, err := readPolicy(ctx, tx)
	if err != nil {
		return err
	}
	if in := PolicyRef(now.Event); change.Facts[FactReplaces] != in {
		return fmt.Errorf("%w: the policy in force is event %s, and this change was decided on %q: read it again", ErrPolicyChanged, in, change.Facts[FactReplaces])
	}
	return nil
}

// PolicyRef names a policy event as a change that replaces it does, in its FactReplaces and in the
// statement of a lowering: "ID:HASH", or "none" for no event (a ledger without its genesis, which
// no command pays from).
func PolicyRef(e LedgerEvent) string {
	if e.ID == 0 {
		return "none"
	}
	return strconv.FormatInt(e.ID, 10) + ":" + e.Hash
}

// ApprovalPolicy is the ledger's approval policy: how many signatures by distinct principals a
// file's plan needs before a run pays it. Event is the event that set it (zero: never set, no
// approval needed).
type ApprovalPolicy struct {
	Approvals int
	Event     LedgerEvent
	// Changes are every policy event, oldest first, as the chain holds them: a reader that
	// decides money re-checks the signatures each lowering among them carries, which the ledger
	// stores and cannot judge (anyone who may write the ledger could append a lowering with its
	// hash computed).
	Changes []PolicyChange
}

// PolicyChange is one policy event: the count it set, the count it replaced, and the policy
// event it replaced as a policy statement names it ("ID:HASH", or "none" for the first).
type PolicyChange struct {
	Event          LedgerEvent
	Approvals, Was int
	Replaces       string
}

const ledgerEventColumns = `id, run_id, to_state, detail, facts, payload, at, actor, hash`

func scanLedgerEvent(s scanner) (LedgerEvent, error) {
	var e LedgerEvent
	var facts, at string
	if err := s.Scan(&e.ID, &e.RunID, &e.Kind, &e.Detail, &facts, &e.Payload, &at, &e.Actor, &e.Hash); err != nil {
		return e, err
	}
	e.Facts = decodeFacts(facts)
	t, err := parseTime(at)
	e.At = t
	return e, err
}

// readPolicy reads the policy in force through q: the latest policy event, once every policy
// event has been checked, since the policy decides whether a file is paid without signatures.
// Each must match its hash and link to the event before it, and say the count it replaced; one
// that lowers the count must name the signers that allowed it. A policy event written by hand
// through SQL (a role of the ledger's database can) fails one of these, and no command pays on
// it ("run payout audit verify"). One forged with its hash recomputed, appended at the chain's
// head, passes here: the signatures a lowering stores are checked again by every reader that
// decides money (Changes), against the allowed signers, which the database does not hold.
func readPolicy(ctx context.Context, q txQuerier) (ApprovalPolicy, error) {
	return readPolicyEvents(ctx, q, true)
}

// readPolicyEvents is readPolicy; without needGenesis (the upgrade that writes the genesis) a
// chain without a genesis is read as earlier versions read it.
func readPolicyEvents(ctx context.Context, q txQuerier, needGenesis bool) (ApprovalPolicy, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+chainEventColumns+`, COALESCE((SELECT hash FROM events p WHERE p.id = e.id - 1),
		(SELECT hash FROM row_events p WHERE p.id = e.id - 1), ''), COALESCE((SELECT at FROM events p WHERE p.id = e.id - 1),
		(SELECT at FROM row_events p WHERE p.id = e.id - 1), '') FROM events e WHERE ref = '' AND to_state = $1 ORDER BY id`, EventPolicy)
	if err != nil {
		return ApprovalPolicy{}, fmt.Errorf("approval policy: %w", err)
	}
	defer rows.Close()
	var pol ApprovalPolicy
	genesis := false
	for rows.Next() {
		var before, beforeAt string
		e, err := scanChainEvent(headScanner{rows: rows, tail: []any{&before, &beforeAt}})
		if err != nil {
			return ApprovalPolicy{}, fmt.Errorf("approval policy: %w", err)
		}
		facts := decodeFacts(e.Facts)
		n, err := strconv.Atoi(facts["approvals"])
		switch {
		case err != nil || n < 0:
			return ApprovalPolicy{}, policyError(e.ID, fmt.Sprintf("says approvals %q, not a count", facts["approvals"]))
		case HashEvent(e) != e.Hash || e.PrevHash != before:
			return ApprovalPolicy{}, policyError(e.ID, "does not match its hash or the event before it (written by hand)")
		case orZero(facts["was"]) != strconv.Itoa(pol.Approvals):
			return ApprovalPolicy{}, policyError(e.ID, fmt.Sprintf("says it replaced %q signers, the policy before it asked %d (written by hand)", facts["was"], pol.Approvals))
		case facts[FactReplaces] != "" && facts[FactReplaces] != PolicyRef(pol.Event):
			return ApprovalPolicy{}, policyError(e.ID, fmt.Sprintf("says it replaced policy event %s, the policy before it is %s (written by hand)", facts[FactReplaces], PolicyRef(pol.Event)))
		case n < pol.Approvals && facts["signed_by"] == "":
			return ApprovalPolicy{}, policyError(e.ID, fmt.Sprintf("lowers the signers from %d to %d without the signatures that allow it (written by hand)", pol.Approvals, n))
		case n < pol.Approvals && backdated(e.At, beforeAt):
			// Its signatures are checked as of its time: a lowering dated back to when a retired
			// key was still trusted would otherwise count.
			return ApprovalPolicy{}, policyError(e.ID, fmt.Sprintf("lowers the signers from %d to %d dated %s, before the event ahead of it (%s): backdated", pol.Approvals, n, e.At, beforeAt))
		}
		if problem := checkGenesis(e, facts["genesis"], genesis, pol); problem != "" {
			return ApprovalPolicy{}, policyError(e.ID, problem)
		}
		if facts["genesis"] != "" {
			// What came before was judged by the versions that wrote it, which kept no
			// signatures: the readers check the lowerings from here on.
			genesis, pol.Changes = true, nil
		}
		replaces := PolicyRef(pol.Event)
		le, err := ledgerEventOf(e)
		if err != nil {
			return ApprovalPolicy{}, fmt.Errorf("approval policy: %w", err)
		}
		pol = ApprovalPolicy{Approvals: n, Event: le,
			Changes: append(pol.Changes, PolicyChange{Event: le, Approvals: n, Was: pol.Approvals, Replaces: replaces})}
	}
	if err := rows.Err(); err != nil {
		return ApprovalPolicy{}, fmt.Errorf("approval policy: %w", err)
	}
	if needGenesis && !genesis {
		return ApprovalPolicy{}, fmt.Errorf("%w: no policy event of the ledger's init or of its upgrade is in the chain (deleted, or the ledger was not made by payout init); "+
			"nothing is paid from it: run payout audit verify, and restore the ledger from a backup", ErrPolicyLost)
	}
	return pol, nil
}

// ledgerEventOf is a chain event about the ledger as a LedgerEvent.
func ledgerEventOf(e ChainEvent) (LedgerEvent, error) {
	at, err := parseTime(e.At)
	return LedgerEvent{ID: e.ID, RunID: e.RunID, Kind: e.To, Detail: e.Detail, Facts: decodeFacts(e.Facts), At: at,
		Actor: e.Actor, Hash: e.Hash}, err
}

// policyError refuses the approval policy: nothing is paid on a policy that was not recorded
// as `payout policy` records one.
func policyError(id int64, problem string) error {
	return fmt.Errorf("%w: event %d %s; nothing is paid until the ledger is checked (run payout audit verify)", ErrPolicyForged, id, problem)
}

// ErrPolicyForged is returned (wrapped) when a policy event was not recorded as `payout policy`
// records one: edited, inserted, or backdated.
var ErrPolicyForged = errors.New("approval policy")

// ApprovalPolicy is the policy in force: the latest policy event of the chain.
func (db *DB) ApprovalPolicy(ctx context.Context) (ApprovalPolicy, error) {
	return readPolicy(ctx, db.sql)
}

// EventFilter selects events about the ledger of one kind: LedgerEvents returns them. Every
// other field set narrows it.
type EventFilter struct {
	Kind  string // EventApproved, EventRejected, EventHeadSigned, ...: required
	RunID string // recorded by this run
	// PlanSHA256 and FileSHA256, when either is set, select the events about that plan or that
	// file's bytes: those whose fact "plan_sha256" is PlanSHA256, or whose "file_sha256" is
	// FileSHA256 (a refusal holds back both).
	PlanSHA256, FileSHA256 string
	// Latest keeps only the latest event.
	Latest bool
}

// LedgerEvents lists the events about the ledger that f selects, oldest first.
func (db *DB) LedgerEvents(ctx context.Context, f EventFilter) ([]LedgerEvent, error) {
	if f.Kind == "" {
		return nil, fmt.Errorf("ledger events: no kind")
	}
	where, args := `ref = '' AND to_state = $1`, []any{f.Kind}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.RunID != "" {
		where += ` AND run_id = ` + param(f.RunID)
	}
	var about []string
	if f.PlanSHA256 != "" {
		about = append(about, db.eng.jsonField("facts", "plan_sha256")+` = `+param(f.PlanSHA256))
	}
	if f.FileSHA256 != "" {
		about = append(about, db.eng.jsonField("facts", "file_sha256")+` = `+param(f.FileSHA256))
	}
	if len(about) > 0 {
		where += ` AND (` + strings.Join(about, ` OR `) + `)`
	}
	order := ` ORDER BY id`
	if f.Latest {
		order = ` ORDER BY id DESC LIMIT 1`
	}
	out, err := scanAll(ctx, db.sql, `SELECT `+ledgerEventColumns+` FROM events WHERE `+where+order, scanLedgerEvent, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.what(), err)
	}
	return out, nil
}

// what names the events f selects, for an error.
func (f EventFilter) what() string {
	var about []string
	if f.PlanSHA256 != "" {
		about = append(about, "plan "+f.PlanSHA256)
	}
	if f.FileSHA256 != "" {
		about = append(about, "file "+f.FileSHA256)
	}
	switch {
	case f.Latest:
		return "latest " + f.Kind + " event"
	case len(about) > 0 && f.Kind == EventRejected:
		return "refusals of " + strings.Join(about, " or ")
	case len(about) > 0:
		return f.Kind + " events of " + strings.Join(about, " or ")
	case f.RunID != "" && f.Kind == EventApproved:
		return "approvals of run " + f.RunID
	case f.RunID != "":
		return f.Kind + " events of run " + f.RunID
	}
	return f.Kind + " events"
}

// sha256Hex is the hex SHA-256 of s.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
