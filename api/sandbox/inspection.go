package sandbox

import (
	"encoding/json"
	"net/http"
	"slices"
)

// Stats count what the sandbox saw.
type Stats struct {
	Requests         map[string]int `json:"requests"` // by endpoint: providers, create, get, other
	Creates          int            `json:"creates"`  // payouts created, lost responses included
	Rejected         int            `json:"rejected"` // creates refused (validation, duplicate)
	Unauthorized     int            `json:"unauthorized"`
	RateLimited      int            `json:"rate_limited"`  // 429s
	ServerErrors     int            `json:"server_errors"` // 5xx (injected or down)
	Lost             int            `json:"lost"`          // responses lost after creating
	Callbacks        int            `json:"callbacks"`     // callbacks delivered (2xx)
	CallbackFailures int            `json:"callback_failures"`
	MaxPerSecond     int            `json:"max_per_second"`
	// MaxInAnySecond is the most API requests that arrived within one second, wherever that
	// second starts: the bound a client's rate limit must keep.
	MaxInAnySecond int `json:"max_in_any_second"`
	// MaxInFlight is the most API requests being served at the same moment: the concurrency a
	// client reached.
	MaxInFlight int `json:"max_in_flight"`
}

// serveInspection answers the inspection endpoints and reports whether r asked for one of them.
func (s *Server) serveInspection(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case PathInspectPayout:
		s.inspect(w, r, func() any { return s.Payouts() })
	case PathInspectCreate:
		s.inspect(w, r, func() any {
			return map[string]any{"counts": s.CreateCounts(), "duplicates": orEmpty(s.Duplicates())}
		})
	case PathInspectStats:
		s.inspect(w, r, func() any { return s.Stats() })
	default:
		return false
	}
	return true
}

// Payouts returns every payout created, in creation order, after settling what is due.
func (s *Server) Payouts() []Record {
	s.mu.Lock()
	due := s.settleLocked(s.now())
	out := make([]Record, len(s.records))
	for i, r := range s.records {
		out[i] = *r
	}
	s.mu.Unlock()
	s.sendCallbacks(due)
	return out
}

// CreateCounts returns, per external_invoice_ref, how many payouts were created with it (creates
// whose response was lost included; refused creates not).
func (s *Server) CreateCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.byRef))
	for ref, rs := range s.byRef {
		out[ref] = len(rs)
	}
	return out
}

// Duplicates returns the sorted external_invoice_refs with more than one payout created.
func (s *Server) Duplicates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for ref, rs := range s.byRef {
		if len(rs) > 1 {
			out = append(out, ref)
		}
	}
	slices.Sort(out)
	return out
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Requests = make(map[string]int, len(s.stats.Requests))
	for k, v := range s.stats.Requests {
		st.Requests[k] = v
	}
	return st
}

// MaxPerSecond returns the most API requests seen in one second of Options.Now.
func (s *Server) MaxPerSecond() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.MaxPerSecond
}

func (s *Server) inspect(w http.ResponseWriter, r *http.Request, body func() any) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b, err := json.Marshal(body())
	if err != nil {
		http.Error(w, "encode", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
