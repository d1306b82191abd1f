package callbacks

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nameTitles are honorifics and titles that come before a name (or before a father's name,
// after bin or a/l) and say nothing about who the person is. Words that are also common names
// (Tan, Toh, Syed, Wan, Nik) are not in it.
var nameTitles = wordSet("encik", "en", "puan", "pn", "cik", "tuan", "tn", "dr", "dato", "datuk", "datin",
	"haji", "hj", "hajah", "hjh", "mr", "mrs", "ms", "miss", "mdm", "madam", "prof", "ir")

// nameTitleTails follow a title as one honour: Dato' Sri, Datuk Seri, Datin Paduka.
var nameTitleTails = wordSet("sri", "seri", "paduka", "wira", "setia")

// namePairTitles are two-word titles whose first word is also a name: Tan Sri, Puan Sri, Toh Puan.
var namePairTitles = map[string]map[string]bool{"tan": wordSet("sri", "seri"), "puan": wordSet("sri", "seri"), "toh": wordSet("puan")}

// nameConnectors join a person's name to a parent's: they are dropped, so that "bin" written
// out, abbreviated or left off compares alike.
var nameConnectors = wordSet("bin", "bn", "binti", "binte", "bte", "bt", "a/l", "a/p", "s/o", "d/o", "w/o", "anak", "ak")

// nameBareConnectors are connectors as a bank may write them, without the dot or slash, when a
// name follows them: MOHD ALI B ABU, MUTHU AL KRISHNAN (and an initial otherwise: Lim B K).
var nameBareConnectors = wordSet("b", "al", "ap")

// nameVariants are spellings and abbreviations that banks use for the same name word.
var nameVariants = map[string]string{
	"mohd": "muhammad", "muhd": "muhammad", "md": "muhammad", "mhd": "muhammad", "mohamad": "muhammad",
	"mohammad": "muhammad", "mohamed": "muhammad", "mohammed": "muhammad", "muhamad": "muhammad",
	"muhammed": "muhammad", "muhamed": "muhammad", "abd": "abdul",
}

// truncatedNameRunes is how long a bank's name of one word must be for that word to be taken as
// cut short: banks cap the name they hold at some 20 to 40 characters.
const truncatedNameRunes = 12

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// NamesMatch reports whether displayName, the name a bank holds for an account, names the same
// person as recipient, and why.
//
// Case, spacing, punctuation and accents on Latin letters do not count; titles (Encik, Dato'
// Sri, Haji, Mr...) are dropped; Mohd and Abd stand for Muhammad and Abdul; word order does not
// count. An initial ("M." or "M") matches a word that starts with it; two words written together
// ("Weiming") match them apart; the last word of the bank's name may be cut short (banks cap a
// name's length) when it has two words or more, or 12 characters.
//
// When both name a parent (bin, binti, a/l, a/p, s/o, d/o, anak), the given names and the
// parents' names are compared apart, so that Ahmad bin Ali is not Ali bin Ahmad. When only one
// does, the other must hold all its given names (initials aside) and nothing that is not in it:
// the parent's name may be left out. Otherwise the words of one must all be among the words of
// the other, and that shorter one must have at least two words (or both one): a bank's name may
// leave out a Western given name, or the file may.
func NamesMatch(recipient, displayName string) (bool, string) {
	r, d := parseName(recipient), parseName(displayName)
	if len(d.words) == 0 {
		return false, "the bank's name has no name words"
	}
	if len(r.words) == 0 {
		return false, "the recipient has no name words"
	}
	r, d = r.joined(d.words), d.joined(r.words)
	cut := false
	if len(d.words) >= 2 || utf8.RuneCountInString(strings.TrimSpace(displayName)) >= truncatedNameRunes {
		d, cut = d.uncut(r.words)
	}
	ok, why := compareNames(r, d)
	if ok && cut {
		why += "; the bank's name is cut short"
	}
	return ok, why
}

// compareNames compares the parsed names of a recipient and of a bank.
func compareNames(r, d personName) (bool, string) {
	switch {
	case slices.Equal(r.words, d.words):
		return true, "same name"
	case r.namesParent() && d.namesParent():
		if !partsMatch(r.given(), d.given(), 1) {
			return false, "the given names differ (the words before bin, binti, a/l...)"
		}
		if !partsMatch(r.parent(), d.parent(), 0) {
			return false, "the parents' names differ (the words after bin, binti, a/l...)"
		}
		return true, "the same given names and parent's name"
	case r.namesParent():
		return oneNamesParent(r, d.words, "only the recipient names a parent (bin, a/l...); the given names agree")
	case d.namesParent():
		return oneNamesParent(d, r.words, "only the bank's name names a parent (bin, a/l...); the given names agree")
	}
	return compareWords(r.words, d.words)
}

// compareWords compares a recipient's words with a bank's as bags of words.
func compareWords(r, d []string) (bool, string) {
	matchedR, fullR := matchWords(d, r)
	matchedD, fullD := matchWords(r, d)
	inR := matchedR == len(d) && fullR >= 1 && (len(d) >= 2 || len(r) == 1)
	inD := matchedD == len(r) && fullD >= 1 && (len(r) >= 2 || len(d) == 1)
	switch {
	case inR && len(d) == len(r) && fullR == len(d):
		return true, "same words in another order"
	case (inR || inD) && len(d) == len(r):
		return true, "same words, some as initials"
	case inR:
		return true, "the bank's name leaves words out"
	case inD:
		return true, "the bank's name has more words than the recipient's"
	case matchedR == len(d) || matchedD == len(r):
		return false, "the names share too little to tell the same person (one word, or initials only)"
	}
	return false, fmt.Sprintf("%d of the %d words of the bank's name are not in the recipient's name", len(d)-matchedR, len(d))
}

// oneNamesParent compares a name that names a parent with other words that do not: those must
// hold every given name of withParent that is more than an initial, and nothing that is not in
// withParent.
func oneNamesParent(withParent personName, other []string, why string) (bool, string) {
	var given []string
	for _, w := range withParent.given() {
		if utf8.RuneCountInString(w) > 1 {
			given = append(given, w)
		}
	}
	if matched, full := matchWords(given, other); len(given) == 0 || matched < len(given) || full == 0 {
		return false, "the given names differ (the words before bin, binti, a/l...)"
	}
	if matched, _ := matchWords(other, withParent.words); matched < len(other) {
		return false, fmt.Sprintf("%d of the %d words of one name are not in the other", len(other)-matched, len(other))
	}
	return true, why
}

// partsMatch reports whether the words of one part of a name (given or parent's) are all among
// the other's, at least least of them in full.
func partsMatch(r, d []string, least int) bool {
	matchedR, fullR := matchWords(d, r)
	matchedD, fullD := matchWords(r, d)
	return matchedR == len(d) && fullR >= least || matchedD == len(r) && fullD >= least
}

// personName is a name's words, split where a connector (bin, a/l...) introduces the parent's
// name.
type personName struct {
	words    []string
	parentAt int // index of the parent's name's first word; len(words) when none is named
}

func (n personName) given() []string   { return n.words[:n.parentAt] }
func (n personName) parent() []string  { return n.words[n.parentAt:] }
func (n personName) namesParent() bool { return n.parentAt > 0 && n.parentAt < len(n.words) }

// joined joins, within each part, neighbouring words whose concatenation is one of other's.
func (n personName) joined(other []string) personName {
	given, parent := joinSplitWords(n.given(), other), joinSplitWords(n.parent(), other)
	return personName{words: append(given, parent...), parentAt: len(given)}
}

// uncut undoes the bank's length limit on its name's last word: a connector cut short ("AHMAD
// FAIZAL BI") is dropped, and a word that is the start of one of other's, and none of other's
// itself, becomes that word ("SITI NURHALIZA BINTI TARU").
func (n personName) uncut(other []string) (personName, bool) {
	last := n.words[len(n.words)-1]
	if slices.Contains(other, last) {
		return n, false
	}
	for c := range nameConnectors {
		if len(n.words) >= 2 && len(last) < len(c) && strings.HasPrefix(c, last) {
			words := n.words[:len(n.words)-1]
			return personName{words: words, parentAt: min(n.parentAt, len(words))}, true
		}
	}
	if utf8.RuneCountInString(last) < 2 {
		return n, false // an initial, not a cut word
	}
	for _, w := range other {
		if len(last) < len(w) && strings.HasPrefix(w, last) {
			words := append(slices.Clone(n.words[:len(n.words)-1]), w)
			return personName{words: words, parentAt: n.parentAt}, true
		}
	}
	return n, false
}

// parseName returns the name words of s, folded to one case, without titles and connectors,
// with known variants replaced, and where the parent's name starts.
func parseName(s string) personName {
	raw := rawNameWords(s)
	n := personName{words: make([]string, 0, len(raw)), parentAt: -1}
	titlesAllowed := true
	for i := 0; i < len(raw); i++ {
		w := raw[i]
		switch {
		case titlesAllowed && i+1 < len(raw) && namePairTitles[w][raw[i+1]]:
			i++
		case titlesAllowed && nameTitles[w]:
			for i+1 < len(raw) && nameTitleTails[raw[i+1]] {
				i++
			}
		case len(n.words) > 0 && (nameConnectors[w] || nameBareConnectors[w] && i+1 < len(raw) && utf8.RuneCountInString(raw[i+1]) > 1):
			if n.parentAt < 0 {
				n.parentAt = len(n.words)
			}
			titlesAllowed = true // a father's title follows: bin Haji Ismail
		default:
			if v, ok := nameVariants[w]; ok {
				w = v
			}
			n.words = append(n.words, w)
			titlesAllowed = false
		}
	}
	if n.parentAt < 0 {
		n.parentAt = len(n.words)
	}
	return n
}

// rawNameWords folds s and splits it into words, keeping a/l, a/p, s/o, d/o and w/o whole.
func rawNameWords(s string) []string {
	var raw []string
	for _, field := range strings.Fields(foldName(s)) {
		if w := strings.TrimRight(field, "."); nameConnectors[w] && strings.Contains(w, "/") {
			raw = append(raw, w)
			continue
		}
		raw = append(raw, splitNameWord(field)...)
	}
	return raw
}

// foldName folds compatibility forms (full-width letters, a Kelvin sign) to their plain letters,
// drops accents from Latin letters, folds case, and makes typographic apostrophes '.
func foldName(s string) string {
	var b strings.Builder
	prevLatin := false
	for _, r := range norm.NFKD.String(s) {
		if prevLatin && unicode.Is(unicode.Mn, r) {
			continue
		}
		switch r {
		case '\u2018', '\u2019', '`', '\u00b4':
			r = '\''
		}
		r = unicode.ToLower(unicode.ToUpper(r))
		b.WriteRune(r)
		prevLatin = unicode.Is(unicode.Latin, r)
	}
	return b.String()
}

// splitNameWord splits a field at punctuation: an apostrophe joins (Dato' is dato, O'Neil is
// oneil), anything else that is not a letter, mark or digit separates (M. Ali, Wei-Ming, Ali@Abu).
func splitNameWord(field string) []string {
	field = strings.ReplaceAll(field, "'", "")
	return strings.FieldsFunc(field, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsDigit(r)
	})
}

// joinSplitWords joins neighbouring words of a whose concatenation is a word of b: "wei ming"
// against "weiming".
func joinSplitWords(a, b []string) []string {
	out := make([]string, 0, len(a))
	for i := 0; i < len(a); i++ {
		if i+1 < len(a) && slices.Contains(b, a[i]+a[i+1]) && !slices.Contains(b, a[i]) {
			out = append(out, a[i]+a[i+1])
			i++
			continue
		}
		out = append(out, a[i])
	}
	return out
}

// matchWords pairs words of small with distinct words of big, equal words first, then initials.
// It returns how many words of small found a partner and how many of those are equal words.
func matchWords(small, big []string) (matched, full int) {
	used := make([]bool, len(big))
	done := make([]bool, len(small))
	pass := func(fits func(s, b string) bool) int {
		n := 0
		for i, s := range small {
			if done[i] {
				continue
			}
			for j, b := range big {
				if !used[j] && fits(s, b) {
					used[j], done[i] = true, true
					n++
					break
				}
			}
		}
		return n
	}
	full = pass(func(s, b string) bool { return s == b })
	matched = full + pass(func(s, b string) bool { return initialOf(s, b) || initialOf(b, s) })
	return matched, full
}

// initialOf reports whether a is a one-letter initial of the word b.
func initialOf(a, b string) bool {
	r, size := utf8.DecodeRuneInString(a)
	return size == len(a) && r != utf8.RuneError && len(b) > size && strings.HasPrefix(b, a)
}
