package read

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payout/payout/api"
)

// ResolveProvider finds a provider by name, ignoring case, spacing, punctuation and suffixes
// such as Berhad, Bhd, (M) and Malaysia; "Maybank" and "Malayan Banking" both find
// "Maybank (Malayan Banking Berhad)". An unknown name gets the closest names as suggestions.
func ResolveProvider(providers []api.Provider, name string) (api.Provider, error) {
	return newProviderIndex(providers).resolve(name)
}

type providerIndex struct {
	list   []api.Provider
	byKey  map[string]int // index into list; -1 when two providers share the key
	byID   map[int64]api.Provider
	keys   []string
	owners []int
}

func newProviderIndex(providers []api.Provider) *providerIndex {
	ix := &providerIndex{list: providers, byKey: make(map[string]int), byID: make(map[int64]api.Provider)}
	for i, p := range providers {
		ix.byID[p.ID] = p
		for _, k := range providerKeys(p.Name) {
			if j, ok := ix.byKey[k]; ok && j != i {
				ix.byKey[k] = -1
				continue
			}
			if _, ok := ix.byKey[k]; !ok {
				ix.keys, ix.owners = append(ix.keys, k), append(ix.owners, i)
			}
			ix.byKey[k] = i
		}
	}
	return ix
}

// providerKeys is the whole name, the name outside parentheses and the name inside them, each
// also without the word "bank": accountants write "RHB" and "Public" for RHB Bank Berhad and
// Public Bank Berhad. A key two providers share matches neither.
func providerKeys(name string) []string {
	parts := []string{name}
	if open, end := strings.IndexByte(name, '('), strings.LastIndexByte(name, ')'); open >= 0 && end > open {
		parts = append(parts, name[:open]+name[end+1:], name[open+1:end])
	}
	var out []string
	for _, part := range parts {
		for _, k := range []string{normalizeBank(part), normalizeBankWithout(part, "bank")} {
			if k != "" && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

var bankSuffixes = map[string]bool{"berhad": true, "bhd": true, "m": true, "malaysia": true}

func normalizeBank(s string) string { return normalizeBankWithout(s, "") }

// normalizeBankWithout lowercases and joins the name's words, leaving out legal suffixes and the
// word drop.
func normalizeBankWithout(s, drop string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '\u2019'
	})
	var b strings.Builder
	for _, w := range words {
		if bankSuffixes[w] || w == drop {
			continue
		}
		for _, r := range w {
			if r != '\'' && r != '\u2019' {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func (ix *providerIndex) resolve(name string) (api.Provider, error) {
	key := normalizeBank(name)
	if i, ok := ix.byKey[key]; ok && key != "" {
		if i < 0 {
			return api.Provider{}, fmt.Errorf("%w: %q matches more than one provider; use payout_service_id", ErrBankUnknown, name)
		}
		return ix.list[i], nil
	}
	return api.Provider{}, fmt.Errorf("%w%s (see `payout providers`)", ErrBankUnknown, ix.suggest(key))
}

// suggest names at most three providers whose names come close to key, closest first: by the
// edits that make key a name, or a part of one, as people shorten "Touch 'n Go eWallet" to "Touch
// n Go". A name further than a third of key's letters is no suggestion: a short name such as
// OCBC is a few edits from anything, and is suggested only for what nearly spells it.
func (ix *providerIndex) suggest(key string) string {
	type cand struct {
		name string
		dist int
	}
	if key == "" {
		return ""
	}
	limit := max(1, utf8.RuneCountInString(key)/3)
	best := make(map[int]int)
	for j, k := range ix.keys {
		// Never more than the edits that make key the whole name: the whole name is one of its runs.
		d := infixDistance(key, k)
		if cur, ok := best[ix.owners[j]]; d <= limit && (!ok || d < cur) {
			best[ix.owners[j]] = d
		}
	}
	cands := make([]cand, 0, len(best))
	for i, d := range best {
		cands = append(cands, cand{ix.list[i].Name, d})
	}
	sort.Slice(cands, func(a, b int) bool {
		if cands[a].dist != cands[b].dist {
			return cands[a].dist < cands[b].dist
		}
		return cands[a].name < cands[b].name
	})
	if len(cands) > 3 {
		cands = cands[:3]
	}
	if len(cands) == 0 {
		return ""
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = strconv.Quote(c.name)
	}
	return "; did you mean " + strings.Join(names, " or ") + "?"
}

// infixDistance is the fewest edits that make a a run of b's letters: 0 when b contains a.
func infixDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// prev[j] is the distance of a's first i letters to the best run of b ending at letter j;
	// a run may start anywhere in b, so the row of no letters of a is all zeros.
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return slices.Min(prev)
}
