package ledger

// The hash chain over events. Every event is appended through a chainer, which numbers it,
// stamps it with the process's actor and version, and computes its hash from its content and the
// previous event's hash. The chain's head is read inside the write transaction that appends (a
// run and the callback receiver write from two processes), once per transaction, and followed in
// memory from there.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ChainHead is the last event of the chain: its id and hash. The zero value is an empty chain.
type ChainHead struct {
	ID   int64
	Hash string
}

// String is the head as reports print it and as ParseChainHead reads it: "ID:HASH".
func (h ChainHead) String() string { return strconv.FormatInt(h.ID, 10) + ":" + h.Hash }

// ParseChainHead reads what ChainHead.String wrote.
func ParseChainHead(s string) (ChainHead, error) {
	i := strings.LastIndexByte(s, ':')
	n, err := strconv.ParseInt(s[:max(i, 0)], 10, 64)
	if i < 0 || err != nil || n < 0 {
		return ChainHead{}, fmt.Errorf("chain head %q: want EVENT_ID:SHA256", s)
	}
	return ChainHead{ID: n, Hash: s[i+1:]}, nil
}

// ChainEvent is an event as the chain covers it: every field that its hash covers, as stored
// (At is the stored text), and the hash. Payload is not covered itself: Personal is a salted
// digest of it, so that purge can mask it and the chain still holds.
type ChainEvent struct {
	ID       int64  `json:"id"`
	Ref      string `json:"ref"`
	RunID    string `json:"run_id"`
	At       string `json:"at"`
	From     string `json:"from_state"`
	To       string `json:"to_state"`
	Detail   string `json:"detail"`
	Actor    string `json:"actor"`
	Version  string `json:"version"`
	Facts    string `json:"facts"`    // JSON object, keys sorted: what the event set on the payout
	Personal string `json:"personal"` // salted digest of the personal data the event carried; may be empty
	PrevHash string `json:"prev_hash"`
	Hash     string `json:"hash"`
	Payload  string `json:"-"`
}

// chainDomain opens the hashed text of every event, so that the encoding can change one day
// without an old hash ever matching a new encoding.
const chainDomain = "payout-event-v1"

// HashEvent is the hash the chain gives e: hex SHA-256 of chainDomain and then id, ref, run_id,
// at, from_state, to_state, detail, actor, version, facts, personal and prev_hash, in that order,
// each written as its length in bytes (decimal), ':', the bytes, and ','. The length prefixes make
// the encoding unambiguous whatever the fields contain.
func HashEvent(e ChainEvent) string {
	h := sha256.New()
	buf := make([]byte, 0, 512)
	for _, f := range [...]string{chainDomain, strconv.FormatInt(e.ID, 10), e.Ref, e.RunID, e.At, e.From, e.To,
		e.Detail, e.Actor, e.Version, e.Facts, e.Personal, e.PrevHash} {
		buf = strconv.AppendInt(buf, int64(len(f)), 10)
		buf = append(buf, ':')
		buf = append(buf, f...)
		buf = append(buf, ',')
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// personalDigest is the salted digest of a payout's personal data, encoded like HashEvent's fields.
func personalDigest(salt string, fields ...string) string {
	h := sha256.New()
	var buf []byte
	for _, f := range append([]string{"payout-personal-v1", salt}, fields...) {
		buf = strconv.AppendInt(buf, int64(len(f)), 10)
		buf = append(buf, ':')
		buf = append(buf, f...)
		buf = append(buf, ',')
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// newSalt is 16 random bytes in hex.
func newSalt() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// factsJSON encodes what an event set as a JSON object: keys sorted, empty values left out, ""
// when nothing is left. The chain covers the text as stored, so readers only parse it.
func factsJSON(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	kv := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		kv = append(kv, k, m[k])
	}
	return factsText(kv...)
}

// factsText encodes key, value pairs, given in key order, as factsJSON does. It is the cheap
// path of the writers, which know their keys.
func factsText(kv ...string) string {
	buf := make([]byte, 0, 160)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if len(buf) == 0 {
			buf = append(buf, '{')
		} else {
			buf = append(buf, ',')
		}
		buf = appendJSONString(append(appendJSONString(buf, kv[i]), ':'), kv[i+1])
	}
	if len(buf) == 0 {
		return ""
	}
	return string(append(buf, '}'))
}

// appendJSONString appends s as a JSON string: quotes, backslashes and control characters escaped.
func appendJSONString(buf []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}

// changeFacts are the fields of a Change that the payout's row keeps, and how it moved the
// counters of the row: audit verify replays them to the row's attempts, not-found count and
// last error ("attempts": "0" when a release starts the count of sends again). nameDigest is the salted digest of the bank's name the change sets, if any.
func changeFacts(c Change, nameDigest string) string {
	attempt, attempts, check, confirmed := "", "", "", ""
	if c.CountAttempt {
		attempt = "1"
	}
	if c.ResetAttempts {
		attempts = "0" // a person released it: its count of sends starts again
	}
	if c.DisplayName != "" {
		check = nameCheckFact(c.NameCheck)
	}
	if c.ConfirmRefusal {
		confirmed = "1"
	}
	return factsText("attempt", attempt, "attempts", attempts, "bank_reference_no", c.BankReferenceNo, "claimed_by", c.ClaimedBy, nameFact, nameDigest,
		"invoice_no", c.InvoiceNo, "last_error", c.Error, "name_check", check, "not_found", notFoundFacts[notFoundMode(c)],
		"refusal_confirmed", confirmed, "retry_of", c.RetryOf, "transaction_status", c.TransactionStatus)
}

// nameCheckFact is a name check as an event's facts hold it: a name not compared is named, since
// an empty fact is left out.
func nameCheckFact(check string) string {
	if check == NameNotCompared {
		return nameNotComparedFact
	}
	return check
}

const nameNotComparedFact = "not compared"

// notFoundFacts name the notFound* modes in an event's facts; keeping the count names none.
var notFoundFacts = [...]string{notFoundKeep: "", notFoundCount: "count", notFoundFirst: "first", notFoundReset: "reset"}

// recordedFacts are the details a payout is recorded with, but for its personal data.
func recordedFacts(p Payout, runID string) string {
	return factsText("amount", amountText(p.Amount), "bank", p.Bank, "description", p.Description,
		"line", strconv.Itoa(p.Line), "provider_id", strconv.FormatInt(p.ProviderID, 10), "run_id", runID)
}

// querier is a transaction or a connection.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readChainHead reads the last entry of the chain: the later of the last event and the last row
// event. Called inside the write transaction that appends, so that no other writer can append
// between the read and the append.
func readChainHead(ctx context.Context, q querier) (ChainHead, error) {
	var h ChainHead
	err := q.QueryRowContext(ctx, `SELECT id, hash FROM (SELECT id, hash FROM events ORDER BY id DESC LIMIT 1) AS e
		UNION ALL SELECT id, hash FROM (SELECT id, hash FROM row_events ORDER BY id DESC LIMIT 1) AS r
		ORDER BY id DESC LIMIT 1`).Scan(&h.ID, &h.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return ChainHead{}, nil
	}
	if err != nil {
		return ChainHead{}, fmt.Errorf("chain head: %w", err)
	}
	return h, nil
}

// ChainHead returns the chain's last event as of now.
func (db *DB) ChainHead(ctx context.Context) (ChainHead, error) {
	return readChainHead(ctx, db.sql)
}

// chainHashAt is the hash of the chain's entry id (an event or a row event): what a head that
// was signed at id must still read. ErrNotFound when the chain has no such entry.
func (db *DB) chainHashAt(ctx context.Context, id int64) (string, error) {
	var hash string
	err := db.sql.QueryRowContext(ctx, `SELECT hash FROM events WHERE id = $1 UNION ALL SELECT hash FROM row_events WHERE id = $2`,
		id, id).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("chain entry %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("chain entry %d: %w", id, err)
	}
	return hash, nil
}

// chainer links events inside one write transaction.
type chainer struct {
	eng            *engine
	head           ChainHead
	actor, version string
}

func (db *DB) newChainer(head ChainHead) *chainer {
	return &chainer{eng: db.eng, head: head, actor: db.actor, version: db.version}
}

// link numbers e after the head, stamps it and hashes it; e becomes the head.
func (c *chainer) link(e *ChainEvent) {
	e.ID = c.head.ID + 1
	e.Actor, e.Version = c.actor, c.version
	e.PrevHash = c.head.Hash
	e.Hash = HashEvent(*e)
	c.head = ChainHead{ID: e.ID, Hash: e.Hash}
}

// eventColumns are the columns every event insert writes, in eventArgs' order.
const eventColumns = `id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash`

const insertEventSQL = `INSERT INTO events (` + eventColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`

func eventArgs(args []any, e *ChainEvent) []any {
	return append(args, e.ID, e.Ref, e.RunID, e.At, e.From, e.To, e.Detail, e.Payload, e.Actor, e.Version,
		e.Facts, e.Personal, e.PrevHash, e.Hash)
}

// saltOf returns a payout's salt; "" when it has none, which is when it was purged.
func saltOf(ctx context.Context, q querier, ref string) (string, error) {
	var salt string
	err := q.QueryRowContext(ctx, `SELECT salt FROM payout_salts WHERE ref = $1`, ref).Scan(&salt)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("salt of %s: %w", ref, err)
	}
	return salt, nil
}

// changeEvent is the event of one applied Change. Only a change with a payload (a callback's)
// costs a query: its digest needs the payout's salt. A purged payout has none, and its payload
// is not kept: purge promised that the ledger holds no personal data of it.
func (c *chainer) changeEvent(ctx context.Context, q querier, now string, ch Change) (*ChainEvent, error) {
	e := &ChainEvent{Ref: ch.Ref, RunID: ch.RunID, At: now, From: string(ch.From), To: string(ch.To),
		Detail: ch.Detail, Payload: ch.Payload}
	nameDigest := ""
	if ch.Payload != "" || ch.DisplayName != "" {
		salt, err := saltOf(ctx, q, ch.Ref)
		if err != nil {
			return nil, err
		}
		digest := func(field, value string) string {
			switch {
			case value == "":
				return ""
			case salt == "":
				return PurgedPayload // purged: no digest of its personal data can be made
			}
			return personalDigest(salt, field, value)
		}
		nameDigest = digest("display_name", ch.DisplayName)
		if ch.Payload != "" && salt == "" {
			e.Payload = PurgedPayload
		} else {
			e.Personal = digest("payload", ch.Payload)
		}
	}
	e.Facts = changeFacts(ch, nameDigest)
	c.link(e)
	return e, nil
}

// recordedChain appends the "recorded" events of Record, with their payouts' salts, several
// rows to a statement.
type recordedChain struct {
	*chainer
	events, salts *multiRowInsert
	eventArgs     []any
	saltArgs      []any
}

// startRecordedChain reads the head inside tx for Record.
func (db *DB) startRecordedChain(ctx context.Context, tx *sql.Tx) (*recordedChain, error) {
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return nil, err
	}
	return &recordedChain{chainer: db.newChainer(head),
		events: &multiRowInsert{eng: db.eng, prep: tx, width: 14, head: `INSERT INTO events (` + eventColumns + `) VALUES `},
		salts:  &multiRowInsert{eng: db.eng, prep: tx, width: 2, head: `INSERT INTO payout_salts (ref, salt) VALUES `},
	}, nil
}

// add queues the "recorded" event of a payout new to the ledger.
func (r *recordedChain) add(p Payout, runID, now, detail string) {
	salt := newSalt()
	rid := p.RunID
	if rid == "" {
		rid = runID
	}
	e := ChainEvent{Ref: p.Ref, RunID: runID, At: now, To: string(recordedState(p)), Detail: detail,
		Facts: recordedFacts(p, rid), Personal: personalDigest(salt, "recipient", p.Recipient, "account", p.Account)}
	r.link(&e)
	r.eventArgs = eventArgs(r.eventArgs, &e)
	r.saltArgs = append(r.saltArgs, p.Ref, salt)
}

// flush inserts what add queued.
func (r *recordedChain) flush(ctx context.Context) error {
	if err := r.salts.exec(ctx, r.saltArgs); err != nil {
		return err
	}
	if err := r.events.exec(ctx, r.eventArgs); err != nil {
		return err
	}
	r.eventArgs, r.saltArgs = r.eventArgs[:0], r.saltArgs[:0]
	return nil
}

func (r *recordedChain) close() error {
	return errors.Join(r.events.close(), r.salts.close())
}

// decodeFacts reads what factsJSON wrote; text that is not such an object reads as no facts.
func decodeFacts(s string) map[string]string {
	m := map[string]string{}
	if s != "" {
		_ = json.Unmarshal([]byte(s), &m) // verification compares the result with the row: bad facts show there
	}
	return m
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
