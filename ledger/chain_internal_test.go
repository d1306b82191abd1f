package ledger

import (
	"encoding/json"
	"maps"
	"testing"
)

// Facts are parsed back by any JSON reader: verify replays them against the payouts row.
func TestFactsTextIsJSONWithSortedKeys(t *testing.T) {
	t.Parallel()
	in := map[string]string{"b": "quote \" backslash \\ tab \t nul \x00", "a": "Siti Nurhaliza — 日本", "c": "", "d": "</script>&"}
	got := factsJSON(in)
	if got[:5] != `{"a":` {
		t.Errorf("keys not sorted: %s", got)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	delete(in, "c")
	if !maps.Equal(back, in) {
		t.Errorf("read back %q, want %q", back, in)
	}
	if factsJSON(map[string]string{"x": ""}) != "" {
		t.Error("facts with nothing set are not empty")
	}
}

// BenchmarkChainEvent is what the group-commit writer adds per event: facts, link and hash.
func BenchmarkChainEvent(b *testing.B) {
	c := &chainer{actor: "ana@host", version: "v1.2.3"}
	ch := Change{Ref: "PAY-2026-11-001", From: Submitting, To: Submitted, RunID: "20261124T000000Z-0000",
		InvoiceNo: "INV-123456", TransactionStatus: "PENDING", Detail: "accepted: invoice INV-123456, status PENDING, not final yet"}
	for b.Loop() {
		e := &ChainEvent{Ref: ch.Ref, RunID: ch.RunID, At: "2026-11-24T00:00:00.000000000Z", From: string(ch.From), To: string(ch.To),
			Detail: ch.Detail, Facts: changeFacts(ch, "")}
		c.link(e)
	}
}
